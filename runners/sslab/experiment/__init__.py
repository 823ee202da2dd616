"""Experiments: one scenario run end to end on a substrate, and its run record.

    run     scenario -> plan -> job on the substrate -> archive (meta.json,
            job/out/, report via analysis) -> manifest.json with every
            artifact's sha256
    series  an experiment's cells (its parts, planned by sslab.matrix.parts), each
            into its own run directory, in parallel under UML (on an inventory's
            hosts: sslab.matrix.parts)
    timing  what a run takes: the generous guesses timeouts are made from, and this host's
            measured ratio, from which expected times come
    spec    experiment files (experiments/*.yaml): what each reproduces, what
            it runs, its report; the README's table of experiments
    compile an experiment's chosen parts as they run: each validated once and compiled
            to its plan, nothing written to a file

May import: scenario, substrate, papers, analysis and the leaves (paths, ccas).
Not matrix or cli.
"""

from .archive import gzip_in_place
from .run import (code_version, run_scenario, run_scenario_into, run_scenarios_in_one_boot, scenario_as_run, sha256,
                  write_manifest)
from .timing import estimate_seconds
from .spec import Experiment, ExperimentError, experiment_files, experiments_table, load_experiment

__all__ = ["Experiment", "ExperimentError", "experiment_files", "experiments_table", "load_experiment",
           "code_version", "gzip_in_place", "estimate_seconds", "run_scenario", "run_scenario_into",
           "run_scenarios_in_one_boot", "scenario_as_run", "sha256",
           "write_manifest"]
