import pytest

from sslab.substrate.image import ensure_image

from .helpers import SMOKE_ARGS, SMOKE_MATRIX, matrix_records, sslab


@pytest.fixture(scope="session")
def image():
    """The testbed image for the current sources (built if not cached: ~1-5 min)."""
    return ensure_image()


@pytest.fixture(scope="session")
def smoke_here(tmp_path_factory, image):
    """The smoke matrix's six cells (SMOKE_ARGS) run on this machine alone (the default inventory), by
    key: what a fleet and a Slurm array must give, byte for byte."""
    results = tmp_path_factory.mktemp("smoke-here")
    res = sslab(SMOKE_ARGS, results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    records = matrix_records(results / SMOKE_MATRIX)
    assert len(records) == 6
    return records
