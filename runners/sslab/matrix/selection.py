"""Selection: the make variables (CCA=cubic BUF=2BDP RTT=100 ITER=3) as axis values."""

from __future__ import annotations

import re
from typing import Any

from ..ccas import cc_name_refusal, is_cc_name
from ..scenario import KNOWN_CCAS, ScenarioError
from ..scenario.axes import combinations
from .spec import Matrix, MatrixError, MatrixSpec, settings

__all__ = ["resolve_selection", "selection_id", "settings"]


def _norm(v: Any) -> str:
    return re.sub(r"\s+", "", str(v)).lower()


def _match(given: str, values: list[str]) -> str | None:
    """The axis value @given names: exact (case-blind), or a bare number taking the values' unit."""
    g = _norm(given)
    for v in values:
        nv = _norm(v)
        if g == nv:
            return v
        m = re.fullmatch(r"([0-9.]+)([a-z]+)", nv)
        if m and re.fullmatch(r"[0-9.]+", g) and float(g) == float(m[1]):
            return v
    return None


_NUMBER_UNIT = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)")


def _shared_unit(values: list[str]) -> str | None:
    """The unit every value of an axis is written in ('ms' for 25ms, 50ms, ...), else None."""
    units = {m[2] for v in values if (m := _NUMBER_UNIT.fullmatch(str(v).strip()))}
    if len(units) == 1 and all(_NUMBER_UNIT.fullmatch(str(v).strip()) for v in values):
        return units.pop() or None
    return None


def _new_value(given: str, values: list[str]) -> str:
    """A value beside the axis's own, written the way the axis writes its values: a bare number
    takes the axis's unit, a unit takes the axis's spelling (0.5bdp -> 0.5BDP, 30 -> 30ms)."""
    unit = _shared_unit(values)
    m = _NUMBER_UNIT.fullmatch(given.strip())
    if unit and m and (not m[2] or m[2].lower() == unit.lower()):
        return f"{float(m[1]):g}{unit}"
    return given.strip()


def resolve_selection(matrix: Matrix, options: dict[str, str]) -> dict[str, list[str]]:
    """Axis -> chosen values, from OPTION=v1,v2 pairs.

    A value may be any valid one, not only the file's: the next question is
    often the cell beside the paper's.  A value the file does not list is
    checked by building the scenario it makes (a congestion control must be
    a name the harness knows; whether the kernel offers it is checked when
    planning).  Unknown options and invalid values are refused.
    """
    spec = matrix.spec
    by_option = {a.option: name for name, a in spec.axes.items() if a.option}
    chosen: dict[str, list[str]] = {}
    for opt, raw in options.items():
        if opt not in by_option:
            raise MatrixError(f"{spec.name} has no option {opt} (it has: {', '.join(sorted(by_option))})")
        axis = by_option[opt]
        values = spec.axes[axis].labels(axis)
        picked = []
        for part in str(raw).split(","):
            if not part.strip():
                continue
            v = _match(part, values) or _new_value(part, values)
            if v not in values and any(isinstance(x, dict) for x in spec.axes[axis].values):
                # A mapping value sets several parameters together: one the file does not list has none.
                raise MatrixError(f"{opt}={part.strip()}: {spec.name}'s {axis} is one of {', '.join(values)}")
            if v not in values:
                _check_new_value(matrix, axis, v, f"{opt}={part.strip()}")
            if v not in picked:
                picked.append(v)
        if not picked:
            raise MatrixError(f"{opt} is empty")
        chosen[axis] = picked
    return chosen


def _check_new_value(matrix: Matrix, axis: str, value: str, asked: str) -> None:
    spec = matrix.spec
    if spec.axes[axis].cca:
        if all(cc_name_refusal(cc) is not None for cc in spec.axes[axis].may_run(value)):
            raise MatrixError(f"{asked}: not a congestion control the harness knows "
                              f"(known: {', '.join(KNOWN_CCAS)}; a name of your own module: MODULES=dir)"
                              if is_cc_name(value) else f"{asked}: not a congestion-control name")
        return
    setting = combinations(spec.axes, {a: [value] if a == axis else spec.axes[a].labels(a)[:1] for a in spec.axes})[0]
    setting = {a: ("cubic" if a in spec.axes and spec.axes[a].cca and v not in KNOWN_CCAS else v)
               for a, v in setting.items()}
    try:
        matrix.scenario_for(setting, 0)
    except ScenarioError as e:
        raise MatrixError(f"{asked}: makes an invalid {spec.name} scenario: {_error_detail(e)}") from None


def _error_detail(e: ScenarioError) -> str:
    """A scenario's errors in one line, each reason once: the first field with it, and how many more
    ("cases[0].flows[1].start: cannot read time '-1s' (and 23 more fields)")."""
    lines = [ln.strip() for ln in str(e).splitlines()[1:]] or [str(e)]
    by_reason: dict[str, list[str]] = {}
    for ln in lines:
        field, sep, reason = ln.partition(": ")
        by_reason.setdefault(reason if sep else ln, []).append(field if sep else "")
    return "; ".join(f"{fields[0]}: {reason}" + (f" (and {len(fields) - 1} more fields)" if len(fields) > 1 else "")
                     if fields[0] else reason for reason, fields in by_reason.items())


def selection_id(spec: MatrixSpec, chosen: dict[str, list[str]]) -> str:
    """The matrix directory's name: which part of the matrix this is (not how many iterations)."""
    parts = [f"{(spec.axes[a].option or a).lower()}-{'+'.join(_norm(v) for v in vals)}"
             for a, vals in chosen.items() if vals != spec.axes[a].default_labels(a)]
    return "_".join(parts) if parts else "all"
