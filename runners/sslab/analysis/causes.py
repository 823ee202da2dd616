"""Why a value of the paper is not reproduced: the causes tried, as data (experiments/causes/<name>.yaml).

A report that judges the paper's values (Table 1's) prints, beside each value it does not reproduce or
cannot decide, what was tried about it: each candidate cause changed one at a time (a knob, a layout,
a kernel: `sslab matrix compare` of the archive with and without it), what it did to that value, and
whether it is the cause, ruled out, or only moves it.  A value with no entry says so: "no cause tested
yet".  The file:

    causes:
      - where: {large_cc: bbr, buffer: 1BDP}     # the settings it is about (a key left out: any)
        values: [small off, small on]             # the values (Comparison.short; left out: all)
        verdict: cause | ruled out | moves it     # what the runs found
        cause: "the senders' TSO bursts"          # the candidate, in a few words
        found: "..."                               # what changing it did, with the numbers
        runs: "docs/notebook/table1.md, ..."          # where the runs and the command are recorded
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .. import paths
from .verdict import Comparison

CAUSES_DIR = paths.REPO_ROOT / "experiments" / "causes"


class CauseTried(BaseModel):
    """One candidate cause tried about some of the paper's values: where (the settings), which values, the
    verdict, what changed, what it did, where the runs are."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    where: dict[str, str] = Field(default_factory=dict)
    values: list[str] | None = None
    verdict: Literal["cause", "ruled out", "moves it"]
    cause: str
    found: str
    runs: str

    def about(self, setting: dict[str, str], short: str) -> bool:
        return all(setting.get(k) == v for k, v in self.where.items()) and \
            (self.values is None or short in self.values)


class Causes(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    causes: list[CauseTried] = Field(default_factory=list)


def load_causes(name: str, where: Path = CAUSES_DIR) -> Causes:
    """experiments/causes/@name.yaml's causes (none when there is no such file); a file that does not
    parse is an error naming the field."""
    path = where / f"{name}.yaml"
    if not path.is_file():
        return Causes()
    try:
        return Causes.model_validate(yaml.safe_load(path.read_text()) or {})
    except ValidationError as e:
        first = e.errors()[0]
        raise ValueError(f"{path}: {'.'.join(map(str, first['loc']))}: {first['msg']}") from None


def causes_md(causes: Causes, judged: list[tuple[dict[str, str], Comparison]]) -> list[str]:
    """The report's section: every value not reproduced (or not decided), each with the causes tried
    about it (@judged: each comparison with its setting's axis values)."""
    rest = [(s, c) for s, c in judged if not c.reproduced]
    if not rest:
        return []
    lines = ["## Why the values not reproduced differ", "",
             "Each value the verdict does not call reproduced, with every candidate cause tried about it, one change "
             "at a time, and what it did (experiments/causes/).", ""]
    for setting, c in rest:
        mine = [x for x in causes.causes if x.about(setting, c.short)]
        head = f"- **{c.where}, {c.short or c.what}** ({c.verdict_text()}; ours {c.ours:.3g}, the paper's {c.paper:g}):"
        if not mine:
            lines.append(f"{head} no cause tested yet.")
            continue
        lines.append(head)
        lines += [f"  - {x.verdict}: {x.cause}. {x.found} ({x.runs})" for x in mine]
    return lines + [""]
