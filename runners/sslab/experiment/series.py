"""Several scenario files, each run into its own run directory, up to N at once.

Experiments such as E9 (one scenario per link) are a series of ordinary
scenario runs.  Under UML each run gets its own substrate pinned to its own
core, so runs in parallel give the same bytes as run one after another; on a
real clock the caller must pass one substrate (never two experiments at once).
"""

from __future__ import annotations

import queue
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

from ..scenario import load_scenario
from ..substrate.preflight import check_offered
from .run import run_scenario


def write_scenarios(scenarios: list[dict], dest: Path) -> list[Path]:
    """Each scenario (plain data) as its own file in @dest (<scenario name>.yaml): what run_series
    runs, and the record of what ran."""
    files = []
    for data in scenarios:
        f = dest / f"{data['name']}.yaml"
        f.write_text(yaml.safe_dump(data, sort_keys=False))
        files.append(f)
    return files


def write_series_scenarios(series, settings: list[dict], dest: Path) -> list[Path]:
    """The scenarios of a series file's @settings, written by write_scenarios."""
    return write_scenarios([series.scenario_data(setting) for setting in settings], dest)


def run_series(scenarios: list[Path], kind_of, substrates: list, reps: int | None = None,
               knobs: dict | None = None, backend: str | None = None) -> list[Path]:
    """Run every file in @scenarios into results/<kind_of(path)>/<id>/; returns the run
    directories in the order of @scenarios.  Up to len(@substrates) at once."""
    # A congestion control the kernel under test lacks stops the series before its first run.
    check_offered(substrates[0], {cc for path in scenarios for cc in load_scenario(path).congestion_controls()})
    free: queue.Queue = queue.Queue()
    for s in substrates:
        free.put(s)

    def one(path: Path) -> Path:
        substrate = free.get()
        try:
            return run_scenario(path, kind_of(path), substrate, reps=reps, backend=backend, knobs=knobs)
        finally:
            free.put(substrate)

    with ThreadPoolExecutor(max_workers=len(substrates)) as pool:
        return list(pool.map(one, scenarios))
