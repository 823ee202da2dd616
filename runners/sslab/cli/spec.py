"""The command line's arguments: every command, its options and what each takes (`sslab --help`).

Apart from what the commands do (sslab.cli.commands): each sub-parser names its command
(`command`), and sslab.cli.main calls it.  Values that cannot run are refused here, by the
parser, with exit status 2 before anything starts.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import paths
from ..scenario import knobs
from ..substrate import CLOCKS, SUBSTRATES

#: Who can build a scenario's topology (the scenario's topology.backend).
BACKENDS = ("mininet", "netns", "containerlab")

HOST_TIMEOUT_HELP = ("seconds a host has for a batch of boots before it counts as lost and its boots go to "
                     "the other hosts (default: 4x the batch's expected time, at least 300)")
BOOT_SHARE_HELP = ("(matrices, UML) repetitions of a setting per boot: they share its topology and fidelity "
                   "check; the first of each runs exactly as alone, the others' cells are keyed apart "
                   "(default: 10 under UML, 1 on a real clock; 1: a boot per cell)")


def add_slurm_options(p) -> None:
    """SLURM=1 and its companions: the cells as one Slurm job array (sslab.matrix.slurm)."""
    p.add_argument("--slurm", action="store_true", help="submit the cells as one Slurm job array from this login "
                   "node and follow it (make SLURM=1); the tree, the image cache and the results on a path every "
                   "node sees")
    p.add_argument("--slurm-args", metavar="\"OPTS\"", help="sbatch options passed through as written "
                   "(--partition=... --time=... --account=...; make SLURM_ARGS=)")
    p.add_argument("--slurm-cells", type=at_least_one("SLURM_CELLS"), help="cells per array task, whole boots "
                   "joined (default: one boot, up to BOOT_SHARE cells; make SLURM_CELLS=)")
    p.add_argument("--slurm-poll", type=float, help="seconds between looks at the queue (default 30; make "
                   "SLURM_POLL=)")


def at_least(name: str, low: int):
    """An argparse type: an integer of at least @low (refused by the parser, exit 2, before anything runs)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name}={text}: a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{name}={value}: at least {low}")
        return value
    return parse


def at_least_one(name: str):
    """at_least(@name, 1): a count of runs, jobs, iterations."""
    return at_least(name, 1)


def positive_seconds(text: str) -> float:
    """An argparse type: a number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: seconds, a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text}: more than 0 seconds")
    return value


def add_kernel_option(p: argparse.ArgumentParser) -> None:
    """--kernel (make KERNELS=): a matrix's `kernel` axis."""
    p.add_argument("--kernel", action="append", metavar="SOURCE[,patches=DIR][,modules=DIR]",
                   help="(matrices) run the matrix on this kernel too, once per --kernel, and report the kernels "
                        "side by side: a source (6.1, the default, or images/uml/sources/<name>.yaml) with your "
                        "patches and modules (make KERNELS=\"6.1 7.3\")")


def add_substrate_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--substrate", default="uml", choices=SUBSTRATES,
                   help="uml: User-Mode Linux in virtual time (default); vm: QEMU; native: this host")
    p.add_argument("--accel", default="auto", choices=["auto", "kvm", "tcg"], help="QEMU's accelerator")
    p.add_argument("--clock", default="real", choices=CLOCKS,
                   help="QEMU's clock: real (MTTCG or KVM) or virtual (single-threaded TCG with icount)")


def build_parser() -> argparse.ArgumentParser:
    """`sslab`'s parser: a sub-parser per command, each setting `command` to its name."""
    p = argparse.ArgumentParser(prog="sslab")
    sub = p.add_subparsers(dest="cmd", required=True)
    pi = sub.add_parser("image", help="build (or repin) the testbed image; list the image cache, or prune it")
    pi.add_argument("action", choices=["build", "repin", "list", "prune"])
    pi.add_argument("--keep", type=at_least("KEEP", 0), default=None,
                    help="prune: images kept beside the tree's own and those in use, the ones used last "
                         "(default: the build's own rule, cachegc.DEFAULT_KEEP)")
    pi.add_argument("--dry-run", action="store_true", help="prune: say what would be removed, remove nothing")
    pi.set_defaults(command="image")
    pk = sub.add_parser("container", help="build the OCI container image (or save it as an archive; or name the "
                                          "container engine that works here)")
    pk.add_argument("action", choices=["build", "save", "engine"])
    pk.set_defaults(command="container")
    pf = sub.add_parser("fleet", help="a test fleet on this machine: containers of the testbed reachable only over "
                                      "ssh (up, down, kill HOST, inventory)")
    pf.add_argument("action", choices=["up", "down", "kill", "inventory"])
    pf.add_argument("host", nargs="?", help="(kill) the host, e.g. fleet2")
    pf.add_argument("--hosts", type=int, default=3, help="(up) how many hosts (default 3)")
    pf.add_argument("--docker", type=int, default=1, help="(up) of those, how many run under Docker (default 1)")
    pf.set_defaults(command="fleet")
    pfc = sub.add_parser("fresh-check", help="the README's two commands on a new machine: a throw-away Debian "
                                             "root with an empty cache (root; takes a cold build, the main job "
                                             "and the tests)")
    pfc.add_argument("--main", default="reproduce-table1", help="the make target (and variables) "
                     "of the main job")
    pfc.add_argument("--keep", action="store_true", help="keep the root afterwards (it is large)")
    pfc.add_argument("--need-gb", type=float, default=None, metavar="GB",
                     help="free disk the check asks for before it starts (default: the measured need, "
                          "sslab.substrate.freshcheck.NEED_GB)")
    pfc.set_defaults(command="fresh_check")
    for name, func, timeout, what in (
            ("vm-check", "vm_check", 300.0, "boot the testbed and print its self-check"),
            ("exec", "exec", 600.0, "one command in a fresh testbed boot: sslab exec -- uname -a")):
        sp = sub.add_parser(name, help=what)
        add_substrate_options(sp)
        sp.add_argument("--timeout", type=positive_seconds, default=timeout, help="job timeout in seconds")
        if name == "exec":
            sp.add_argument("argv", nargs=argparse.REMAINDER)
        sp.set_defaults(command=func)
    ps = sub.add_parser("startup", help="run one scenario file (E1's by default) and write its report; "
                                        "experiments run with `sslab run`")
    ps.add_argument("--scenario", default=str(paths.REPO_ROOT / "experiments" / "scenarios" / "e1-startup.yaml"))
    ps.add_argument("--reps", type=at_least_one("REPS"), help="repetitions (default: the scenario's)")
    ps.add_argument("--kind", default="startup", help="results/<kind>/ directory")
    ps.add_argument("--backend", choices=BACKENDS, help="who builds the topology (default: the scenario's)")
    knobs.add_options(ps)
    add_substrate_options(ps)
    ps.set_defaults(command="startup")
    pc = sub.add_parser("crosscheck", help="a scenario (E1) on UML and on QEMU -icount, side by side")
    pc.add_argument("--scenario", default=str(paths.REPO_ROOT / "experiments" / "scenarios" / "e1-startup.yaml"))
    pc.add_argument("--reps", type=at_least_one("REPS"), default=2)
    from ..scenario import HOST_PRESETS
    pc.add_argument("--hosts", choices=list(HOST_PRESETS), help="the host model of the UML side (default: the scenario's)")
    pc.set_defaults(command="crosscheck")
    prun = sub.add_parser("run", help="run an experiment: a file of experiments/ by name (`sslab experiments` "
                                      "lists them) or a path to one; what `make <experiment>` calls")
    prun.add_argument("experiment", help="an experiment's name (startup, wifi, ...) or its file")
    prun.add_argument("--select", action="append", metavar="NAME[,NAME]",
                      help="the parts to run, by name, tag or setting value, and the cases by a label of their "
                      "axes (E1's variants; default: the file's select, else all); a matrix: the start it "
                      "compares (reproduce-table1 VARIANTS=cubic_rapid)")
    prun.add_argument("--reps", type=at_least_one("REPS"),
                      help="repetitions per scenario (default: the file's, else the scenarios')")
    prun.add_argument("--jobs", type=at_least_one("JOBS"), help="scenarios or cells at once under UML "
                      "(default: the host's cores)")
    prun.add_argument("--scenario", help="another scenario file in place of a one-scenario experiment's "
                      "(make startup SCENARIO=)")
    prun.add_argument("--backend", choices=BACKENDS, help="who builds the topology (default: the scenario's)")
    prun.add_argument("--report", nargs="+", metavar="RUN_DIR", help="only rebuild the report from these run "
                      "directories")
    prun.add_argument("--again", action="store_true", help="(scenarios and series) run every part, also those "
                      "with a finished run of the same key (the key then names the new run; make AGAIN=1)")
    prun.add_argument("--set", action="append", metavar="NAME=V", help="set a field of every scenario (a "
                      "matrix's: its template) by its path (bottleneck.rate=20mbit, pairs.*.rtt=25ms); a matrix: "
                      "narrow an axis by its option (CCA=cubic,bbr); a scenario or series: a name its experiment "
                      "file declares (RTT=25ms); make SET=\"path=value ...\"")
    prun.add_argument("--iter", type=at_least_one("ITER"), help="(matrices) repetitions per setting")
    prun.add_argument("--inventory", help="the Ansible inventory whose hosts run the cells (a matrix's "
                      "default: this machine) or the parts (of a scenario or series: given, they run as cells "
                      "there; not given, here without Ansible)")
    prun.add_argument("--serial", help="(with an inventory) hosts at a time (default: all at once)")
    prun.add_argument("--container", help="(with an inventory) run the cells in this slowstart-lab container image")
    prun.add_argument("--boot-share", type=at_least_one("BOOT_SHARE"), help=BOOT_SHARE_HELP)
    prun.add_argument("--host-timeout", type=at_least_one("HOST_TIMEOUT"), help=HOST_TIMEOUT_HELP)
    add_slurm_options(prun)
    add_kernel_option(prun)
    knobs.add_options(prun)
    add_substrate_options(prun)
    prun.set_defaults(command="run")
    pe = sub.add_parser("experiments", help="the experiments (experiments/*.yaml): target, paper, figure, parts")
    pe.add_argument("--markdown", action="store_true", help="the README's table of experiments")
    pe.set_defaults(command="experiments")
    pcl = sub.add_parser("claims", help="a paper's claims ledger (experiments/claims/NAME.yaml): each claim's verdict "
                                        "from the archives under results/, written to results/claims/NAME/")
    pcl.add_argument("ledger", nargs="?", default="suss", help="the ledger's name or path (default: suss)")
    pcl.set_defaults(command="claims")
    psk = sub.add_parser("soak", help="a matrix run twice, once left alone and once under faults drawn from a seed "
                                      "(killed, interrupted, its cells damaged, resumed), compared cell by cell")
    psk.add_argument("--seed", type=int, default=1, help="the faults' seed, kept in the record (default 1)")
    psk.add_argument("--faults", type=at_least_one("--faults"), default=40, help="how many faults (default 40)")
    psk.add_argument("--dest", type=Path, help="where the two runs go (default: a new results/soak/<stamp>/)")
    psk.add_argument("--calm-from", type=Path, metavar="DIR",
                     help="take the calm run from an earlier soak of the same matrix (its --dest; only "
                          "--inventory may differ) instead of running it again")
    psk.add_argument("command_args", nargs="+", metavar="ARG",
                     help="the command to soak, as `sslab` takes it (after --): run reproduce-table1 --iter 10")
    psk.set_defaults(command="soak")
    pds = sub.add_parser("docs-snapshot", help="the documentation's results page from a real Table 1 report: its "
                                               "summary.json and answer plots copied to docs/results/table1/")
    pds.add_argument("report", type=Path, help="the report's folder (results/table1/<selection>/reports/<stamp>)")
    pds.add_argument("--command", dest="made_by", required=True,
                     help="the command that made the report, as the page should name it")
    pds.add_argument("--console", type=Path, help="the run's console output, whose last lines the page shows")
    pds.add_argument("--screenshot", type=Path, help="a picture of the report page's first screen")
    pds.set_defaults(command="docs_snapshot")
    pt = sub.add_parser("trace", help="rate traces (mahimahi format): generate one from a model, or show one")
    tsub = pt.add_subparsers(dest="action", required=True)
    tg = tsub.add_parser("generate", help="a trace from a stated stochastic model and seed")
    tg.add_argument("--model", required=True, choices=["gauss-markov", "lognormal-markov"])
    tg.add_argument("--seed", type=int, default=1)
    tg.add_argument("--mean", required=True, help="mean rate, e.g. 50mbit")
    tg.add_argument("--cv", type=float, required=True, help="standard deviation over the mean")
    tg.add_argument("--tau", required=True, help="correlation time, e.g. 500ms")
    tg.add_argument("--duration", default="60s")
    tg.add_argument("--bin", default="10ms")
    tg.add_argument("--out", required=True)
    ts = tsub.add_parser("show", help="period, mean and spread of trace files")
    ts.add_argument("files", nargs="+")
    ts.add_argument("--bin", default="10ms")
    pt.set_defaults(command="trace")
    pcl = sub.add_parser("clab", help="print a scenario's containerlab topology file")
    pcl.add_argument("scenario")
    pcl.set_defaults(command="clab")
    pkt = sub.add_parser("kernel-trace", help="a run's kernel trace (flow.trace.rb.gz, or an older archive's text) as "
                                               "the kernel prints it: a line an event, its time, name and fields")
    pkt.add_argument("file", metavar="FILE")
    pkt.add_argument("--event", action="append", help="only this event (tcp_probe, sslab_ack, sslab_event, "
                                                      "sslab_bbr3); repeatable")
    pkt.add_argument("--port", type=int, help="only the flow whose server (sender) port this is")
    pkt.set_defaults(command="kernel_trace")
    pca = sub.add_parser("captures", help="every run's flows under DIR as our capture parser and tshark read them, "
                                          "side by side (runs not checked when made are read now, not recorded)")
    pca.add_argument("dirs", nargs="+", metavar="DIR")
    pca.set_defaults(command="captures")
    po = sub.add_parser("oracle", help="our CUBIC against the kernel's: each scenario in two boots, ours and the "
                                       "kernel's, compared ACK by ACK and packet by packet (kernel/tests/oracle/)")
    po.add_argument("scenarios", nargs="*", metavar="SCENARIO",
                    help="scenario files, or names of kernel/tests/oracle/*.yaml (default: all of them)")
    po.add_argument("--jobs", type=at_least_one("JOBS"), help="boots at once (default: the host's cores)")
    po.set_defaults(command="oracle")
    pv = sub.add_parser("verify", help="rerun a sample of an archived matrix's cells from their plans and seeds and say, "
                                       "cell by cell, whether they give the same bytes")
    pv.add_argument("artifact", metavar="ARTIFACT", help="a matrix's results directory (results/table1/<selection>)")
    pv.add_argument("--sample", type=at_least_one("SAMPLE"), default=3,
                    help="how many finished cells, spread over the plan (default 3)")
    pv.set_defaults(command="verify")
    pcmp = sub.add_parser("compare", help="two sets of results side by side (before and after a patch, two kernels, "
                                          "two starts): each flow group's FCTs and exit cwnd, B against A, and whether "
                                          "each difference is beyond the 95 %% CIs")
    pcmp.add_argument("a", metavar="A", help="a report's directory, a results directory (its latest report) or a run's")
    pcmp.add_argument("b", metavar="B", help="the same, for the other side")
    pcmp.set_defaults(command="compare")
    psb = sub.add_parser("same-bytes", help="two runs of one scenario (before and after a change that should move "
                                            "nothing) compared flow by flow, ACK by ACK and packet by packet; or "
                                            "two results trees, run by run, captures and traces whole")
    psb.add_argument("before", help="a run directory, or a results tree (SSLAB_RESULTS, or an experiment's directory)")
    psb.add_argument("after", help="a run directory of the same scenario, or the other results tree")
    psb.set_defaults(command="same_bytes")
    pq = sub.add_parser("queue-check", help="a run's queue peak, drops and goodput per bin, as its report has them, "
                                            "against a capture of every interface of the bottleneck's router "
                                            "(runs asked with SET=capture.router=true)")
    pq.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="a run directory or a matrix cell")
    pq.set_defaults(command="queue_check")
    psl = sub.add_parser("suss-loop", help="SUSS 2024 in closed loop on its authors' own path: each round's "
                                           "decisions beside their log's, held to targets (and SUSS 2025's beside)")
    psl.set_defaults(command="suss_loop")
    pr = sub.add_parser("report", help="rebuild a run's tables and plots from its archive")
    pr.add_argument("run_dir")
    pr.set_defaults(command="report")
    pm = sub.add_parser("matrix", help="matrices (E7 table1, E6 fairness): run, resume, report")
    msub = pm.add_subparsers(dest="action", required=True)
    mr = msub.add_parser("run", help="plan, deal to the inventory's hosts, run missing cells, report")
    mr.add_argument("name", help="matrix name (experiments/scenarios/NAME.yaml) or a path")
    mr.add_argument("--set", action="append", metavar="NAME=V", help="narrow an axis by its option "
                    "(CCA=cubic), or set a field of the template by its path (bottleneck.rate=20mbit)")
    mr.add_argument("--select", action="append", metavar="START", help="the start compared with the matrix's "
                    "off side in its place (table1: cubic_rapid), its cells archived apart")
    mr.add_argument("--iter", type=at_least_one("ITER"), help="repetitions per setting (default: the matrix's)")
    mr.add_argument("--inventory", default=str(paths.REPO_ROOT / "playbooks" / "inventory" / "localhost.ini"))
    mr.add_argument("--serial", help="hosts at a time (default: all at once)")
    mr.add_argument("--jobs", type=at_least_one("JOBS"), help="cells at a time per host (UML; default: its cores)")
    mr.add_argument("--container", help="run the cells in this slowstart-lab container image (make container)")
    mr.add_argument("--boot-share", type=at_least_one("BOOT_SHARE"), help=BOOT_SHARE_HELP)
    mr.add_argument("--host-timeout", type=at_least_one("HOST_TIMEOUT"), help=HOST_TIMEOUT_HELP)
    add_slurm_options(mr)
    mr.add_argument("--backend", choices=BACKENDS, help="who builds each cell's topology (default: the matrix's)")
    add_kernel_option(mr)
    knobs.add_options(mr)
    add_substrate_options(mr)
    mc = msub.add_parser("run-cells", help="(on a host) run the cells the plan deals to HOST")
    mc.add_argument("--matrix-dir", required=True)
    mc.add_argument("--plan", required=True)
    mc.add_argument("--host", required=True)
    mc.add_argument("--jobs", type=at_least_one("JOBS"))
    mc.add_argument("--keys", help="run these cells (comma-separated keys of the plan), not the plan's dealing")
    mc.add_argument("--redo", help="of --keys, cells to set aside and run again (they arrived damaged)")
    mc.add_argument("--pack-to", help="then tar the finished cells of --keys here, for the controller")
    add_substrate_options(mc)
    mp = msub.add_parser("pack", help="(on a host) tar its finished cells for the controller")
    mp.add_argument("--matrix-dir", required=True)
    mp.add_argument("--plan", required=True)
    mp.add_argument("--host", required=True)
    mp.add_argument("--out", required=True)
    mp.add_argument("--keys", help="these cells (comma-separated), not the plan's dealing to HOST")
    ms = msub.add_parser("stop", help="(on a host) stop HOST's runner of a matrix, its testbeds, its partial cells")
    ms.add_argument("--matrix-dir", required=True)
    ms.add_argument("--host", required=True)
    mg = msub.add_parser("merge", help="(on the controller) merge a host's tar of cells")
    mg.add_argument("--matrix-dir", required=True)
    mg.add_argument("--tar", required=True)
    mrep = msub.add_parser("report", help="rebuild a matrix's tables and plots from its archive")
    mrep.add_argument("matrix_dir")
    mcmp = msub.add_parser("compare", help="two Table 1 archives side by side: each shared setting's "
                                           "quantities and their difference with its 95%% CI")
    mcmp.add_argument("base")
    mcmp.add_argument("other")
    mind = msub.add_parser("independence", help="a Table 1 archive's repetitions of each setting in groups (a shared "
                                                "boot's): how many groups' 95%% CIs hold the other repetitions' mean, "
                                                "and the spread of the group means against the spread within them")
    mind.add_argument("matrix_dir")
    mind.add_argument("--group", type=int, default=10, help="repetitions a group (default 10, a shared boot's)")
    mrk = msub.add_parser("rekey", help="link every finished run whose key was made before 2 Dec 2026 (from the "
                                        "scenario, not its plan) under the key it has now, where this tree's code "
                                        "made it; nothing moved or removed")
    mrk.add_argument("--results", help="the results tree (default: results/, or SSLAB_RESULTS)")
    mrk.add_argument("--dry-run", action="store_true", help="say what would be linked, link nothing")
    pm.set_defaults(command="matrix")
    return p
