"""What goes into the container image's harness tree."""

from sslab.paths import REPO_ROOT
from sslab.substrate.container import harness_digest, harness_files


def test_harness_tree_has_the_code_and_the_papers_values_but_no_results():
    files = harness_files(REPO_ROOT)
    assert "Makefile" in files and "runners/sslab/cli/__init__.py" in files and "images/guest/sslab-transfer.c" in files
    # Reports print the paper's numbers from results/reference: the container must carry them.
    assert "results/reference/table1.yaml" in files
    assert not [f for f in files if f.startswith("results/") and f not in ("results/README.md",)
                and not f.startswith("results/reference/")]
    assert len(harness_digest(REPO_ROOT)) == 64 and harness_digest(REPO_ROOT) == harness_digest(REPO_ROOT)
