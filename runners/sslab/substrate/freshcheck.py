"""`make fresh-check`: the README's two commands on a new machine, made here in a throw-away root.

A green CI run on a machine that has built the image before can hide a
missing install step; a new user's machine has nothing.  This check makes
one, whatever this machine already has:

  1. a Debian root of its own (debootstrap minbase of the image's suite)
     with only what the README asks of a host (make, git, python3), and
     what every machine of this project's kind comes with: its network
     trust (CA bundle, local CAs, pip.conf and the TLS and pip environment
     variables: the machines reach registries through a TLS-inspecting
     egress) and, if this machine has one, its Docker client without a
     daemon;
  2. a clone of this repository's committed HEAD in it, an empty cache;
  3. in a mount and PID namespace of its own (every mount and process goes
     with it, whatever happens), with /proc, /sys, a private /dev and a
     large /dev/shm, pivoted into (the root is its namespace's root, as a
     machine's is, not a chroot): `make <main>` then `make test`, as root, timed;
  4. a record in results/fresh-check/<stamp>/ (the logs, the times, the
     commit, the host), and the root removed (FRESH_KEEP=1 keeps it).

It needs root, debootstrap, unshare and about NEED_GB of disk (the test suite
builds a kernel and an image for each kernel source it tries); it takes as
long as a cold image build, the main job and the test suite together.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path

from .. import paths
from .buildtools import ImageError, log, remove_tree, run
from .hostfacts import describe, host_facts
from .mirrors import resolve_mirrors

#: What the README asks of a host; the Makefile's targets install everything else.
HOST_PREREQUISITES = ("make", "git", "python3")
SUITE = "bookworm"
#: The default main job: the README's, with no option (ITER=1: 32 cells, the paper's three columns and BBRv3).
MAIN = "reproduce-table1"
#: What a machine of this kind trusts for TLS, copied into the root where it exists.
TRUST_FILES = ("etc/ssl/certs/ca-certificates.crt", "usr/local/share/ca-certificates", "etc/pip.conf")
#: Environment variables passed into the root: TLS trust, pip's settings and proxies.
TRUST_ENV_PREFIXES = ("PIP_", "SSL_CERT_", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO",
                      "NODE_EXTRA_CA_CERTS", "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                      "NO_PROXY")
#: Free disk the check asks for where the cache is, before it starts.  The root grows through `make
#: test` (a UML kernel of 1.6-2 GB per kernel source and patch series, an image of 2.8 GB per kernel
#: and module variant, the container engines' images): 33 GB only 43 tests into it on 28 Nov 2026
#: (docs/notebook/testbed.md has the whole run's peak), where 30 GB had been asked for.
NEED_GB = 50.0
#: Device nodes of the root's private /dev (the testbed's UML and QEMU need no more).
DEV_NODES = {"null": (1, 3), "zero": (1, 5), "full": (1, 7), "random": (1, 8), "urandom": (1, 9), "tty": (5, 0)}

#: Run inside `unshare --mount --pid --fork --propagation private`: the new root's mounts, then
#: pivot_root into it, so that it is the mount namespace's root and not a chroot inside the machine's.
#: A chroot is not a machine: a process that joins the namespace (setns, as runc does for `docker exec`
#: and `podman exec`) is put at the namespace's root, which under chroot is this machine's /, so every
#: engine exec into a container started in the root failed with "chdir to cwd ... no such file or
#: directory" (make fresh-check, 28 Nov 2026; tests/integration/test_freshcheck_root.py).  The root is
#: bind-mounted on itself so that it is a mount point (pivot_root, and the engines' runc, need one);
#: the machine's tree, left at /.old-root by the pivot, is detached.
ENTER = r"""
set -eu
root="$1"; shift
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --make-rslave "$root/sys"
mount -t tmpfs -o mode=0755,size=16m,nosuid devtmp "$root/dev"
for node in {nodes}; do
  name=${{node%%:*}}; nums=${{node#*:}}
  mknod -m 0666 "$root/dev/$name" c ${{nums%:*}} ${{nums#*:}}
done
ln -s /proc/self/fd "$root/dev/fd"; ln -s pts/ptmx "$root/dev/ptmx"
for n in 0 1 2; do ln -s /proc/self/fd/$n "$root/dev/$(echo stdin stdout stderr | cut -d' ' -f$((n+1)))"; done
mkdir "$root/dev/pts" "$root/dev/shm" "$root/dev/mqueue"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$root/dev/pts"
mount -t tmpfs -o size=50%,mode=1777 shm "$root/dev/shm"
mount -t mqueue mqueue "$root/dev/mqueue"
if [ -e /dev/kvm ]; then touch "$root/dev/kvm"; mount --bind /dev/kvm "$root/dev/kvm"; fi
mount -t tmpfs -o mode=0755 run "$root/run"
cd "$root"
mkdir -p .old-root
pivot_root . .old-root
umount -l /.old-root
rmdir /.old-root
cd /
exec /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb {trust_env} \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /bin/bash -c "$*"
"""


def disk_shortfall(need_gb: float, where: Path | None = None) -> str | None:
    """Why the disk at @where (default: the image cache, or its nearest existing parent) is too small
    for a fresh-check, or None."""
    where = where or paths.cache_dir()
    probe = where
    while not probe.exists():
        probe = probe.parent
    free_gb = shutil.disk_usage(probe).free / 1e9
    if free_gb >= need_gb:
        return None
    images = sorted((where / "images").glob("*/")) if (where / "images").is_dir() else []
    held = f"; the image cache ({where / 'images'}) holds {len(images)} image(s) of about 2.8 GB, " \
           f"each rebuilt on demand if removed" if images else ""
    return (f"fresh-check needs about {need_gb:g} GB free where the cache is ({probe}); {free_gb:.1f} GB "
            f"are{held}")


def make_root(root: Path, mirror_suite: str = SUITE) -> dict:
    """A minimal Debian with the README's prerequisites, the image's mirrors, DNS, and this host's Docker
    client if it has one."""
    mirrors = resolve_mirrors(mirror_suite)
    log(f"fresh-check: debootstrap {mirror_suite} (minbase + {', '.join(HOST_PREREQUISITES)}) from {mirrors.debian}")
    run(["debootstrap", "--variant=minbase", f"--include={','.join(HOST_PREREQUISITES)}", mirror_suite, str(root),
         mirrors.debian], capture_output=True)
    (root / "etc/apt/sources.list").write_text(mirrors.sources_list(mirror_suite))
    shutil.copy2("/etc/resolv.conf", root / "etc/resolv.conf")
    facts = {"suite": mirror_suite, "prerequisites": list(HOST_PREREQUISITES), "docker_client": None,
             "trust_files": [], "trust_env": sorted(trust_env())}
    for rel in TRUST_FILES:
        src, dest = Path("/") / rel, root / rel
        if src.is_dir():
            shutil.copytree(src, dest, dirs_exist_ok=True)
        elif src.is_file():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
        else:
            continue
        facts["trust_files"].append(f"/{rel}")
    docker = shutil.which("docker")
    if docker:
        # The project's machines ship a Docker client and no daemon: so does this one.
        shutil.copy2(docker, root / "usr/local/bin/docker")
        facts["docker_client"] = docker
    return facts


def trust_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith(TRUST_ENV_PREFIXES)}


def clone(repo: Path, dest: Path) -> str:
    run(["git", "clone", "-q", str(repo), str(dest)], capture_output=True)
    return subprocess.run(["git", "-C", str(dest), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


def in_root(root: Path, command: str, log_path: Path) -> tuple[int, float]:
    """Run @command (bash) in the new root, in namespaces of its own; (exit status, seconds)."""
    nodes = " ".join(f"{n}:{a}:{b}" for n, (a, b) in DEV_NODES.items())
    script = ENTER.format(nodes=nodes, trust_env=" ".join(shlex.quote(f"{k}={v}")
                                                         for k, v in sorted(trust_env().items())))
    t0 = time.monotonic()
    with open(log_path, "w") as out:
        res = subprocess.run(["unshare", "--mount", "--pid", "--fork", "--propagation", "private", "sh", "-c", script,
                              "enter", str(root), command], stdout=out, stderr=subprocess.STDOUT)
    return res.returncode, time.monotonic() - t0


def make_targets(makefile: Path = paths.REPO_ROOT / "Makefile") -> set[str]:
    """The targets the Makefile defines: rules `name:` at the start of a line (not variables), and
    one per experiment file (experiments/<target>.yaml, a rule the Makefile generates)."""
    found = {f.stem for f in (makefile.parent / "experiments").glob("*.yaml")}
    for line in makefile.read_text().splitlines():
        head, colon, rest = line.partition(":")
        if colon and not rest.startswith("=") and head and not head.startswith(("\t", "#", ".", " ")) \
                and "=" not in head and "$" not in head:
            found.update(head.split())
    return found


def fresh_check(main: str = MAIN, keep: bool = False, repo: Path = paths.REPO_ROOT) -> dict:
    if os.geteuid() != 0:
        raise ImageError("fresh-check needs root (debootstrap, mounts, pivot_root)")
    for tool in ("debootstrap", "unshare", "pivot_root"):
        if shutil.which(tool) is None:
            raise ImageError(f"fresh-check needs {tool} (Debian packages debootstrap, util-linux)")
    record_dir = paths.new_run_dir("fresh-check")
    work = paths.cache_dir() / f".fresh-{os.getpid()}"
    remove_tree(work)
    root = work / "root"
    record: dict = {"main": f"make {main}", "test": "make test", "host": host_facts(), "steps": {}}
    t0 = time.monotonic()
    try:
        record["root"] = make_root(root)
        record["steps"]["root_s"] = round(time.monotonic() - t0, 1)
        record["commit"] = clone(repo, root / "root/slowstart-lab")
        log(f"fresh-check: {record['commit'][:12]} cloned; `make {main}` then `make test` in the new root "
            f"(logs in {record_dir})")
        for step, command in (("main", f"make {main}"), ("test", "make test")):
            rc, seconds = in_root(root, f"cd /root/slowstart-lab && {command}", record_dir / f"{step}.log")
            record["steps"][f"{step}_s"] = round(seconds, 1)
            record["steps"][f"{step}_exit"] = rc
            log(f"fresh-check: `{command}` exited {rc} after {seconds / 60:.1f} min")
            if rc != 0:
                break
        tail = (record_dir / "test.log").read_text(errors="replace").splitlines()[-3:] \
            if (record_dir / "test.log").exists() else []
        record["test_summary"] = [ln for ln in tail if "passed" in ln or "failed" in ln or "error" in ln]
    finally:
        record["total_s"] = round(time.monotonic() - t0, 1)
        if keep:
            record["kept_root"] = str(root)
        else:
            remove_tree(work)
        (record_dir / "fresh-check.json").write_text(json.dumps(record, indent=1, sort_keys=True))
    record["ok"] = record["steps"].get("main_exit") == 0 and record["steps"].get("test_exit") == 0
    record["record"] = str(record_dir / "fresh-check.json")
    (record_dir / "fresh-check.json").write_text(json.dumps(record, indent=1, sort_keys=True))
    log(f"fresh-check: {'passed' if record['ok'] else 'FAILED'} in {record['total_s'] / 60:.1f} min on "
        f"{describe(record['host'])}")
    return record
