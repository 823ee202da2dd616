"""The hosted-CI workflow (.github/workflows/reproduce-table1.yml) run here, step by step, as its jobs
would run on the hosted runner: every `run:` script with bash -e in the checkout, the upload and the
download of the artifact standing in as copies, the checkout, the image cache and the container's
packages as what this tree, its cache and this host already are.  The main job narrowed to CUBIC, one iteration (the inputs a researcher
would type), then the verify job on what it uploaded: its report rebuilt from the archive alone and a
cell run again, the same bytes.  `make lint-workflows` (in `make test`) checks the file's syntax."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from sslab.paths import REPO_ROOT

pytestmark = pytest.mark.vm

WORKFLOW = REPO_ROOT / ".github" / "workflows" / "reproduce-table1.yml"
#: What the checkout and the cache steps give on the hosted runner, this tree and its cache give here.
STANDING_IN = ("actions/checkout@", "actions/cache@")
HOST_STEP = "What the README asks of a host"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


class Runner:
    """One workflow run: its inputs, its artifact store (a directory per artifact name) and its env."""

    def __init__(self, workflow: dict, tmp: Path, inputs: dict[str, str]):
        self.workflow = workflow
        self.inputs = inputs
        self.store = tmp / "artifact-store"
        self.store.mkdir()
        # The workflow's results and artifact directories, here under tmp: not the checkout's results/.
        self.overrides = {"SSLAB_RESULTS": str(tmp / "results"), "ARTIFACT_DIR": str(tmp / "artifact")}
        self.env = {**{k: str(v) for k, v in workflow.get("env", {}).items()}, **self.overrides}

    def value(self, expr: str) -> str:
        """An expression of the kinds this workflow uses; any other fails the test (so a new one is seen)."""
        if m := re.fullmatch(r"inputs\.(\w+)(?:\s*\|\|\s*'([^']*)')?", expr):
            return self.inputs.get(m.group(1)) or (m.group(2) or "")
        if m := re.fullmatch(r"env\.(\w+)", expr):
            return self.env[m.group(1)]
        if expr == "github.run_id":
            return "4242"
        raise AssertionError(f"an expression this test cannot evaluate: {expr!r}")

    def text(self, s) -> str:
        return EXPRESSION.sub(lambda m: self.value(m.group(1)), str(s))

    def run_job(self, name: str) -> list[str]:
        """Run job @name's steps in order; returns a log line per step."""
        log = []
        for step in self.workflow["jobs"][name]["steps"]:
            uses = step.get("uses", "")
            if uses.startswith(STANDING_IN):
                log.append(f"{uses}: this checkout")
                continue
            # Every step here succeeds, so always() is the only condition met the same way.
            assert step.get("if", "always()") == "always()", f"a condition this test cannot evaluate: {step['if']!r}"
            if step.get("name") == HOST_STEP:
                # The hosted container's packages: this host has them (the README asks them of it);
                # installing them from a test would change the machine under the other tests.
                missing = [c for c in ("make", "git", "python3") if not shutil.which(c)]
                assert not missing and "make git python3 python3-venv" in step["run"], missing
                log.append(f"{HOST_STEP}: this host")
                continue
            args = {k: self.text(v) for k, v in step.get("with", {}).items()}
            if uses.startswith("actions/upload-artifact@"):
                src = Path(args["path"])
                files = [p for p in src.rglob("*") if p.is_file()] if src.exists() else []
                if args.get("if-no-files-found") == "error":
                    assert files, f"upload {args['name']}: no files in {src}"
                shutil.copytree(src, self.store / args["name"], symlinks=True)
                log.append(f"upload {args['name']}: {len(files)} files")
            elif uses.startswith("actions/download-artifact@"):
                shutil.copytree(self.store / args["name"], Path(args["path"]), symlinks=True)
                log.append(f"download {args['name']} -> {args['path']}")
            elif uses:
                raise AssertionError(f"a step this test cannot stand in for: {uses}")
            else:
                env = {**os.environ, **self.env, **{k: self.text(v) for k, v in step.get("env", {}).items()}}
                res = subprocess.run(["bash", "-e", "-c", self.text(step["run"])], cwd=REPO_ROOT, env=env,
                                     capture_output=True, text=True, timeout=3600)
                assert res.returncode == 0, (f"step {step.get('name', step['run'][:40])!r} exited {res.returncode}\n"
                                             f"{res.stdout[-4000:]}\n{res.stderr[-4000:]}")
                log.append(f"{step.get('name')}: exit 0\n{res.stdout}")
        return log


def selection_dirs(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.glob("*/plans"))


def test_the_hosted_ci_workflow_runs_the_main_job_and_verifies_its_artifact(tmp_path):
    workflow = yaml.safe_load(WORKFLOW.read_text())
    assert list(workflow["jobs"]) == ["table1", "verify"] and workflow["jobs"]["verify"]["needs"] == "table1"
    runner = Runner(workflow, tmp_path, {"cca": "cubic", "iter": "1", "sample": "1"})

    runner.run_job("table1")
    artifact = runner.store / "table1-4242"
    (sel,) = selection_dirs(artifact)
    cells = [p for p in (sel / "cells").iterdir() if not p.name.startswith(".")]
    assert len(cells) == 8, cells  # CUBIC: 2 buffers x 4 RTTs, one iteration (each cell SUSS off and on)
    assert all((c / "cell.json").exists() for c in cells)
    first_reports = sorted((sel / "reports").iterdir())

    log = runner.run_job("verify")
    unpacked = Path(runner.overrides["ARTIFACT_DIR"])
    (sel2,) = selection_dirs(unpacked)
    # The report rebuilt from the downloaded archive alone: a new report directory beside the run's,
    # with the same tables and data (its pages load plotly.js from beside them, not from results/).
    reports = sorted(p for p in (sel2 / "reports").iterdir() if p.name != "latest")
    new = [p for p in reports if p.name not in {q.name for q in first_reports}]
    assert len(new) == 1, reports
    old = [p for p in reports if p not in new and (p / "table.md").exists()]
    assert old, reports
    assert (new[0] / "flows.csv").read_bytes() == (old[-1] / "flows.csv").read_bytes()
    # The same table.md, but that its claims' evidence names where the archive now lies.
    rebuilt = (new[0] / "table.md").read_text()
    assert "## The paper's claims these runs test" in rebuilt and str(sel2) in rebuilt
    assert rebuilt.replace(str(sel2), f"results/table1/{sel2.name}") == (old[-1] / "table.md").read_text()
    # One cell run again from its recorded plan: the same bytes, ACK by ACK and packet by packet.
    verdicts = [p for p in (Path(runner.overrides["SSLAB_RESULTS"]) / "verify").glob("*/verify.json")
                if p.parent.name != "latest"]
    assert len(verdicts) == 1, log[-1]
    record = json.loads(verdicts[0].read_text())
    assert record["cells"] and all(c["same"] for c in record["cells"]), record
    assert len(record["cells"]) == 1
    # The verify job keeps its own results as an artifact.
    assert (runner.store / "table1-verify-4242").is_dir()


def test_the_workflow_lint_finds_a_broken_workflow_and_passes_ours(tmp_path):
    import sys
    bad = tmp_path / "bad.yml"
    # An unquoted variable (shellcheck SC2086) and an input the workflow does not declare.
    bad.write_text("on:\n  workflow_dispatch:\n    inputs:\n      cca: {type: string}\n"
                   "jobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n"
                   "      - run: make reproduce-table1 CCA=$CCA ITER=${{ inputs.iterations }}\n")
    res = subprocess.run([sys.executable, "-m", "sslab.cli.workflowlint", str(bad)], capture_output=True, text=True,
                         cwd=REPO_ROOT)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "SC2086" in res.stdout and "iterations" in res.stdout
    res = subprocess.run([sys.executable, "-m", "sslab.cli.workflowlint"], capture_output=True, text=True, cwd=REPO_ROOT)
    assert res.returncode == 0 and "1 workflow file(s) clean" in res.stdout, res.stdout + res.stderr
