"""An experiment's chosen parts compiled to what runs: the one place a part becomes a plan.

    Experiment.choose / .overridden          the parts, as plain data (a file's, a series setting's,
                                             narrowed, a start added, fields set)
      --compile_parts(reps, backend, knobs)--> CompiledPart: its plan (every quantity resolved) and
                                             where its words came from

Each chosen part's data is set as the command line asks (sslab.experiment.run.as_run: the knobs,
another backend, other repetitions), validated once (a part the command line changes nothing of keeps the
validation the file's check gave it at load), and compiled to its plan; nothing is written
to a file on the way.  The plan is the record of what ran (each run directory's plan.json, the
validated model in its meta.json), so no scenario file is written beside the runs; the run's
meta.json names the file the part's words are in, its experiment, its part and what the command
line set.  A part that a field refuses is refused here, before any testbed boots (exit 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..scenario import ScenarioError, parse_scenario
from ..substrate.image import sha256_file
from .run import Compiled, as_run
from .spec import Experiment, ExperimentError, Part


@dataclass(frozen=True)
class CompiledPart:
    """A part of an experiment as it runs: its name, results/<kind>/ (where its key is linked), its
    compiled scenario, what its run's meta.json records of where it came from (source_of), and
    results/<store>/, the cell store its run lands in: the experiment's own, or beside it for a part
    the command line changed (a start the file does not list, a field set: Part.apart), so that such
    runs are archived apart."""
    name: str
    kind: str
    compiled: Compiled
    source: dict[str, Any]
    store: str


def compile_parts(exp: Experiment, parts: list[Part], reps: int | None = None, backend: str | None = None,
                  knobs: dict[str, Any] | None = None) -> list[CompiledPart]:
    """@parts of @exp, each set as the command line asks (@reps, @backend, @knobs) and validated
    once; refused (ExperimentError) when a field refuses its value."""
    out = []
    for part in parts:
        where = f"{part.name} with {part.given}" if part.given else f"{exp.path.name}: {part.name}"
        data = exp.data_of(part)
        run = as_run(data, reps, backend, knobs)
        try:
            # The file's check at load validated this very data: nothing of it changed, nothing to check again.
            s = part.checked if part.checked is not None and run == data else parse_scenario(run, where)
        except ScenarioError as e:
            raise ExperimentError(str(e)) from None
        out.append(CompiledPart(part.name, exp.kind_of(part), Compiled.of(s), source_of(exp, part),
                                f"{exp.output}{part.apart}"))
    return out


def source_of(exp: Experiment, part: Part) -> dict[str, Any]:
    """Where @part's words are: the file (a scenario file or the experiment file
    itself) with its sha256, the experiment and the part's name, and what the command line changed
    (the fields it set, the starts it added)."""
    f = Path(part.path or part.defined_in or exp.path)
    source: dict[str, Any] = {"path": str(f), "sha256": sha256_file(f), "experiment": str(exp.path),
                              "part": part.name}
    if part.given:
        source["set"] = part.given
    if part.added:
        source["added"] = list(part.added)
    return source
