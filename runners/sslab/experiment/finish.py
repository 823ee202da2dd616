"""`python -m sslab.experiment.finish RUN_DIR...`: the host's part of run directories after their
job (sslab.experiment.run.finish_run_dir), in a process of its own (finish_in_own_process says why)."""

from __future__ import annotations

import sys
from pathlib import Path

from .run import finish_run_dir


def main(argv: list[str]) -> int:
    for d in argv:
        finish_run_dir(Path(d))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
