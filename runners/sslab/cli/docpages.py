"""One documentation page per experiment, written from its file when the site is built.

A page says what the experiment reproduces (paper, figure, where the paper's values are), what it
runs (its scenario's bottleneck, RTTs and cases; its parts; or its matrix's axes and the
parameters the paper leaves unstated), the make target and the options its kind takes, the report
and where results land, and the paper's values where the repository holds them
(results/reference/<matrix>.yaml).  docs/hooks.py adds the pages under "Experiments"; a new
experiment file is a new page with nothing else to write.
"""

from __future__ import annotations

import re

import yaml

from .. import paths
from ..experiment.spec import Experiment, experiments_in_order
from ..matrix.spec import load_matrix
from ..scenario import load_scenario
from ..scenario.load import parse_scenario
from ..scenario.model import Scenario

REFERENCE_DIR = paths.REPO_ROOT / "results" / "reference"

#: The options each kind of experiment takes (docs/reference.md has them all).
OPTIONS = {
    "scenario": "`REPS=`, `SCENARIO=` (another scenario file), `JOBS=`, `AGAIN=1`",
    "parts": "`SELECT=` (parts by name, tag or setting value), `REPS=`, `JOBS=`, `AGAIN=1`",
    "matrix": "`ITER=`, `CCA=`, `BUF=`, `RTT=` (any valid values), `JOBS=`, `BOOT_SHARE=`, `INVENTORY=`",
}
#: The knobs every experiment takes (sslab.scenario.knobs).
KNOBS = "`SUSS_VERSION=`, `HOSTS=`, `LANS=`, `KERNEL_PATCHES=`, `MODULES=`, `KERNEL_SOURCE=`, `SUBSTRATE=`"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:g} ms"


def _buffer(s: Scenario) -> str:
    b = s.bottleneck.buffer
    if b.bdp is not None:
        return f"{b.bdp:g} BDP" + (f" of {_ms(b.rtt)}" if b.rtt else "")
    if b.packets is not None:
        return f"{b.packets} packets"
    if b.bytes is not None:
        return f"{b.bytes} bytes"
    return f"{_ms(b.time)} of drain time"


def scenario_lines(s: Scenario) -> list[str]:
    rtts = sorted({p.rtt for p in s.pairs})
    cases = [c.name for c in s.cases]
    shown = ", ".join(f"`{c}`" for c in cases[:12]) + (f" and {len(cases) - 12} more" if len(cases) > 12 else "")
    return [f"- bottleneck {s.bottleneck.rate_mbit:g} Mbit/s ({s.bottleneck.link.kind}), buffer {_buffer(s)}",
            f"- {s.topology.pairs} pair(s), RTTs {', '.join(_ms(r) for r in rtts)}",
            f"- cases ({len(cases)}): {shown}",
            f"- {s.repetitions} repetition(s), order {s.order}, seed {s.seed}"]


def _what_runs(e: Experiment) -> list[str]:
    out: list[str] = []
    if e.kind == "matrix":
        m = load_matrix(str(e.matrix_path))
        out += [f"A matrix, `{m.path.relative_to(paths.REPO_ROOT)}`: every combination of its axes is a setting, "
                f"each repetition of a setting a keyed cell ({m.spec.iterations} by default; the paper ran "
                f"{m.spec.paper_iterations or 'an unstated number'}).", "",
                "| axis | option | values |", "|---|---|---|"]
        out += [f"| {name} | {f'`{ax.option}=`' if ax.option else '(none)'} | {', '.join(ax.labels(name))} |"
                for name, ax in m.spec.axes.items()]
        if m.spec.defaults:
            out += ["", "Parameters the paper leaves unstated, as chosen here:", ""]
            out += [f"- {k}: {v}" for k, v in m.spec.defaults.items()]
        return out
    if e.kind == "scenario":
        p = e.parts[0]
        s = load_scenario(p.path) if p.path else parse_scenario(p.data)
        where = f"`{p.path.relative_to(paths.REPO_ROOT)}`" if p.path else "written in the experiment file"
        return [f"One scenario, {where}:", "", *scenario_lines(s)]
    if e.spec.axes:
        over = f" (its scenario over the axes {', '.join(e.spec.axes)}: one part per combination)"
    else:
        grids = [", ".join(p.axes) for p in e.spec.parts or [] if p.axes]
        over = f" (a scenario over the axes {'; '.join(grids)} among them: one part per combination)" if grids else ""
    out += [f"{len(e.parts)} parts{over}, each a scenario run and keyed on its own; `SELECT=` picks them by name "
            f"or tag.", "",
            "| part | tags | bottleneck | RTTs | cases |", "|---|---|---|---|---|"]
    for p in e.parts:
        s = load_scenario(p.path) if p.path else parse_scenario(p.data)
        tags = ", ".join(sorted(p.tags - {p.name}))
        rtts = ", ".join(_ms(r) for r in sorted({x.rtt for x in s.pairs}))
        out.append(f"| `{p.name}` | {tags} | {s.bottleneck.rate_mbit:g} Mbit/s {s.bottleneck.link.kind}, "
                   f"{_buffer(s)} | {rtts} | {len(s.cases)} |")
    return out


def paper_values(e: Experiment) -> list[str]:
    """The paper's values the repository holds for a matrix (results/reference/<matrix>.yaml), as a table."""
    if e.kind != "matrix":
        return []
    spec = load_matrix(str(e.matrix_path)).spec
    ref = REFERENCE_DIR / f"{spec.reference or spec.name}.yaml"
    if not ref.is_file():
        return []
    data = yaml.safe_load(ref.read_text())
    rows = data.get("rows") or []
    if not rows:
        return []
    cols = list(rows[0])
    out = ["## The paper's values", "", f"{data.get('source', '')} (`{ref.relative_to(paths.REPO_ROOT)}`); "
           "the report prints them beside ours.", "",
           "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(str(r.get(c, "")) for c in cols) + " |" for r in rows]
    if (paths.REPO_ROOT / "docs" / "results" / spec.name / "snapshot.json").is_file():
        out += ["", "Ours beside them, value by value with each verdict, from one run of the main job: "
                    "[Table 1 at a glance](../results.md)."]
    return out + [""]


def experiment_page(e: Experiment) -> str:
    s = e.spec
    r = s.reproduces
    lines = [f"# {s.id}: {s.title}", "",
             f"**Reproduces:** {r.paper}, {r.figure}." + (f"  **The paper's values:** {r.values}." if r.values else ""),
             "", re.sub(r"\s+", " ", s.what).strip(), "",
             "## Run it", "", "```sh", f"make {e.target}", "```", "",
             f"It takes {OPTIONS[e.kind]}, and every experiment's {KNOBS}.  Its file: "
             f"`{e.path.relative_to(paths.REPO_ROOT)}`.  Measured here: {s.time_here}.", "",
             "## What runs", "", *_what_runs(e), "",
             "## What it writes", "",
             f"The report `{s.report_of.name}`: {s.report_of.what}; under `results/{e.output}/`, with every run's "
             "record, capture and traces.  `make report` rebuilds it from that archive.", "",
             *paper_values(e)]
    return "\n".join(lines).rstrip() + "\n"


def experiment_pages() -> dict[str, str]:
    """experiments/<name>.md -> its page, ordered by experiment id, for every experiment file."""
    return {f"experiments/{e.target}.md": experiment_page(e) for e in experiments_in_order()}


def notebook_pages() -> list[str]:
    """The notebook's pages (docs/notebook/<name>.md) in the order the site's navigation lists them
    (mkdocs.yml), so that the index and the navigation cannot disagree."""
    nav = (paths.REPO_ROOT / "mkdocs.yml").read_text()
    return re.findall(r"^\s*- [^:\n]+: notebook/([\w-]+)\.md\s*$", nav, re.M)


def notebook_index() -> str:
    """The notebook's index for docs/measurements.md: each page's title and its dated entries, newest
    first, read from the pages' headings when the site is built (so it cannot drift from them)."""
    from markdown.extensions.toc import slugify, unique
    out = []
    for name in notebook_pages():
        text = (paths.REPO_ROOT / "docs" / "notebook" / f"{name}.md").read_text()
        title = next(ln[2:].strip() for ln in text.splitlines() if ln.startswith("# "))
        ids: set[str] = set()
        entries, fence = [], False
        for ln in text.splitlines():
            fence ^= ln.startswith("```")
            if not fence and (m := re.match(r"^(#{1,6}) (.*?)\s*$", ln)):
                anchor = unique(slugify(m.group(2), "-"), ids)
                if m.group(1) == "##":
                    entries.append(f"[{m.group(2)}](notebook/{name}.md#{anchor})")
        out += [f"**[{title}](notebook/{name}.md)** ({len(entries)} entries)", ""]
        out += [f"- {e}" for e in reversed(entries)] + [""]
    return "\n".join(out)
