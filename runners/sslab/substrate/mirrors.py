"""Find the Debian mirrors the image is built from.

The image is built only from Debian's packages, fetched from whatever Debian
mirror the build host already uses.  We read the host's APT configuration
(one-line ``.list`` files and deb822 ``.sources`` files) instead of carrying
a mirror address of our own; ``SSLAB_DEBIAN_MIRROR`` and
``SSLAB_SECURITY_MIRROR`` override it.  Which mirror served a build is
recorded in the image manifest; it is not part of the recipe hash, because
it changes where packages come from, not which packages are installed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


class MirrorError(RuntimeError):
    pass


@dataclass(frozen=True)
class AptSource:
    uri: str
    suites: tuple[str, ...]
    components: tuple[str, ...]


@dataclass(frozen=True)
class Mirrors:
    debian: str
    security: str | None

    def sources_list(self, suite: str) -> str:
        """The image's /etc/apt/sources.list for ``suite`` (e.g. bookworm)."""
        lines = [
            f"deb {self.debian} {suite} main",
            f"deb {self.debian} {suite}-updates main",
        ]
        if self.security:
            lines.append(f"deb {self.security} {suite}-security main")
        return "\n".join(lines) + "\n"


def parse_one_line(text: str) -> list[AptSource]:
    """Parse one-line style entries: ``deb [opts] URI SUITE COMPONENT...``."""
    found = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line.startswith("deb "):
            continue
        words = line.split()[1:]
        if words and words[0].startswith("["):
            # Options may span several words: skip up to the closing bracket.
            while words and not words[0].endswith("]"):
                words.pop(0)
            words = words[1:]
        if len(words) >= 2:
            found.append(AptSource(words[0], (words[1],), tuple(words[2:])))
    return found


def parse_deb822(text: str) -> list[AptSource]:
    """Parse deb822 ``.sources`` stanzas (Types/URIs/Suites/Components)."""
    found = []
    for stanza in text.split("\n\n"):
        fields: dict[str, str] = {}
        key = None
        for raw in stanza.splitlines():
            if raw.startswith("#") or not raw.strip():
                continue
            if raw[0] in " \t" and key:
                fields[key] += " " + raw.strip()
                continue
            if ":" in raw:
                key, value = raw.split(":", 1)
                key = key.strip().lower()
                fields[key] = value.strip()
        if "deb" not in fields.get("types", "").split():
            continue
        if fields.get("enabled", "yes").lower() == "no":
            continue
        suites = tuple(fields.get("suites", "").split())
        comps = tuple(fields.get("components", "").split())
        for uri in fields.get("uris", "").split():
            found.append(AptSource(uri, suites, comps))
    return found


def host_sources(root: Path = Path("/")) -> list[AptSource]:
    etc = root / "etc/apt"
    found: list[AptSource] = []
    files = [etc / "sources.list"]
    if (etc / "sources.list.d").is_dir():
        files += sorted((etc / "sources.list.d").iterdir())
    for f in files:
        if not f.is_file():
            continue
        text = f.read_text(errors="replace")
        if f.name.endswith(".sources"):
            found += parse_deb822(text)
        elif f.name.endswith(".list"):
            found += parse_one_line(text)
    return found


def pick_mirrors(sources: list[AptSource], suite: str) -> Mirrors | None:
    """Choose the mirror serving ``suite`` and the one serving ``suite-security``."""
    main = next((s.uri for s in sources if suite in s.suites), None)
    sec = next((s.uri for s in sources if f"{suite}-security" in s.suites), None)
    if main is None:
        return None
    return Mirrors(main.rstrip("/"), sec.rstrip("/") if sec else None)


def resolve_mirrors(suite: str, root: Path = Path("/")) -> Mirrors:
    env_main = os.environ.get("SSLAB_DEBIAN_MIRROR")
    env_sec = os.environ.get("SSLAB_SECURITY_MIRROR")
    picked = pick_mirrors(host_sources(root), suite)
    main = env_main or (picked.debian if picked else None)
    if not main:
        raise MirrorError(
            f"no Debian mirror for '{suite}' in this host's APT sources; "
            "set SSLAB_DEBIAN_MIRROR to a Debian mirror URL "
            "(and SSLAB_SECURITY_MIRROR to its security archive)"
        )
    sec = env_sec or (picked.security if picked else None)
    return Mirrors(main.rstrip("/"), sec.rstrip("/") if sec else None)
