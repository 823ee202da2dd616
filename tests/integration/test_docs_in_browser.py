"""The documentation site as a reader meets it: built, then opened from disk (file://) in headless
Chromium.  Every link of the navigation opens a page (not a folder listing), every image loads, the
console stays quiet, and the search finds a word: the offline plugin's worker shim comes from the
site itself (sslab.cli.docassets), so nothing is fetched from a network."""

import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

from sslab.paths import REPO_ROOT

from .browser import chromium, visit

#: Open the search, type a word into it.
TYPE_HYSTART = """(() => {
  const toggle = document.querySelector('input[data-md-toggle=search]');
  toggle.checked = true; toggle.dispatchEvent(new Event('change', {bubbles: true}));
  const box = document.querySelector('input.md-search__input');
  box.focus(); box.value = 'hystart';
  box.dispatchEvent(new Event('input', {bubbles: true}));
  box.dispatchEvent(new KeyboardEvent('keyup', {bubbles: true, key: 't'}));
})()"""
#: The search's results once there are some: their count line and how many are listed.
RESULTS = """(() => {
  const items = document.querySelectorAll('.md-search-result__item').length;
  const meta = document.querySelector('.md-search-result__meta');
  return items > 0 ? {items: items, meta: meta ? meta.textContent : ''} : null;
})()"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    assert chromium() is not None, "no chromium on PATH: `make browser-deps` installs Debian's"
    site = tmp_path_factory.mktemp("docs") / "site"
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(site)],
                         cwd=REPO_ROOT, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert res.returncode == 0, res.stderr[-3000:]
    return site


def local_targets(page: Path) -> list[Path]:
    """The local files and folders @page links to or shows (href and src, anchors dropped)."""
    refs = [re.split(r"[#?]", r)[0] for r in re.findall(r'(?:href|src)="([^"]+)"', page.read_text())
            if not re.match(r"[a-z][a-z0-9+.-]*:", r)]   # not another scheme's (https:, mailto:, data:)
    return [(page.parent / unquote(r)).resolve() for r in refs if r]


def test_every_page_links_pages_not_folders_and_loads_no_script_from_a_network(site):
    # 404.html is a web server's page (root-absolute links, shown at any depth); from disk none is shown.
    pages = sorted(p for p in site.rglob("*.html") if p.name != "404.html")
    assert len(pages) > 20
    for page in pages:
        targets = local_targets(page)
        assert all(t.is_file() for t in targets), (page, [t for t in targets if not t.is_file()])
        # No script from a network (the words may name one: measurements.md does).
        assert not re.search(r'<script[^>]+src="https?://', page.read_text()), page


def test_the_home_page_opens_from_disk_and_its_search_finds_a_word(site, tmp_path):
    v = visit(site / "index.html", tmp_path / "docs-search.png", act=TYPE_HYSTART, until=RESULTS)
    assert v.console_errors == [] and v.broken_images == [] and v.images >= 1, v
    assert v.value is not None and v.value["items"] > 0 and "matching document" in v.value["meta"], v


def test_a_page_two_levels_down_opens_with_its_images(site, tmp_path):
    v = visit(site / "experiments" / "startup.html", tmp_path / "startup.png", act=TYPE_HYSTART, until=RESULTS)
    assert v.console_errors == [] and v.broken_images == [], v
    assert v.value is not None and v.value["items"] > 0, v
