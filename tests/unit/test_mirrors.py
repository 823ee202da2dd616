from pathlib import Path

import pytest

from sslab.substrate.mirrors import MirrorError, parse_deb822, parse_one_line, pick_mirrors, resolve_mirrors

DEB822 = """\
Types: deb
# a comment
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb deb-src
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main

Types: deb
Enabled: no
URIs: http://disabled.example/debian
Suites: bookworm
Components: main
"""


def test_deb822_stanzas_and_disabled():
    found = parse_deb822(DEB822)
    assert [s.uri for s in found] == ["http://mirror.example/debian", "http://mirror.example/debian-security"]
    assert found[0].suites == ("bookworm", "bookworm-updates")


def test_one_line_with_options_and_comments():
    text = (
        "# deb http://commented.example/debian bookworm main\n"
        "deb [arch=amd64 signed-by=/k.gpg] http://m.example/debian/ bookworm main contrib\n"
        "deb-src http://m.example/debian bookworm main\n"
        "deb http://s.example/debian-security bookworm-security main\n"
    )
    found = parse_one_line(text)
    assert [(s.uri, s.suites) for s in found] == [
        ("http://m.example/debian/", ("bookworm",)),
        ("http://s.example/debian-security", ("bookworm-security",)),
    ]
    m = pick_mirrors(found, "bookworm")
    assert m.debian == "http://m.example/debian" and m.security == "http://s.example/debian-security"
    assert "deb http://m.example/debian bookworm-updates main" in m.sources_list("bookworm")


def test_no_mirror_for_suite_is_a_clear_error(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("SSLAB_DEBIAN_MIRROR", raising=False)
    (tmp_path / "etc/apt").mkdir(parents=True)
    (tmp_path / "etc/apt/sources.list").write_text("deb http://x.example/ubuntu jammy main\n")
    with pytest.raises(MirrorError, match="SSLAB_DEBIAN_MIRROR"):
        resolve_mirrors("bookworm", root=tmp_path)
    monkeypatch.setenv("SSLAB_DEBIAN_MIRROR", "http://env.example/debian/")
    assert resolve_mirrors("bookworm", root=tmp_path).debian == "http://env.example/debian"
