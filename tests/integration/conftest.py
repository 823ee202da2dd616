import pytest

from sslab.substrate.image import ensure_image


@pytest.fixture(scope="session")
def image():
    """The testbed image for the current sources (built if not cached: ~1-5 min)."""
    return ensure_image()
