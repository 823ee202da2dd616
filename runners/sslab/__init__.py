"""slowstart-lab: reproducible TCP slow-start experiments.

The package, by concept (imports flow downwards only; pyproject.toml's
import-linter contracts check it, `lint-imports`):

    cli          the command line: parse arguments, call one function per command
    matrix/      matrices: plans, cell keys, the resumable store, dealing to hosts, Ansible
    experiment/  one scenario run end to end on a substrate, and its run record
    analysis/    reading archives: pcaps, traces, statistics, tables, plots
    scenario/    the scenario spec: units, the typed model, YAML loading
    substrate/   what gives a job a kernel: the image, QEMU, native hosts, the job protocol
    paths, ccas  leaves: where things live; congestion-control names
    records      leaf: every JSON record's kind and format version, and the check that refuses
                 a newer one (shared with the guest: standard library only)

    guest/       code that runs on the substrate (standard library only).  The
                 host ships it as files (the source share) and never imports it.
"""

__version__ = "0.1.0"
