"""The container engine is chosen by whether it works, Podman first, and the error says why each failed."""

import pytest

from sslab.substrate import container
from sslab.substrate.buildtools import ImageError


def fake_engine(bin_dir, name: str, works: bool) -> None:
    """A program called @name whose `info` answers as a working engine, or as a Docker client with no
    daemon does (the machines here ship one)."""
    script = bin_dir / name
    script.write_text("#!/bin/sh\n" + ("echo host: ok\n" if works else
                      "echo 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. "
                      "Is the docker daemon running?' >&2\nexit 1\n"))
    script.chmod(0o755)


@pytest.fixture
def path(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    container.engine.cache_clear()
    yield tmp_path
    container.engine.cache_clear()


def test_a_client_without_a_daemon_is_not_an_engine(path):
    fake_engine(path, "docker", works=False)
    with pytest.raises(ImageError) as e:
        container.engine()
    msg = str(e.value)
    assert msg.startswith("no working container engine: podman: not installed; docker: `docker info` failed (1): "
                          "Cannot connect to the Docker daemon")
    assert "installs Debian's podman" in msg


def test_a_working_engine_is_chosen_over_a_broken_one(path):
    fake_engine(path, "docker", works=False)
    fake_engine(path, "podman", works=True)
    assert container.engine() == "podman"


def test_podman_is_preferred_when_both_work(path):
    fake_engine(path, "docker", works=True)
    fake_engine(path, "podman", works=True)
    assert container.engine() == "podman"


def test_docker_serves_when_podman_does_not_work(path):
    fake_engine(path, "docker", works=True)
    fake_engine(path, "podman", works=False)
    assert container.engine() == "docker"
