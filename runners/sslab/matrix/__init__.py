"""Matrices: many scenarios, split into cells, run resumably and archived.

A matrix file (experiments/scenarios/*.yaml) is a scenario template plus axes:

    matrix:
      name: table1
      axes:                               # make variable that narrows each
        large_cc: {option: CCA, values: [cubic, bbr, bbr2], cca: true}
        buffer:   {option: BUF, values: [1BDP, 2BDP]}
      iterations: 2                       # ITER=
      compare: {param: small, "off": cubic_hs, "on": cubic_suss}
    scenario: {... "{large_cc}" ... "{buffer}" ...}

A *setting* is one value per axis; a *cell* is one setting x one
repetition: one scenario holding the compared cases (SUSS off and on) back
to back.  Cells are what get retried, archived and resumed.

A *boot* runs one cell, or (BOOT_SHARE=, default 10 under UML) up to that
many repetitions of one setting in a row: they share the boot, its topology
and its fidelity check (a boot costs a Table 1 cell about a fifth of its
time).  The first repetition of a boot runs exactly as alone and keeps the
key it has alone; a later one runs after the ones before it (the guest's
random numbers and clock go on from them) and its key says where it stood.
Boots are what get dealt to hosts; resuming a boot runs it whole (each cell
keeps copies of its boot's records) and drops what it makes again.

Cell key = sha256 of (the cell's scenario, its repetition, the image hash,
the traffic code's version, the clock, and a later repetition's place in a
shared boot).  The traffic code is the code that decides what
runs on the wire (runners/sslab/guest/, scenario/, substrate/qemu.py, uml.py and job.py,
experiment/plan.py); the
image hash covers the kernel, our module and the guest agent.  Analysis
code is left out on purpose: reports rebuild from the archive, so a change
in a table does not make any traffic stale.

On disk, results/<matrix>/<selection>/:

    plans/plan-<stamp>.json   each invocation's plan (cells, keys, dealing)
    cells/<key>/              a finished cell; cell.json is written last and
                              the directory appears by one rename, so a cell
                              is either complete or absent.  It holds its runs,
                              not a run report (the matrix's report reads the
                              runs; `make report RUN=<cell>` writes one's)
    cells/.partial-<key>-*    a cell being run (never counted as done)
    failed/<key>-<stamp>-a<N>/  a failed attempt, with its log (error.txt)
    progress/<host>.json      the running host's progress
    reports/<stamp>/          tables and plots (reports/latest -> newest)

Nothing is ever overwritten: a cell directory that exists is never
replaced, a report goes to a new directory.

The package:

    spec         the matrix file (axes, compare, defaults), its loader, and the check of values a
                 command line chose beside the file's (CCA=, BUF=, RTT= are read as axis values
                 with every other NAME=value: sslab.scenario.sets)
    plan         cell keys, the plan, boots
    dealer       which boot goes to which host, as hosts free up (lost hosts, damaged cells)
    store        the resumable cell store (writing; reading is analysis.archive)
    cells        running one host's boots of cells (retry, record failures, progress)
    transfer     packing a host's cells, merging them on the controller
    stopping     stopping a host's runner by name (Ctrl-C reaches every host)
    fleet        the hosts of a run: prepare, batches through Ansible, merge, stop
    orchestrate  the controller: plan, the fleet, report
    parts        an experiment's parts (a series' scenarios, or its one scenario) as cells, on the
                 hosts of an inventory (this host's own by default)
    experiments  running an experiment file as the command line asks (a Request): checked first, then
                 its parts through the controller, then its report; a matrix by its file
    runner       what one host runs: the cells a plan deals it (`sslab matrix run-cells`)

May import: experiment, analysis, substrate, scenario and the leaves.  Not cli.
"""

from .cells import ATTEMPTS, Progress, check_host_matches, compress_pcaps, host_error, record_host_error, run_cells
from .plan import TRAFFIC_CODE, boots_to_run, cell_key, plan_matrix, traffic_code_version
from .spec import (MATRICES_DIR, Axis, Compare, Matrix, MatrixError, MatrixSpec, load_matrix, matrix_files, matrix_path,
                   selection_id, settings)
from .store import CellStore, current_cells, latest_plan, set_aside, write_json_atomic

__all__ = ["ATTEMPTS", "Progress", "check_host_matches", "compress_pcaps", "host_error", "record_host_error",
           "run_cells",
           "TRAFFIC_CODE", "boots_to_run", "cell_key", "plan_matrix", "traffic_code_version",
           "selection_id", "settings", "MATRICES_DIR", "matrix_files", "Axis", "Compare", "Matrix",
           "MatrixError", "MatrixSpec", "load_matrix", "matrix_path", "CellStore", "current_cells",
           "latest_plan", "set_aside", "write_json_atomic"]
