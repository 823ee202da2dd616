"""What a figure ran under: substrate, clock, host model, kernel, HyStart and SUSS version (and shared boots).

Every report prints one line of this for its runs (the project's rule: a
figure is reported with the substrate, clock, host model, kernel, HyStart
and SUSS version it ran under).  Read from the archive alone: each run's
meta.json (the substrate, its clock, the kernel), its plan (the host model:
sslab.analysis.setting) and its flows' records (the SUSS version each
cubic_suss flow ran, the HyStart each cubic_hs flow ran).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..records import offload_segments, read_runs_index
from ..ccas import (SEARCH_CCAS, SEARCH_VERSIONS, SUSS_VERSIONS, param_default, recorded_hystart, recorded_suss_version,
                    search_thresh_pct, search_version_of)
from .archive import run_summary, written_as
from .setting import Setting, setting_of


def _suss_text(versions: set[int]) -> str:
    return ", ".join(SUSS_VERSIONS[v] for v in sorted(versions)) if versions else "no SUSS flow"


def _versions(rows: list[dict] | None) -> set[int]:
    return {v for r in rows or [] if (v := recorded_suss_version(r)) is not None}


#: The starts written from an IETF draft (docs/starts.md): the draft, and the module parameter that
#: chooses its revision's constant (Rapid Start's K, in 1/36; unrecorded: the module's default).
DRAFT_STARTS = {"cubic_rapid": ("Rapid Start", "draft-kazuho-ccwg-rapid-start", "rapid_k36")}


def search_text(cc: str, module_params: dict) -> str:
    """What a SEARCH flow of @cc ran with the run's @module_params (unset: the module's defaults): its
    version, THRESH, window and bins, and its exit."""
    def param(name: str) -> int:
        return int(module_params.get(name, param_default(name)))

    major = int(search_version_of(cc, module_params).split(".")[0])
    thresh = param("search_thresh_pct") or search_thresh_pct(major)
    exit_ = ("the exit alone" if param("search_exit_only") else
             "cwnd rolled back" if major == 3 else "a drain")
    return (f"{cc}: {SEARCH_VERSIONS[major]}, THRESH {thresh / 100:.2f}, a window of "
            f"{param('search_window_x10') / 10:g} initial RTTs in {param('search_bins')} bins "
            f"(+{param('search_extra_bins')}), {exit_} on exit")


#: The starts that stand for the Blitzstart report's Google QUIC sender (kernel/README.md, "Blitzstart's hint").
QUIC_STARTS = ("cubic_std", "cubic_blitz")


def quic_text(cc: str, module_params: dict) -> str:
    """Which CUBIC and slow start a QUIC stand-in of @cc ran with the run's @module_params: a run from
    before 2 Dec 2026 records neither parameter, its module having Linux's CUBIC and HyStart only."""
    n = int(module_params.get("std_connections", 1))
    cubic = {1: "Linux's CUBIC", 2: "Google QUIC's CUBIC of two connections"}.get(n, f"CUBIC of {n} connections")
    start = ("HyStart's ACK-train and delay exits (Linux's)" if int(module_params.get("std_ack_train", 1))
             else "the delay exit alone (Google QUIC's hybrid slow start)")
    return f"{cc}: {cubic}, {start}"


def _draft_starts(runs: list[dict]) -> set[str]:
    """What each draft start and each QUIC stand-in that ran follows, from the runs' records (their
    flows and module parameters as run)."""
    out = set()
    for run in runs:
        for f in run.get("flows", []):
            cc = f.get("cc_used") or f.get("cc")
            if cc in SEARCH_CCAS:
                out.add(search_text(cc, run.get("module_params") or {}))
            if cc in QUIC_STARTS:
                out.add(quic_text(cc, run.get("module_params") or {}))
            if cc in DRAFT_STARTS:
                what, draft, param = DRAFT_STARTS[cc]
                k = Fraction(int((run.get("module_params") or {}).get(param, param_default(param))), 36)
                out.add(f"{cc}: {what}, {draft} (K = {k})")
    return out


def _draft_text(texts: set[str]) -> str:
    return f"; {'; '.join(sorted(texts))}" if texts else ""


def _hystarts(rows: list[dict] | None) -> set[str]:
    return {h for r in rows or [] if (h := recorded_hystart(r)) is not None}


def _hystart_text(hystarts: set[str]) -> str:
    """cubic_hs's HyStart (its rounds) as the flows recorded it; nothing when no cubic_hs flow ran, and
    "not recorded" is not said: runs from before hs_round_fix ran Linux 6.1.192's."""
    return f"; cubic_hs: {' and '.join(f'{h} HyStart' for h in sorted(hystarts))}" if hystarts else ""


def kernel_text(meta: dict) -> str:
    """A researcher's kernel a run ran on (KERNEL_SOURCE=, KERNEL_PATCHES=, MODULES=), in a few words;
    "" for ours."""
    uml = (meta.get("image") or {}).get("uml") or {}
    mine = uml.get("researcher")
    if not mine:
        return ""
    parts = []
    if "patches" in mine:
        parts.append(f"your patches {', '.join(mine['patches']['series'])}")
    if "modules_source" in mine:
        parts.append(f"your modules {', '.join(sorted(mine.get('modules') or {})) or '?'}")
    source = (uml.get("source") or {}).get("package", "")
    return (f"; kernel UML {uml.get('release', '?')}" + (f" from {source}" if "source" in mine else "")
            + (f" with {' and '.join(parts)}" if parts else ""))


def kernel_ran_text(meta: dict) -> str:
    """The kernel a run ran on, as "ran under" says it: a researcher's (kernel_text), else ours: the UML
    kernel's release and the Debian source it was built from, or a VM's Debian kernel; "" unrecorded."""
    if mine := kernel_text(meta):
        return mine
    image = meta.get("image") or {}
    uml = image.get("uml") or {}
    if meta.get("substrate") == "uml" and uml.get("release"):
        version = (uml.get("source") or {}).get("version")
        return f"; kernel UML {uml['release']}" + (f" (Debian's {version} source, this project's patches)"
                                                   if version else "")
    release = (image.get("kernel") or {}).get("release")
    return f"; kernel {release}" if release else ""


#: What each socket-buffer setting other than the testbed's own (raised) means, as "ran under" says it.
SOCKET_BUFFERS_TEXT = {"linux": "tcp_wmem and tcp_rmem as Linux sets them",
                       "linux-senders": "the servers' tcp_wmem as Linux sets it, the clients' raised"}


def _testbed(meta: dict, setting: Setting) -> str:
    segments = offload_segments(setting.offloads)
    whole = "whole" if segments is None else f"of at most {segments} segments"
    offloads = "" if segments == 1 else \
        f"; offloads {setting.offloads} (TSO/GSO segments {whole}, 1 Gbit/s where the host model gives no rate)"
    buffers = "" if setting.socket_buffers == "raised" else \
        f"; socket buffers {setting.socket_buffers} ({SOCKET_BUFFERS_TEXT[setting.socket_buffers]})"
    return (f"substrate {meta['substrate']}, clock {meta.get('clock', '?')}; host model "
            f"{setting.hosts}{offloads}{buffers}{kernel_ran_text(meta)}")


def run_conditions(meta: dict, setting: Setting, rows: list[dict] | None = None,
                   runs: list[dict] | None = None) -> str:
    """One run's conditions: @meta its meta.json, @setting its setting (sslab.analysis.setting), @rows
    anything carrying a flow's suss_version, @runs its runs' records (which draft a draft start followed)."""
    return (f"{_testbed(meta, setting)}; SUSS: {_suss_text(_versions(rows))}{_hystart_text(_hystarts(rows))}"
            f"{_draft_text(_draft_starts(runs or []))}")


def _runs_of(run_dir: Path) -> list[dict]:
    out = run_dir / "job" / "out"
    index = out / "runs.json"
    if not index.exists():
        return []
    return [run_summary(out / "runs" / e["tag"] / "run.json") for e in read_runs_index(index)]


@dataclass(frozen=True)
class _RunDirConditions:
    testbed: str
    versions: frozenset[int]
    hystarts: frozenset[str]
    drafts: frozenset[str]
    #: It ran after other repetitions in a shared boot.
    after_others: bool


#: _run_dir_conditions by a directory and its meta.json's identity (inode, size, time): a report says
#: its conditions several times (its head, each claim's), and each time read every run record of every
#: cell again; a directory run again is read again.
_CONDITIONS: dict[tuple, _RunDirConditions] = {}


def _run_dir_conditions(d: Path) -> _RunDirConditions | None:
    """What conditions_of takes from one run directory (None: no meta.json)."""
    meta_path = d / "meta.json"
    written = written_as(meta_path)
    if written is None:
        return None
    key = (str(d), written)
    if key not in _CONDITIONS:
        meta = json.loads(meta_path.read_text())
        runs = _runs_of(d)
        flows = [f for r in runs for f in r.get("flows", [])]
        _CONDITIONS[key] = _RunDirConditions(
            _testbed(meta, setting_of(d)), frozenset(_versions(flows)), frozenset(_hystarts(flows)),
            frozenset(_draft_starts(runs)), bool(meta.get("boot")) and not meta["boot"]["same_as_alone"])
    return _CONDITIONS[key]


def conditions_of(run_dirs: list[Path]) -> str:
    """The conditions of several runs (a report's scenarios, a matrix's cells) in one line: the
    testbed (substrate, clock, host model) once when every run agrees, else each distinct one with
    how many runs it holds; then every SUSS version any of them ran."""
    testbeds: dict[str, int] = {}
    versions: set[int] = set()
    hystarts: set[str] = set()
    drafts: set[str] = set()
    after = 0
    for d in run_dirs:
        one = _run_dir_conditions(Path(d))
        if one is None:
            continue
        testbeds[one.testbed] = testbeds.get(one.testbed, 0) + 1
        versions |= one.versions
        hystarts |= one.hystarts
        drafts |= one.drafts
        after += one.after_others
    if not testbeds:
        return "not recorded (no run's meta.json found)"
    where = next(iter(testbeds)) if len(testbeds) == 1 else \
        "; ".join(f"[{n} run(s)] {line}" for line, n in testbeds.items())
    shared = (f"; {after} of {sum(testbeds.values())} ran after other repetitions in a shared boot (BOOT_SHARE)"
              if after else "")
    return f"{where}; SUSS: {_suss_text(versions)}{_hystart_text(hystarts)}{_draft_text(drafts)}{shared}"


def provenance_of(run_dirs: list[Path]) -> dict[str, str]:
    """Where and when runs ran, from their meta.json: the machines (CPU model, cores, AMX), the
    dates (first to last start, UTC) and the code's commits (short; "+dirty" for a tree with
    uncommitted changes).  "not recorded" for what no run says."""
    machines: dict[str, int] = {}
    dates: list[str] = []
    commits: set[str] = set()
    for d in run_dirs:
        meta_path = Path(d) / "meta.json"
        if not meta_path.exists():
            continue
        meta = json.loads(meta_path.read_text())
        host = meta.get("host") or {}
        if host:
            line = (f"{host.get('cpu_model', '?')} ({host.get('cores', '?')} cores, "
                    f"{'AMX' if host.get('amx') else 'no AMX'}, XSAVE {host.get('xstate_bytes', '?')} B)")
            machines[line] = machines.get(line, 0) + 1
        if meta.get("started"):
            dates.append(meta["started"])
        if (code := meta.get("code") or {}).get("commit"):
            commits.add(commit_text(code, 7))
    machine = ("; ".join(machines) if len(machines) == 1 else
               "; ".join(f"{m} [{n} run(s)]" for m, n in machines.items())) or "not recorded"
    when = (f"{min(dates)[:16]}Z to {max(dates)[:16]}Z" if dates and min(dates)[:16] != max(dates)[:16]
            else f"{dates[0][:16]}Z" if dates else "not recorded")
    return {"machine": machine, "dates": when, "commits": ", ".join(sorted(commits)) or "not recorded"}


#: The testbed's own settings (each knob's "else" value, sslab.scenario.knobs): a run that departs from
#: one ran under a knob the command line set (a cause run: SENDER_QDISC=fq), not the experiment as
#: its file has it.  An experiment whose file sets one itself (Table 1's socket buffers, linux-senders)
#: has its own (own_settings_of, sslab.matrix.experiments), which departures takes instead.
OWN_SETTINGS = {"hosts": "ideal", "lans": "veth", "sender_qdisc": "none", "offloads": "off",
                "socket_buffers": "raised", "suss_version": param_default("suss_version")}


def setting_fields(s: Setting) -> dict[str, Any]:
    """The settings a knob sets (OWN_SETTINGS' names) as @s has them."""
    return {"hosts": s.hosts_model, "lans": s.lans, "sender_qdisc": s.sender_qdisc, "offloads": s.offloads,
            "socket_buffers": s.socket_buffers, "suss_version": s.suss_version}


def departures(run_dirs: list[Path], own: Mapping[str, Collection] | None = None) -> list[str]:
    """How @run_dirs depart from their experiment's own settings (@own: each knob's values its file gives;
    None: OWN_SETTINGS) or ran on a researcher's kernel, each with how many runs, from their meta.json;
    [] when none does."""
    allowed = {k: {v} for k, v in OWN_SETTINGS.items()} if own is None else \
        {k: set(own.get(k, {OWN_SETTINGS[k]})) for k in OWN_SETTINGS}
    seen: dict[str, int] = {}
    for d in run_dirs:
        meta_path = Path(d) / "meta.json"
        if not meta_path.exists():
            continue
        meta = json.loads(meta_path.read_text())
        found = [f"{k} {v}" for k, v in setting_fields(setting_of(Path(d))).items() if v not in allowed[k]]
        if kernel_text(meta):
            found.append(f"kernel{kernel_text(meta)[len('; kernel'):]}")
        for line in found:
            seen[line] = seen.get(line, 0) + 1
    return [f"{line} ({n} run(s))" for line, n in seen.items()]


def commit_text(code: dict, digits: int = 12) -> str:
    """A run's commit as reports print it (meta.json's "code"): its first @digits hex digits, and
    "+dirty" for a tree with changes beyond it; empty when it names none."""
    return (code.get("commit") or "")[:digits] + ("+dirty" if code.get("dirty") and code.get("commit") else "")
