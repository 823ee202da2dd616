"""What any matrix's report says beside its tables about what ran, read from its plan and its runs:

    - <settings> unavailable     a setting chosen but not run (its control not in the kernel under
                                 test), a line per reason, the settings' values axis by axis
    - <value> ran `<control>`    a value of the shown settings that names a congestion control:
                                 the one it ran (the plan's runs_as, else itself) and what that is
    - <value> beside <column>    a value shown beside another value's paper column, and why
    - N settings off the grid    a setting with a value the matrix file does not list
    - captures checked           how many runs' captures tshark read, and whether they agreed

A report kind adds its own notes after these (Table 1: the order of the arms).  Nothing here
depends on which paper the matrix reproduces: it reads the plan's fields and the runs' records.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..ccas import CC_LABELS
from ..plan_record import MatrixPlan, PlannedCell
from .archive import run_summaries_of
from .capturecheck import agreement_line
from .settings_table import on_grid

#: Why a matrix's capture was not checked (sslab.matrix.plan.checks_capture).
UNCHECKED_WHY = "outside the sample of cells: the matrix file's capture_check_every and capture_check_per_setting"


def _label(plan: MatrixPlan, value: str) -> str:
    return plan.labels.get(value, value)


def unavailable_notes(plan: MatrixPlan) -> list[str]:
    """A line per reason the plan could not run some settings, not one per setting: "BBRv2 (8 settings:
    buffer 1BDP, 2BDP; large_rtt 25ms, 50ms, 100ms, 200ms): **unavailable** ...: the reason."  The
    value every such setting shares that the reason names (the control the kernel lacks) names the
    line; the other axes' values say where."""
    groups: dict[str, list[dict[str, str]]] = {}
    for u in plan.unavailable:
        groups.setdefault(u.reason, []).append(u.setting)
    notes = []
    for reason, settings in groups.items():
        axes = list(dict.fromkeys(a for st in settings for a in st))
        values = {a: list(dict.fromkeys(st[a] for st in settings if a in st)) for a in axes}
        named = [a for a in axes if len(values[a]) == 1 and re.search(rf"\b{re.escape(values[a][0])}\b", reason)]
        rest = "; ".join(f"{a} {', '.join(values[a])}" for a in axes if a not in named)
        where = f"{len(settings)} setting{'s' if len(settings) != 1 else ''}" + (f": {rest}" if rest else "")
        what = f"{', '.join(_label(plan, values[a][0]) for a in named)} ({where})" if named else where
        notes.append(f"- {what}: **unavailable**, not run and not substituted: {reason}.")
    return notes


def shown_values(settings: list[dict[str, str]]) -> list[str]:
    """Every value of @settings, in the order they first appear, axis by axis."""
    axes = list(dict.fromkeys(a for st in settings for a in st))
    return list(dict.fromkeys(st[a] for a in axes for st in settings if a in st))


def runs_as_notes(plan: MatrixPlan, shown: list[str]) -> list[str]:
    """What each shown value that names a congestion control ran (itself, or plan.runs_as's), and what
    that is.  A value names one when the plan runs it as another or the kernel under test offers it."""
    notes = []
    for value in shown:
        if value not in plan.runs_as and value not in plan.available_ccas:
            continue
        runs = plan.runs_as.get(value, value)
        notes.append(f"- {_label(plan, value)} ran `{runs}`" + (f", {CC_LABELS[runs]}" if runs in CC_LABELS else "")
                     + ".")
    return notes


def beside_notes(plan: MatrixPlan, shown: list[str]) -> list[str]:
    """Why a shown value stands beside another value's paper column (plan.paper_beside)."""
    return [f"- {_label(plan, value)} is shown beside the paper's {_label(plan, b['column'])} values: {b['note']}"
            for value, b in plan.paper_beside.items() if value in shown]


def off_grid_notes(plan: MatrixPlan, settings: list[dict[str, str]]) -> list[str]:
    """A line on the settings with a value the matrix file does not list (given on the command line):
    no paper value is beside them and no mean over the grid counts them."""
    n = sum(1 for st in settings if not on_grid(plan.axis_values, st))
    return [f"- {n} setting(s) beside the paper's grid (a value the matrix file does not list): no paper value, "
            f"and left out of the averages."] if n else []


def capture_note(cells: list[tuple[PlannedCell, Path]]) -> str:
    """The line on the cells' captures: how many runs tshark read (a sample: UNCHECKED_WHY), how many
    agreed with our parser on every flow (the runs as the report's other passes read them, once)."""
    return agreement_line([run for _, d in cells for run, _ in run_summaries_of(d)], UNCHECKED_WHY)


def plan_notes(plan: MatrixPlan, cells: list[tuple[PlannedCell, Path]]) -> list[str]:
    """The notes above for the plan and its current @cells (the settings they show)."""
    settings = list({tuple(sorted(c.setting.items())): c.setting for c, _ in cells}.values())
    shown = shown_values(settings)
    return [*unavailable_notes(plan), *runs_as_notes(plan, shown), *beside_notes(plan, shown),
            *off_grid_notes(plan, settings), capture_note(cells)]
