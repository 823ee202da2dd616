"""Axes: the one way a file says "every combination of these values".

A case template (`cases.axes`), an experiment's parts (its `axes:`) and a matrix
file (`matrix.axes`) all write their axes alike:

    axes:
      size: [1MB, 5MB]                       # short form: the values
      start:                                 # a mapping value sets several parameters
        - {start: std, cc: cubic_std}        #   together; the one named like the axis
        - {start: 1x, cc: cubic_blitz, hint: 1x}   #   is its label
      large_cc:                              # long form: the values and how they are chosen
        values: [cubic, bbr]
        option: CCA                          #   the make variable (and --option) choosing some
        cca: true                            #   they name congestion controls
        runs_as: {cubic: cubic_hs}           #   a value whose flows run another control; a list:
                                             #   the first the kernel under test offers
      layout: {option: LAYOUT, default: [five-pairs], values: [...]}  # only these unless asked

What the combinations are for is the file's business: a template's are its
cases, a series' its scenarios, a matrix's its settings (each run for its
iterations).  The axes are crossed in the file's order, each axis's values in
the file's order; a label names a value wherever one is chosen (SELECT=, CCA=).
"""

from __future__ import annotations

import itertools
import re
from typing import Any, Collection

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: A value of an axis: a scalar, or a mapping of the parameters it sets (one named like the axis).
Value = str | int | float | dict[str, Any]


class Axis(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    values: list[Value] = Field(min_length=1)
    #: The make variable (and command-line option) that chooses some of the values by label.
    option: str | None = Field(default=None, pattern=r"^[A-Z][A-Z0-9_]*$")
    #: The values name congestion controls: checked against the kernel under test.
    cca: bool = False
    #: (cca axes) a value whose flows run another congestion control than the one it names: the
    #: column CUBIC runs cubic_hs, Linux's CUBIC ACK for ACK (kernel/README.md, the oracle) in the
    #: HyStart rounds of the SUSS version's kernel (5.19's under SUSS 2024, as the paper's flows),
    #: where the kernel's own `cubic` has 6.1.192's.  Names, keys and labels keep the value.
    #: A list is an order of preference, the first the kernel under test offers: BBRv2's column runs
    #: Google's `bbr2` where a researcher's kernel has it, else our `bbr2_sslab` ([bbr2, bbr2_sslab]).
    runs_as: dict[str, str | list[str]] = Field(default_factory=dict)
    #: The labels that run when the option does not choose: the others run only when asked for
    #: (Table 1's testbed layouts: the paper's five pairs, a pair a flow on LAYOUT=own-pairs).
    #: None: every value.
    default: list[str] | None = Field(default=None, min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _short_form(cls, data: Any) -> Any:
        """`[a, b]` is `{values: [a, b]}`."""
        return {"values": data} if isinstance(data, list) else data

    @field_validator("values")
    @classmethod
    def _mappings_not_empty(cls, v: list[Value]) -> list[Value]:
        if any(isinstance(x, dict) and not x for x in v):
            raise ValueError("a mapping value sets at least one parameter")
        return v

    def runs(self, value: str, offered: Collection[str] | None = None) -> str:
        """The congestion control a value's flows run on a kernel that offers @offered: of a list, the
        first offered (none offered, or @offered unknown: the last, the harness's own)."""
        choice = self.runs_as.get(value, value)
        if isinstance(choice, str):
            return choice
        return next((c for c in choice if offered is not None and c in offered), choice[-1])

    def may_run(self, value: str) -> list[str]:
        """Every congestion control a value's flows may run, in the order of preference."""
        choice = self.runs_as.get(value, value)
        return [choice] if isinstance(choice, str) else list(choice)

    def named(self, name: str, given: str) -> str:
        """The label @given names on the axis @name: one of its own, case-blind and with blanks
        ignored, a bare number taking the values' unit (RTT=100 names 100ms); else a value beside
        them, written the way the axis writes its values (0.5bdp -> 0.5BDP, 30 -> 30ms)."""
        labels = self.labels(name)
        g = squeezed(given)
        for label in labels:
            own = squeezed(label)
            if g == own:
                return label
            m = re.fullmatch(r"([0-9.]+)([a-z]+)", own)
            if m and re.fullmatch(r"[0-9.]+", g) and float(g) == float(m[1]):
                return label
        unit = _shared_unit(labels)
        m = _NUMBER_UNIT.fullmatch(given.strip())
        if unit and m and (not m[2] or m[2].lower() == unit.lower()):
            return f"{float(m[1]):g}{unit}"
        return given.strip()

    def label(self, name: str, value: Value) -> str:
        """What names @value of the axis @name: itself, or (a mapping) its parameter @name."""
        return str(value[name] if isinstance(value, dict) else value)

    def labels(self, name: str) -> list[str]:
        return [self.label(name, v) for v in self.values]

    def default_labels(self, name: str) -> list[str]:
        """The labels that run when nothing chooses among them (default, else every one)."""
        return list(self.default) if self.default is not None else self.labels(name)

    def params(self, name: str, value: Value) -> dict[str, Any]:
        """The parameters @value sets.  A key other mapping values of the axis set and this one
        does not is null here (a flow field left out: `hint` of a start that takes none)."""
        if not isinstance(value, dict):
            return {name: value}
        every = {k for v in self.values if isinstance(v, dict) for k in v}
        return {k: value.get(k) for k in sorted(every)}


_NUMBER_UNIT = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)")


def squeezed(v: Any) -> str:
    """@v as labels are compared (and a matrix's directory names them): lower case, no blanks."""
    return re.sub(r"\s+", "", str(v)).lower()


def _shared_unit(labels: list[str]) -> str | None:
    """The unit every label of an axis is written in ('ms' for 25ms, 50ms, ...), else None."""
    units = {m[2] for v in labels if (m := _NUMBER_UNIT.fullmatch(str(v).strip()))}
    if len(units) == 1 and all(_NUMBER_UNIT.fullmatch(str(v).strip()) for v in labels):
        return units.pop() or None
    return None


class AxesError(ValueError):
    """Axes that cannot be crossed (a mapping value without its label, labels that repeat)."""


def parse_axes(raw: Any, where: str) -> dict[str, Axis]:
    """@raw (a file's `axes:` mapping) as Axis models; @where names it in errors."""
    if not isinstance(raw, dict) or not raw:
        raise AxesError(f"{where}: a mapping of axis names to their values")
    axes = {name: spec if isinstance(spec, Axis) else _validated(spec, f"{where}.{name}")
            for name, spec in raw.items()}
    check_axes(axes, where)
    return axes


def _validated(spec: Any, where: str) -> Axis:
    from pydantic import ValidationError
    try:
        return Axis.model_validate(spec)
    except ValidationError as e:
        first = e.errors()[0]
        raise AxesError(f"{where}: {first['msg'].removeprefix('Value error, ')}") from None


def check_axes(axes: dict[str, Axis], where: str) -> None:
    """In every axis (named @where.<name> in errors), every mapping value carries its label (the
    parameter named like the axis), and labels are unique."""
    for name, axis in axes.items():
        for v in axis.values:
            if isinstance(v, dict) and name not in v:
                raise AxesError(f"{where}.{name}: a mapping value must set {name!r} (its label); got {v}")
        labels = axis.labels(name)
        dup = sorted({x for x in labels if labels.count(x) > 1})
        if dup:
            raise AxesError(f"{where}.{name}: values repeat: {', '.join(dup)}")
        if axis.default is not None and (odd := [d for d in axis.default if d not in labels]):
            raise AxesError(f"{where}.{name}: default names {', '.join(odd)}, not among its values "
                            f"({', '.join(labels)})")


def combinations(axes: dict[str, Axis], chosen: dict[str, list[str]] | None = None) -> list[dict[str, Any]]:
    """The parameters of every combination, the first axis slowest.

    @chosen narrows an axis to the values with those labels, kept in the file's order; a label
    the file does not have joins as a plain value after the file's (CCA=reno over a file of cubic
    and bbr), in the order asked.  An axis not chosen takes its default values (Axis.default), else
    every one."""
    chosen = chosen or {}
    lists = []
    for name, axis in axes.items():
        if name not in chosen and axis.default is None:
            lists.append([(name, v) for v in axis.values])
            continue
        asked = [str(x) for x in chosen[name]] if name in chosen else axis.default
        own = [v for v in axis.values if axis.label(name, v) in asked]
        extra = [x for x in asked if x not in axis.labels(name)]
        lists.append([(name, v) for v in own + extra])
    out = []
    for combo in itertools.product(*lists):
        params: dict[str, Any] = {}
        for name, value in combo:
            params.update(axes[name].params(name, value))
        out.append(params)
    return out


def labels_of(axes: dict[str, Axis], params: dict[str, Any]) -> list[str]:
    """The labels of the combination @params, one per axis in the axes' order."""
    return [str(params[name]) for name in axes]
