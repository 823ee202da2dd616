"""Series files: one scenario template and the settings that fill it (experiments/scenarios/e8-astart.yaml).

    series:
      name: e8-astart
      settings:                        # one scenario each; `name` is required
        - {name: bw-10mbit, group: bandwidth, rate: 10mbit, rtt: 100ms, bdp: 1}
    scenario: {... "{rate}" ... "{rtt}" ...}

Every setting's scenario is built and checked when the file is loaded, so a
bad setting is refused before anything runs.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .load import parse_scenario, read_template_file, substitute
from .model import Scenario, ScenarioError


class SeriesSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    settings: list[dict] = Field(min_length=1)

    @field_validator("settings")
    @classmethod
    def _named(cls, v):
        names = [s.get("name") for s in v]
        if any(not isinstance(n, str) or not n for n in names):
            raise ValueError("every setting needs a name")
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"setting names repeat: {dup}")
        return v


class Series:
    def __init__(self, spec: SeriesSpec, template: dict, path: Path):
        self.spec, self.template, self.path = spec, template, path

    def scenario_data(self, setting: dict) -> dict:
        """The setting's scenario as plain data (what gets written beside its run)."""
        return substitute(self.template, setting)

    def scenarios(self, names: list[str] | None = None) -> list[tuple[dict, Scenario]]:
        """(setting, scenario) for the settings named (all when None), in the file's order."""
        chosen = [s for s in self.spec.settings if names is None or s["name"] in names]
        unknown = sorted(set(names or []) - {s["name"] for s in self.spec.settings})
        if unknown:
            raise ScenarioError(f"{self.path}: no setting {', '.join(unknown)} (known: "
                                f"{', '.join(s['name'] for s in self.spec.settings)})")
        return [(s, parse_scenario(self.scenario_data(s), f"{self.path} setting {s['name']}")) for s in chosen]


def load_series(path: Path | str) -> Series:
    path = Path(path)
    spec, template = read_template_file(path, "series", SeriesSpec, ScenarioError)
    series = Series(spec, template, path)
    series.scenarios()  # every setting must make a valid scenario
    return series
