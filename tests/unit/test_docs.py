"""The documentation site: it builds strictly, a broken link fails it, and the file formats come from the models."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from sslab import paths
from sslab.cli.formats import formats_markdown

MKDOCS = Path(sys.executable).parent / "mkdocs"


def build(root: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(MKDOCS), "build", "--strict", "-f", str(root / "mkdocs.yml"), "-d", str(site)],
                          capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


def copy_site_sources(dest: Path) -> Path:
    shutil.copy(paths.REPO_ROOT / "mkdocs.yml", dest / "mkdocs.yml")
    shutil.copytree(paths.REPO_ROOT / "docs", dest / "docs")
    return dest


def test_the_site_builds_strictly_with_every_page_in_nav(tmp_path):
    res = build(paths.REPO_ROOT, tmp_path / "site")
    assert res.returncode == 0, res.stderr
    assert "WARNING" not in res.stderr
    built = tmp_path / "site"
    for page in ("getting-started", "testbed", "suss", "formats", "glossary", "measurements"):
        assert (built / f"{page}.html").is_file(), page
    # The formats page holds the generated tables, not the marker.
    formats = (built / "formats.html").read_text()
    assert "ExperimentSpec" in formats and "generated at build time" not in formats
    # The starts page lists our module's parameters from their declarations, with the defaults.
    starts = (built / "starts.html").read_text()
    assert "<code>rapid_k36</code></td>\n<td>22</td>" in starts and "generated at build time" not in starts


def test_a_broken_link_fails_the_build(tmp_path):
    (tmp_path / "src").mkdir()
    root = copy_site_sources(tmp_path / "src")
    with open(root / "docs" / "glossary.md", "a") as f:
        f.write("\nSee [a page that is not there](no-such-page.md).\n")
    res = build(root, tmp_path / "site")
    assert res.returncode != 0
    out = res.stdout + res.stderr
    assert "no-such-page.md" in out and "strict mode" in out


def test_the_formats_name_every_field_of_a_scenario():
    from sslab.scenario.model import FlowSpec, Scenario
    text = formats_markdown()
    for model in (Scenario, FlowSpec):
        assert f"### `{model.__name__}`" in text
        for name, field in model.model_fields.items():
            assert f"| `{field.alias or name}` |" in text, name
    # A field's comment in the model's source is its description.
    assert "| `trace_events` | 'all' &#124; 'stack' | `'all'` | Which kernel events" in text


def test_every_experiment_file_has_a_page_built_from_it(tmp_path):
    from sslab.cli.docpages import experiment_pages
    from sslab.experiment.spec import experiment_files
    pages = experiment_pages()
    assert sorted(pages) == sorted(f"experiments/{f.stem}.md" for f in experiment_files())
    e7 = pages["experiments/reproduce-table1.md"]
    assert e7.startswith("# E7: stability while small flows join a large one\n")
    # The matrix's axes with their options, and the paper's values from results/reference/table1.yaml.
    assert "| large_rtt | `RTT=` | 25ms, 50ms, 100ms, 200ms |" in e7
    assert "| cubic | 1BDP | 25ms | 30.4 | 1.33 | 31.2 | 0.94 | 29 |" in e7
    # Ours beside them: the results page built from the repository's snapshot of a run (docs/results/table1).
    assert "[Table 1 at a glance](../results.md)" in e7 and "Table 1 at a glance" not in pages["experiments/startup.md"]
    e1 = pages["experiments/startup.md"]
    assert "- bottleneck 50 Mbit/s (wired), buffer 1 BDP of 100 ms" in e1
    assert "- 5 repetition(s), order alternate, seed 1" in e1
    res = build(paths.REPO_ROOT, tmp_path / "site")
    assert res.returncode == 0, res.stdout + res.stderr
    for f in experiment_files():
        assert (tmp_path / "site" / "experiments" / f"{f.stem}.html").is_file(), f.stem


def test_the_experiments_times_are_on_the_measurements_page_not_in_the_readme(tmp_path):
    from sslab.experiment.spec import experiment_times_table, experiments_in_order
    table = experiment_times_table()
    for e in experiments_in_order():
        assert f"| `make {e.target}` | {e.spec.time_here} |" in table
    res = build(paths.REPO_ROOT, tmp_path / "site")
    assert res.returncode == 0, res.stdout + res.stderr
    page = (tmp_path / "site" / "measurements.html").read_text()
    assert "generated at build time" not in page and "<code>make dynamics</code>" in page
    readme = (paths.REPO_ROOT / "README.md").read_text()
    assert not [e.spec.time_here for e in experiments_in_order() if e.spec.time_here in readme]


def test_the_notebook_is_apart_from_the_docs_and_its_index_lists_every_entry(tmp_path):
    """The dated entries live on the notebook's pages by topic (docs/notebook/); the measurements page keeps the
    experiments' times and an index of the entries generated from the pages' headings, each a working link."""
    from sslab.cli.docpages import notebook_index, notebook_pages
    index = notebook_index()
    dated = 0
    # Every page of docs/notebook/ is in the navigation, and so in the index.
    assert sorted(notebook_pages()) == sorted(p.stem for p in (paths.REPO_ROOT / "docs" / "notebook").glob("*.md"))
    for name in notebook_pages():
        text = (paths.REPO_ROOT / "docs" / "notebook" / f"{name}.md").read_text()
        heads = [ln[3:] for ln in text.splitlines() if ln.startswith("## ")]
        assert heads, name
        for h in heads:
            assert f"[{h}](notebook/{name}.md#" in index, (name, h)
        dated += len(heads)
    assert index.count("\n- [") == dated
    page = (paths.REPO_ROOT / "docs" / "measurements.md").read_text()
    assert page.count("\n## ") <= 2, "a dated entry is back on the measurements page"
    res = build(paths.REPO_ROOT, tmp_path / "site")
    assert res.returncode == 0, res.stdout + res.stderr
    built = (tmp_path / "site" / "measurements.html").read_text()
    assert "generated at build time" not in built
    assert 'href="notebook/table1.html#2026-12-02-the-verdict-the-papers-testbed-as-settings-and-table-1-again"' in built
    assert (tmp_path / "site" / "notebook" / "table1.html").is_file()
