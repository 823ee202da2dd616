"""The testbed as an OCI container image: the UML kernel, our module, the pinned rootfs and the harness.

An ordinary container shares its host's kernel and so cannot ship one; the
User-Mode Linux kernel is a plain program, so this image carries it, and a
container started from it runs real Linux TCP in virtual time on any host
with Podman or Docker: no module loading, netem or /dev/kvm on the host.

How it is made (`make container`), without a registry:

  1. the image as `make image` builds it (cached by its recipe hash);
  2. a copy of its rootfs, plus the harness's source tree in /opt/sslab,
     its Python environment in /opt/sslab/.venv (from PyPI; nothing is
     installed into the rootfs itself), and the image's UML kernel and
     manifest in /opt/sslab/image/;
  3. one layer: `podman import` of that tree, with the manifest's facts as
     labels and the environment that makes the harness inside use it.

The UML guests started inside boot the image's rootfs as their root, from
/opt/sslab/image/root: the same files as the container's own root, hard
linked, but at a path where the engine mounts nothing (its /dev, /proc,
/sys, /run and /etc/hosts sit on the container's "/").

Tools, chosen by what they needed here: `podman import` of a tar makes the
one-layer image from the directory we already build in a chroot (buildah
would add a second mechanism for the same tree; umoci would still need an
engine to load the result).  `podman save --format docker-archive`, gzipped,
writes the archive (ARCHIVE_SUFFIX says why that format).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .. import paths
from .buildtools import ImageError, cache_lock, chroot_mounts, in_chroot, log, remove_tree, run, sha256_file
from .cachegc import CONTAINER_BUILD_NEEDS, prune_if_short, refuse_if_short
from .engines import engine
from .image import Image, ensure_image

#: Where the harness lives in the container, and its image (manifest, UML kernel, rootfs link).
HARNESS = "opt/sslab"
#: The harness's commit, for run records (the container holds no git repository).
COMMIT_FILE = ".sslab-commit"
#: The UML guests' root inside the container: the image's rootfs as hard links.
GUEST_ROOT = "opt/sslab/image/root"
IMAGE_DIR = "opt/sslab/image"
#: The environment the harness runs with inside (see substrate/uml.py and paths.py).
CONTAINER_ENV = {
    "SSLAB_IN_CONTAINER": "1",
    "SSLAB_PREBUILT_IMAGE": f"/{IMAGE_DIR}",
    "SSLAB_RESULTS": "/results",
    "SSLAB_CACHE": "/var/cache/sslab",
    # Podman and Docker give /dev/shm 64 MB: the UML's memory file goes to /tmp.
    "SSLAB_UML_TMPDIR": "/tmp",
    "PATH": "/opt/sslab/.venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG": "C.UTF-8",
}
#: Run flags every host needs: results mounted at /results.  Nothing privileged.
RUN_FLAGS = ("--rm",)
#: What this host's Podman 4.3 (Debian) needed besides: crun rejects its hybrid cgroup
#: layout, and raising rlimits is not permitted here (no CAP_SYS_RESOURCE).
HOST_EXTRA_FLAGS = ("--runtime", "runc", "--cgroup-manager=cgroupfs", "--ulimit", "nofile=1024:1024",
                    "--ulimit", "nproc=1000:1000")


def harness_files(repo: Path) -> list[str]:
    """The source tree as the container needs it: tracked and new files, not results or caches."""
    res = subprocess.run(["git", "-C", str(repo), "ls-files", "-co", "--exclude-standard", "-z"],
                         capture_output=True, check=True)
    # results/ is output, except its README and the papers' reference values (reports need them).
    keep = lambda n: not n.startswith("results/") or n == "results/README.md" or n.startswith("results/reference/")  # noqa: E731
    return sorted(n for n in res.stdout.decode().split("\0") if n and keep(n) and (repo / n).is_file())


def code_commit(repo: Path) -> str:
    res = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True)
    return res.stdout.strip() or "unknown"


def harness_digest(repo: Path) -> str:
    """sha256 over the harness's files (names and contents): a changed tree is another container."""
    h = hashlib.sha256()
    for name in harness_files(repo):
        h.update(name.encode() + b"\0" + (repo / name).read_bytes() + b"\0")
    return h.hexdigest()


def version(image: Image, repo: Path) -> str:
    """The tag: the image's recipe hash and the harness tree's digest, both short."""
    return f"{image.manifest()['image_hash'][:12]}-{harness_digest(repo)[:12]}"


def labels(image: Image, repo: Path) -> dict[str, str]:
    m = image.manifest()
    uml = m.get("uml") or {}
    return {
        "org.opencontainers.image.title": "slowstart-lab",
        "org.opencontainers.image.revision": code_commit(repo),
        "sslab.harness_sha256": harness_digest(repo),
        "sslab.recipe_hash": m["recipe_hash"],
        "sslab.uml.release": uml.get("release", ""),
        "sslab.uml.source": json.dumps(uml.get("source", {}), sort_keys=True),
        "sslab.uml.config_sha256": uml.get("config_sha256", ""),
        "sslab.uml.binary_sha256": uml.get("binary_sha256", ""),
        "sslab.module_sha256": json.dumps({k: v["sha256"] for k, v in (uml.get("module") or {})
                                           .get("modules", {}).items()}, sort_keys=True),
    }


def build_tree(image: Image, repo: Path, dest: Path) -> None:
    """The container's root in @dest (a fresh directory)."""
    root = dest / "rootfs"
    log("container: copy the image's rootfs")
    run(["cp", "-a", "--reflink=auto", str(image.rootfs), str(root)])
    harness = root / HARNESS
    for name in harness_files(repo):
        target = harness / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / name, target)
    img = root / IMAGE_DIR
    img.mkdir(parents=True)
    shutil.copy2(image.uml_binary, img / "linux")
    shutil.copy2(image.manifest_path, img / "manifest.json")
    # The guests' root: the rootfs again, as hard links (no space), at a path the engine does
    # not mount over.  Booting the container's "/" itself, with the engine's /dev, /proc,
    # /sys, /run and /etc/hosts mounted in it, gave other random draws than the host for
    # the same seed; a view without those mounts gave the host's.
    guest = root / GUEST_ROOT
    guest.mkdir(parents=True)
    for entry in sorted(image.rootfs.iterdir()):
        if entry.name != "opt":
            run(["cp", "-al", str(root / entry.name), str(guest / entry.name)])
    (guest / "opt").mkdir()
    (img / "rootfs").symlink_to(f"/{GUEST_ROOT}")
    (root / "results").mkdir(exist_ok=True)
    (harness / COMMIT_FILE).write_text(code_commit(repo) + "\n")
    # The harness's Python environment, without touching the rootfs: a venv without pip, and
    # pip run from its wheel (fetched here).  Installing Debian packages instead (python3-venv)
    # changed what the UML guests, which boot this root, drew from their random pool: other
    # ports and ISNs for the same seed than on the host.
    wheels = dest / "wheels"
    run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels), "pip"], capture_output=True)
    (pip_wheel,) = sorted(wheels.glob("pip-*.whl"))
    shutil.copy2(pip_wheel, root / "tmp" / pip_wheel.name)
    host_ca = Path(os.environ.get("PIP_CERT") or os.environ.get("SSL_CERT_FILE")
                   or "/etc/ssl/certs/ca-certificates.crt")
    env = {}
    if host_ca.is_file():
        # pip trusts what the build host trusts (a host behind a TLS-inspecting proxy has its
        # CA in its own bundle, not in the rootfs's); the bundle is removed afterwards.
        shutil.copy2(host_ca, root / "tmp/build-ca.crt")
        env = {"PIP_CERT": "/tmp/build-ca.crt"}  # also for pip's build-isolation subprocess
    log("container: the harness's Python environment from PyPI")
    try:
        with chroot_mounts(root):
            in_chroot(root, ["python3", "-m", "venv", "--without-pip", f"/{HARNESS}/.venv"])
            in_chroot(root, [f"/{HARNESS}/.venv/bin/python", f"/tmp/{pip_wheel.name}/pip", "install", "-q",
                             "--no-cache-dir", f"/tmp/{pip_wheel.name}", "-e", f"/{HARNESS}[test]"], extra_env=env)
    finally:
        for p in ("build-ca.crt", pip_wheel.name):
            (root / "tmp" / p).unlink(missing_ok=True)
    (harness / ".venv/.stamp").touch()


def build(repo: Path = paths.REPO_ROOT) -> dict:
    """`make container`: build (or find) the OCI image for this image and this commit."""
    eng = engine()
    image = ensure_image(repo=repo)
    tag = f"slowstart-lab:{version(image, repo)}"
    have = subprocess.run([eng, "image", "exists", tag], capture_output=True).returncode == 0 \
        if eng == "podman" else subprocess.run([eng, "image", "inspect", tag], capture_output=True).returncode == 0
    if have:
        return {"tag": tag, "built": False}
    t0 = time.monotonic()
    with cache_lock(paths.cache_dir()):  # a copy of the rootfs, then the engine's import of it: ~7 GB
        manifest = image.manifest()
        prune_if_short(paths.cache_dir(), manifest["image_hash"], (manifest.get("uml") or {}).get("uml_hash"))
        refuse_if_short(paths.cache_dir(), CONTAINER_BUILD_NEEDS, f"container {tag}")
    work = paths.cache_dir() / "container" / f".build-{os.getpid()}"
    remove_tree(work)
    work.mkdir(parents=True)
    try:
        build_tree(image, repo, work)
        changes = [f"ENV {k}={v}" for k, v in CONTAINER_ENV.items()]
        changes += [f"LABEL {k}={json.dumps(v)}" for k, v in labels(image, repo).items()]
        changes += [f"WORKDIR /{HARNESS}", 'CMD ["make", "vm-check"]']
        log(f"container: {eng} import as {tag}")
        tar = subprocess.Popen(["tar", "-C", str(work / "rootfs"), "--numeric-owner", "-cf", "-", "."],
                               stdout=subprocess.PIPE)
        args = [eng, "import"] + [a for c in changes for a in ("--change", c)] + ["-", tag]
        res = subprocess.run(args, stdin=tar.stdout, capture_output=True, text=True)
        tar.stdout.close()
        if tar.wait() != 0 or res.returncode != 0:
            raise ImageError(f"{eng} import failed: {res.stderr.strip()[-800:]}")
    finally:
        remove_tree(work)
    size = subprocess.run([eng, "image", "inspect", "--format", "{{.Size}}", tag], capture_output=True,
                          text=True).stdout.strip()
    dropped = drop_older_containers(eng, image, tag)
    return {"tag": tag, "built": True, "older_removed": dropped, "seconds": round(time.monotonic() - t0, 1),
            "size_bytes": int(size) if size.isdigit() else None}


#: Containers of one testbed image kept in an engine's store: a new harness tree makes a new one
#: (1.8 GB each), so the oldest beyond these are removed when one is built.
KEEP_CONTAINERS = 2


def drop_older_containers(eng: str, image: Image, built: str) -> list[str]:
    """Remove the engine's slowstart-lab images of @image's hash but the newest KEEP_CONTAINERS (@built
    among them); the names removed."""
    prefix = f"slowstart-lab:{image.manifest()['image_hash'][:12]}-"
    res = subprocess.run([eng, "images", "--format", "{{.CreatedAt}}\t{{.Repository}}:{{.Tag}}"],
                         capture_output=True, text=True)
    listed = sorted((ln.split("\t") for ln in res.stdout.splitlines() if "\t" in ln), reverse=True)
    ours = [name for _, name in listed if prefix in name and not name.endswith(built)]
    removed = []
    for name in ours[KEEP_CONTAINERS - 1:]:
        if subprocess.run([eng, "rmi", name], capture_output=True).returncode == 0:
            removed.append(name)
    return removed


#: `make container-save`'s format: a docker-archive, gzip-compressed.  Debian 12's Docker (20.10)
#: cannot load an OCI archive ("open .../blobs/json: no such file"), and its Podman (4.3) cannot load
#: a compressed one; a docker-archive loads in both, and `docker load -i` reads it compressed, so
#: the archive is compressed (0.65 GB against 1.8) and Podman gets it through gzip (LOAD_HINT).
ARCHIVE_SUFFIX = ".docker.tar.gz"
LOAD_HINT = "docker load -i {a}   |   gzip -dc {a} | podman load"


def save(dest: Path | None = None, repo: Path = paths.REPO_ROOT) -> dict:
    """`make container-save`: the image as a compressed docker-archive (ARCHIVE_SUFFIX)."""
    eng = engine()
    info = build(repo)
    dest = dest or paths.RESULTS_DIR / "container" / f"{info['tag'].replace(':', '-')}{ARCHIVE_SUFFIX}"
    if dest.exists():
        raise ImageError(f"{dest} exists; not overwritten")
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(f".{dest.name}.partial")
    with open(part, "wb") as out:
        saver = subprocess.Popen([eng, "save", "--format", "docker-archive", info["tag"]], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
        gz = subprocess.run(["gzip", "-1"], stdin=saver.stdout, stdout=out)
        saver.stdout.close()
        err = saver.stderr.read().decode(errors="replace")
        if saver.wait() != 0 or gz.returncode != 0:
            part.unlink(missing_ok=True)
            raise ImageError(f"{eng} save failed: {err.strip()[-600:]}")
    os.rename(part, dest)
    return {**info, "archive": str(dest), "format": "docker-archive, gzip", "load": LOAD_HINT.format(a=dest),
            "archive_sha256": sha256_file(dest), "archive_bytes": dest.stat().st_size}


def run_command(tag: str, argv: list[str], results: Path, extra: tuple[str, ...] = ()) -> list[str]:
    """The `podman run` line for @argv in the container, results written to @results."""
    return [engine(), "run", *RUN_FLAGS, *extra, "-v", f"{results}:/results", tag, *argv]
