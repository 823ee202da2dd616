"""What the documentation site needs besides its pages to work from disk (site/index.html, file://).

MkDocs Material's offline plugin moves the search index into a script and runs the search worker
through a shim (iframe-worker: a browser will not start a Web Worker from file://), which its
pages load from unpkg.com: from disk without a network, search would not work.  The shim is taken
here from npm's registry at build time, pinned by version and checked by its integrity hash, kept
in the cache, and shipped in the site; every page then loads it from there.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import urllib.request
from pathlib import Path

from .. import paths

#: The shim the offline plugin's pages ask for, and the one shipped instead (npm's tarball).
SHIM_URL_ASKED = "https://unpkg.com/iframe-worker/shim"
SHIM_VERSION = "1.0.4"
SHIM_INTEGRITY = "sha512-roeaaI+Lg1LJNfgpCjoRe/+WzEjy9+Z08LoEvu85MCPbBjwm+qXz8Ag5U05lHa6V1CysZyGzE0SOkAtSUA5q7Q=="
SHIM_MEMBER = "package/shim/index.js"
#: Where the site keeps it (relative to the site's root).
SHIM_IN_SITE = "assets/javascripts/iframe-worker-shim.js"


class DocAssetError(RuntimeError):
    """An asset the site needs could not be had (named with what to do)."""


def registry() -> str:
    return os.environ.get("SSLAB_NPM_REGISTRY", "https://registry.npmjs.org").rstrip("/")


def integrity_of(data: bytes) -> str:
    """npm's integrity string of @data (its sha512, base64)."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def search_shim(cache: Path | None = None) -> bytes:
    """The iframe-worker shim's script, from the cache or npm's registry; DocAssetError when the
    tarball cannot be had or is not the one pinned."""
    cache = (cache or paths.cache_dir()) / "docs"
    tgz = cache / f"iframe-worker-{SHIM_VERSION}.tgz"
    if tgz.is_file() and integrity_of(tgz.read_bytes()) == SHIM_INTEGRITY:
        data = tgz.read_bytes()
    else:
        url = f"{registry()}/iframe-worker/-/iframe-worker-{SHIM_VERSION}.tgz"
        try:
            data = urllib.request.urlopen(url, timeout=60).read()
        except OSError as e:
            raise DocAssetError(f"the site's search shim: cannot fetch {url} ({e}); set SSLAB_NPM_REGISTRY to a "
                                f"registry that serves npm packages") from None
        if (got := integrity_of(data)) != SHIM_INTEGRITY:
            raise DocAssetError(f"the site's search shim: {url} is not the tarball pinned ({got[:24]}..., "
                                f"expected {SHIM_INTEGRITY[:24]}...)")
        cache.mkdir(parents=True, exist_ok=True)
        part = tgz.with_name(f".{tgz.name}.{os.getpid()}")
        part.write_bytes(data)
        os.replace(part, tgz)  # whole or not there: a second build reads no half of it
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        member = tar.extractfile(SHIM_MEMBER)
        if member is None:
            raise DocAssetError(f"the site's search shim: iframe-worker {SHIM_VERSION} has no {SHIM_MEMBER}")
        return member.read()
