"""`make help` (a bare `make`) names every target the Makefile offers, in its groups, and every experiment."""

import re
import subprocess

from sslab.experiment.spec import experiment_files
from sslab.paths import REPO_ROOT


def test_make_help_names_every_target_and_experiment():
    text = subprocess.run(["make", "-s", "-C", str(REPO_ROOT)], capture_output=True, text=True, check=True).stdout
    makefile = (REPO_ROOT / "Makefile").read_text()
    phony = re.search(r"^\.PHONY:(.*?)(?<!\\)\n", makefile, re.S | re.M).group(1).replace("\\\n", " ").split()
    targets = [t for t in phony if not t.startswith("$(")]
    assert len(targets) > 30
    missing = [t for t in targets if not re.search(rf"(?<![\w-]){re.escape(t)}(?![\w-])", text)]
    assert not missing, f"make help does not name {missing}"
    for group in ("The two commands", "Experiments", "Results", "Checks of the testbed",
                  "Images, containers, fleets", "Development"):
        assert f"\n{group}" in text, group
    listed = text.split("Experiments here (experiments/*.yaml):")[1].split()
    assert sorted(listed) == sorted(p.stem for p in experiment_files())
