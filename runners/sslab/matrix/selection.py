"""Selection: the make variables (CCA=cubic BUF=2BDP RTT=100 ITER=3) as axis values."""

from __future__ import annotations

import re
from typing import Any

from .spec import MatrixError, MatrixSpec, settings

__all__ = ["resolve_selection", "selection_id", "settings", "validate_options"]


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


def resolve_selection(spec: MatrixSpec, options: dict[str, str]) -> dict[str, list[str]]:
    """Axis -> chosen values, from OPTION=v1,v2 pairs; unknown options or values are refused."""
    by_option = {a.option: name for name, a in spec.axes.items()}
    chosen: dict[str, list[str]] = {}
    for opt, raw in options.items():
        if opt not in by_option:
            raise MatrixError(f"{spec.name} has no option {opt} (it has: {', '.join(sorted(by_option))})")
        axis = by_option[opt]
        values = spec.axes[axis].values
        picked = []
        for part in str(raw).split(","):
            if not part.strip():
                continue
            v = _match(part, values)
            if v is None:
                raise MatrixError(f"{opt}={part.strip()}: not a value of {spec.name}'s {axis} "
                                  f"(one of: {', '.join(values)})")
            if v not in picked:
                picked.append(v)
        if not picked:
            raise MatrixError(f"{opt} is empty")
        chosen[axis] = picked
    return chosen


def selection_id(spec: MatrixSpec, chosen: dict[str, list[str]]) -> str:
    """The matrix directory's name: which part of the matrix this is (not how many iterations)."""
    parts = [f"{spec.axes[a].option.lower()}-{'+'.join(_norm(v) for v in vals)}"
             for a, vals in chosen.items() if vals != spec.axes[a].values]
    return "_".join(parts) if parts else "all"


def validate_options(pairs: list[str]) -> dict[str, str]:
    out = {}
    for p in pairs:
        if "=" not in p:
            raise MatrixError(f"--set takes OPTION=value, got {p!r}")
        k, v = p.split("=", 1)
        out[k.strip().upper()] = v.strip()
    return out
