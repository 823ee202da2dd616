"""A series: one scenario template and the axes that fill it, one scenario per combination (a
*setting*), as an experiment file writes it (its `scenario:` with `axes:` beside it, or a part's):

    scenario: {... "{rate}" ... "{rtt}" ...}
    axes:                              # sslab.scenario.axes: one scenario per combination
      name:                            # an axis of mappings: each line one setting
        - {name: bw-10mbit, group: bandwidth, rate: 10mbit, rtt: 100ms, bdp: 1}

A setting's name is its labels joined by "-" (an axis called `name` gives it whole), and `{name}`
in the template is that name.  Every setting's scenario is built and checked when its experiment is
loaded, so a bad setting is refused before anything runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .axes import Axis, check_axes, combinations, labels_of
from .load import parse_scenario, start_axis, substitute
from .model import Scenario, ScenarioError


class SeriesSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    #: One scenario per combination (sslab.scenario.axes); a setting's name is its labels joined by "-".
    axes: dict[str, Axis] = Field(min_length=1)

    @model_validator(mode="after")
    def _settings_named_once(self):
        check_axes(self.axes, "axes")
        names = [s["name"] for s in self.settings()]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"setting names repeat: {dup}")
        return self

    def settings(self) -> list[dict[str, Any]]:
        """Every setting's parameters, `name` among them, in the file's order."""
        out = []
        for params in combinations(self.axes):
            name = params["name"] if "name" in self.axes else "-".join(labels_of(self.axes, params))
            out.append({**params, "name": str(name)})
        return out


class Series:
    def __init__(self, spec: SeriesSpec, template: dict, path: Path):
        self.spec, self.template, self.path = spec, template, path

    def settings(self) -> list[dict[str, Any]]:
        return self.spec.settings()

    def start_axis(self) -> str | None:
        """The axis whose value is each setting's start (E2's `cc`: its scenarios' flows run "{cc}",
        directly or through a case axis of that one value), so that a start may be added to it
        (with_start); None when there is none, or more than one."""
        case_axis = start_axis(self.template)
        cases = self.template.get("cases") if isinstance(self.template.get("cases"), dict) else {}
        found = []
        for name, axis in self.spec.axes.items():
            if any(isinstance(v, dict) for v in axis.values):
                continue
            placeholder = f"{{{name}}}"
            direct = any(isinstance(f, dict) and f.get("cc") == placeholder for f in cases.get("flows") or [])
            through = case_axis is not None and cases["axes"][case_axis] == [placeholder]
            if direct or through:
                found.append(name)
        return found[0] if len(found) == 1 else None

    def with_start(self, name: str) -> "Series":
        """The series with the start @name a value of its start axis, after the file's own: its
        settings with @name are the ones the file would have if it listed it."""
        axis = self.start_axis()
        if axis is None:
            raise ScenarioError(f"{self.path}: no axis of starts to add {name} to")
        own = self.spec.axes[axis]
        if name in own.values:
            return self
        axes = {**self.spec.axes, axis: own.model_copy(update={"values": [*own.values, name]})}
        return Series(self.spec.model_copy(update={"axes": axes}), self.template, self.path)

    def scenario_data(self, setting: dict) -> dict:
        """The setting's scenario as plain data (what an experiment's part compiles: sslab.experiment.compile)."""
        return substitute(self.template, setting)

    def scenarios(self) -> list[tuple[dict, Scenario]]:
        """(setting, scenario) for every setting, in the file's order, each validated."""
        return [(s, parse_scenario(self.scenario_data(s), f"{self.path} setting {s['name']}")) for s in self.settings()]
