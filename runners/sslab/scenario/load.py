"""Reading scenarios: YAML files (with `extends:`), case templates, and the plan handed to a substrate."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..ccas import start_version_of, with_hystart_of_suss
from ..records import Plan, read_plan
from .axes import AxesError, combinations, labels_of, parse_axes
from .model import Case, FlowSpec, Scenario, ScenarioError

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def substitute(value: Any, params: dict[str, Any]) -> Any:
    if isinstance(value, str):
        whole = _PLACEHOLDER.fullmatch(value)
        if whole and whole[1] in params:
            return params[whole[1]]
        return _PLACEHOLDER.sub(lambda m: str(params.get(m[1], m[0])), value)
    if isinstance(value, list):
        return [substitute(v, params) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, params) for k, v in value.items()}
    return value


def expand_cases(raw: Any) -> list[dict]:
    """`cases` may be a list of cases, or one template with `axes` (sslab.scenario.axes)."""
    if isinstance(raw, list):
        return raw
    if not isinstance(raw, dict):
        raise ScenarioError("cases: must be a list of cases or a template with axes")
    if "matrix" in raw:
        raise ScenarioError("cases.matrix: the axes of a case template are `cases.axes` (the one axis "
                            "syntax of scenario, series and matrix files; docs/experiments.md, \"Axes\")")
    extra = set(raw) - {"flows", "axes", "name", "module_params"}
    if extra:
        raise ScenarioError(f"cases: unknown keys {sorted(extra)}")
    try:
        axes = parse_axes(raw["axes"], "cases.axes") if raw.get("axes") else {}
    except AxesError as e:
        raise ScenarioError(str(e)) from None
    out = []
    for params in combinations(axes) if axes else [{}]:
        name = raw.get("name") or "-".join(labels_of(axes, params)) or "case"
        case = {"name": substitute(name, params), "flows": substitute(raw.get("flows"), params), "params": params}
        if "module_params" in raw:
            case["module_params"] = substitute(raw["module_params"], params)
        out.append(case)
    return out


def case_labels(data: dict) -> dict[str, list[str]]:
    """The labels of each axis of a scenario's case template (@data, its plain data): what a
    selection word may name to narrow the cases ({} for a list of cases or no axes)."""
    raw = data.get("cases")
    if not isinstance(raw, dict) or not raw.get("axes"):
        return {}
    try:
        axes = parse_axes(raw["axes"], "cases.axes")
    except AxesError as e:
        raise ScenarioError(str(e)) from None
    return {name: axis.labels(name) for name, axis in axes.items()}


def narrow_cases(data: dict, words: set[str]) -> dict:
    """@data with each case axis that has values labelled by @words narrowed to those (in the
    file's order); an axis none of @words names stays whole.  The cases that remain are the ones
    the whole file has by those names, so a run of them is keyed as theirs."""
    labels = case_labels(data)
    narrowed = {}
    for name, own in labels.items():
        keep = [i for i, label in enumerate(own) if label in words]
        if keep and len(keep) < len(own):
            narrowed[name] = keep
    if not narrowed:
        return data
    axes = dict(data["cases"]["axes"])
    for name, keep in narrowed.items():
        spec = axes[name]
        if isinstance(spec, dict):
            axes[name] = {**spec, "values": [spec["values"][i] for i in keep]}
        else:
            axes[name] = [spec[i] for i in keep]
    return {**data, "cases": {**data["cases"], "axes": axes}}


def start_axis(data: dict) -> str | None:
    """The case axis of @data whose value is a flow's congestion control alone (E1's `cc`: a flow's
    `cc: "{cc}"`): the axis a start may be added to (with_start).  None when there is none, or more
    than one (E6's incumbents and its fifth flow: which one a start would join is the file's to say)."""
    raw = data.get("cases")
    if not isinstance(raw, dict) or not isinstance(raw.get("axes"), dict):
        return None
    used = {m[1] for f in raw.get("flows") or [] if isinstance(f, dict) and isinstance(f.get("cc"), str)
            and (m := _PLACEHOLDER.fullmatch(f["cc"]))}
    axes = [a for a in raw["axes"] if a in used]
    return axes[0] if len(axes) == 1 else None


def with_start(data: dict, axis: str, name: str) -> dict:
    """@data with the start @name a value of its case axis @axis, after the file's own (itself when the
    axis has it already): a start the file does not list runs beside the ones it does.  Refused
    (ScenarioError) for an axis whose values set several parameters (a mapping each): a start there
    needs the file's other parameters with it."""
    spec = data["cases"]["axes"][axis]
    values = spec.get("values") if isinstance(spec, dict) else spec
    if not isinstance(values, list) or any(isinstance(v, dict) for v in values):
        raise ScenarioError(f"cases.axes.{axis}: its values set several parameters each; a start it does not "
                            f"list ({name}) needs them too: add it to the file")
    if name in values:
        return data
    spec = {**spec, "values": [*values, name]} if isinstance(spec, dict) else [*values, name]
    return {**data, "cases": {**data["cases"], "axes": {**data["cases"]["axes"], axis: spec}}}


def scenario_file_data(path: Path | str) -> dict:
    """A scenario file's data as one mapping, its `extends:` followed."""
    return _read_yaml(Path(path))


def _loc(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (("." if out else "") + str(part))
    return out


def field_errors(e: ValidationError) -> list[str]:
    """Every error pydantic collected, one line each: the field's path, the message, what was given."""
    lines = []
    for err in e.errors():
        where = _loc(err["loc"]) or "(top level)"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown field"
        elif not err["type"].startswith("value_error") and "input" in err:
            given = repr(err["input"])
            msg += f" (got {given if len(given) <= 60 else given[:57] + '...'})"
        lines.append(f"  {where}: {msg}")
    return lines


def yaml_error(path: Path, e: yaml.YAMLError) -> str:
    """A YAML syntax error as an editor's location: FILE:LINE:COLUMN: what is wrong."""
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    problem = getattr(e, "problem", None) or str(e)
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
    context = getattr(e, "context", None)
    text = f"{where}: not valid YAML: {problem}"
    if context and getattr(e, "context_mark", None) is not None:
        cm = e.context_mark
        text += f" ({context} at line {cm.line + 1}, column {cm.column + 1})"
    if mark is not None and getattr(mark, "buffer", None):
        line = mark.buffer.splitlines()[mark.line] if mark.line < len(mark.buffer.splitlines()) else ""
        text += f"\n  {line}\n  {' ' * mark.column}^"
    return text


def read_yaml_file(path: Path, error: type[Exception]) -> Any:
    """YAML from @path; a missing file or a syntax error raises @error naming file, line and column."""
    try:
        return yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except yaml.YAMLError as e:
        raise error(yaml_error(path, e)) from None


def parse_scenario(data: Any, source: str = "<scenario>") -> Scenario:
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: a scenario is a mapping of fields")
    data = dict(data)
    if "cases" in data:
        data["cases"] = expand_cases(data["cases"])
    try:
        return Scenario.model_validate(data)
    except ValidationError as e:
        lines = field_errors(e)
        raise ScenarioError(f"{source}: invalid scenario ({len(lines)} error{'s' if len(lines) > 1 else ''})\n"
                            + "\n".join(lines)) from None


#: Fields an extending file replaces whole instead of merging into: a case template's
#: axes and flows belong together (merging new `axes` into the parent's would keep
#: the parent's axes).
REPLACED_WHOLE = ("cases",)


def _merge(base: dict, over: dict, top: bool = True) -> dict:
    out = dict(base)
    for k, v in over.items():
        deep = isinstance(v, dict) and isinstance(out.get(k), dict) and not (top and k in REPLACED_WHOLE)
        out[k] = _merge(out[k], v, top=False) if deep else v
    return out


def _read_yaml(path: Path, seen: tuple[Path, ...] = ()) -> dict:
    """Read a scenario file, following `extends: other.yaml` (relative to it)."""
    if path.resolve() in seen:
        raise ScenarioError(f"{path}: extends itself (through {', '.join(map(str, seen))})")
    if not path.exists():
        raise ScenarioError(f"{path}: no such scenario file")
    data = read_yaml_file(path, ScenarioError)
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: a scenario is a mapping of fields")
    parent = data.pop("extends", None)
    if parent is None:
        return data
    return _merge(_read_yaml(path.parent / parent, seen + (path.resolve(),)), data)


def inline_scenario_data(data: dict, where: Path, source: str) -> dict:
    """A scenario written inside another file (an experiment file's `scenario:`) as one
    self-contained mapping: its `extends:` is followed relative to @where, that file's directory."""
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: a scenario is a mapping of fields")
    data = dict(data)
    parent = data.pop("extends", None)
    return data if parent is None else _merge(_read_yaml(where / parent), data)


def scenario_from_dump(data: dict) -> Scenario:
    """A Scenario from its own model_dump (numbers already in seconds and Mbit/s)."""
    return Scenario.model_validate(data, context={"canonical": True})


def load_scenario(path: Path | str) -> Scenario:
    path = Path(path)
    return parse_scenario(_read_yaml(path), str(path))


def start_offset(s: Scenario, run_index: int, flow_index: int, flow: FlowSpec) -> float:
    """Seconds @flow (flow @flow_index of run @run_index) starts after its nominal start (see Variation).

    Drawn from its own stream per (seed, run, flow), so adding a flow or a
    run never moves another's offset.
    """
    limit = s.variation.start_offset
    span = s.pairs[flow.pair - 1].rtt if limit == "rtt" else float(limit)
    if span <= 0:
        return 0.0
    digest = hashlib.sha256(f"sslab-start-offset/{s.seed}/{run_index}/{flow_index}".encode()).digest()
    return round(int.from_bytes(digest[:8], "big") / 2**64 * span, 6)


def trace_offset(s: Scenario, rep: int) -> float:
    """Seconds into the link's rate trace at which the runs of repetition @rep begin (see Variation).

    One draw per (seed, repetition): every case of a repetition meets the
    channel in the same state (variants are compared on common draws), and
    a scenario split into several files with one seed draws the same."""
    trace = s.bottleneck.rate_trace()
    if trace is None:
        return 0.0
    if s.variation.trace_offset != "random":
        return float(s.variation.trace_offset) % (trace.period_ms / 1e3)
    digest = hashlib.sha256(f"sslab-trace-offset/{s.seed}/{rep}".encode()).digest()
    # Whole bins, so a run begins where a bin does.
    nbins = len(trace.rates_mbit)
    return round(int.from_bytes(digest[:8], "big") % nbins * trace.bin_ms / 1e3, 6)


def link_plan(s: Scenario) -> dict:
    """The bottleneck's link model for the guest: kind, shaper, the trace's bins, and the last hop's
    stages each way (sslab.records, "A link as stages"), in the order a packet meets them: towards
    the clients its bursts, its loss and its varying delay; from them (the ACKs) its bursts and loss."""
    link = s.bottleneck.link
    trace = s.bottleneck.rate_trace()

    def bursts(x):
        return [] if x is None else [{"stage": "bursts", "min_ms": round(x.min * 1e3, 6),
                                      "max_ms": round(x.max * 1e3, 6), "packets": x.packets}]

    def loss(x):
        # In percent, as netem takes it; a chain's p and r, or one rate (p alone, r None).
        if x is None:
            return []
        return [{"stage": "loss", "p_percent": round((x.rate if x.rate is not None else x.p) * 100, 6),
                 "r_percent": None if x.r is None else round(x.r * 100, 6)}]

    variation = [] if link.delay_variation is None else [{
        "stage": "delay_variation", "bin_ms": round(link.delay_variation.bin * 1e3),
        "extra_ms": link.delay_variation.extra_ms()}]
    return {
        "kind": link.kind, "preset": link.preset,
        # A varying rate needs HTB (see sslab.scenario.links); a constant one keeps netem's exact spacing.
        "shaper": "htb" if trace is not None else "netem",
        "trace": None if trace is None else {
            "source": trace.source, "sha256": trace.sha256, "bin_ms": trace.bin_ms,
            "period_ms": trace.period_ms, "mean_mbit": round(trace.mean_mbit, 6),
            "rates_mbit": list(trace.rates_mbit)},
        "rate_tolerance": link.rate_tolerance,
        "down": bursts(link.aggregation.down) + loss(link.loss.down) + variation,
        "up": bursts(link.aggregation.up) + loss(link.loss.up),
    }


def to_plan(s: Scenario) -> Plan:
    """The scenario compiled into its plan (sslab.records.Plan, standard library only: what the host,
    the guest and the cell store read), every quantity resolved; validated once, here.  Its
    fidelity is the substrate's to set (sslab.experiment.plan.for_substrate)."""
    order = s.run_order()
    link = link_plan(s)
    return read_plan({
        "name": s.name,
        "seed": s.seed,
        "topology": {"kind": s.topology.kind, "pairs": s.topology.pairs, "backend": s.topology.backend,
                     "mtu": s.topology.mtu, "lans": s.topology.lans, "sender_qdisc": s.topology.sender_qdisc,
                     "offloads": s.topology.offloads, "socket_buffers": s.topology.socket_buffers},
        "bottleneck": {"rate_mbit": s.bottleneck.rate_mbit, "buffer_pkts": s.buffer_packets, "link": link,
                       "netem": s.bottleneck.netem},
        "pairs": [{"rtt_ms": p.rtt * 1e3} for p in s.pairs],
        "addresses": {k: str(v) for k, v in s.topology.addresses.model_dump().items()},
        "capture": {**s.capture.model_dump(), "immediate": None},
        # The host model, resolved per pair (sslab.scenario.hosts; the guest builds it with qdiscs).
        "hosts": {"model": s.hosts.model, "describe": s.hosts.describe(),
                  "pairs": [{"server": s.host_params(i, "server").plan(), "client": s.host_params(i, "client").plan()}
                            for i in range(1, len(s.pairs) + 1)]},
        "runs": [run_plan(s, i, rep, case, link["trace"] is not None) for i, (rep, case) in enumerate(order)],
        # The file's words the reports print beside what is resolved above (sslab.analysis.setting).
        "asked": {"description": s.description, "buffer": s.bottleneck.buffer.describe(),
                  "repetitions": s.repetitions, "order": s.order, "module_params": dict(s.module_params)},
        # With variation.entropy off every boot draws the same random numbers.
        "entropy_seed": s.seed if s.variation.entropy else 0,
        "fidelity": None,
    }, f"the plan of {s.name}")


def run_plan(s: Scenario, index: int, rep: int, case: Case, traced: bool) -> dict:
    """Run @index of @s (repetition @rep of @case) for the plan, every quantity resolved: the module's
    parameters as set for it, and each flow's congestion control by the name the kernel knows, its
    start offset, its hint in bytes per second and the version of its start it runs (SUSS's, SEARCH's,
    cubic_hs's HyStart), so that the guest and every report read them from the plan."""
    module_params = with_hystart_of_suss({**s.module_params, **case.module_params})
    flows = []
    for k, f in enumerate(case.flows):
        cc = f.cc_to_run
        # A flow's suss_version is what it asks; its pinned name (cc) and its version say what runs.
        flows.append({**f.model_dump(exclude={"suss_version"}), "cc": cc, "start_offset_s": start_offset(s, index, k, f),
                      **({"version": v} if (v := start_version_of(cc, module_params)) is not None else {}),
                      **({"hint_bytes_per_s": round(f.hint_mbit(s.bottleneck.rate_mbit) * 1e6 / 8)}
                         if f.hint is not None else {})})
    return {"index": index, "rep": rep, "case": case.name, "params": case.params,
            **({"trace_offset_s": trace_offset(s, rep)} if traced else {}),
            "module_params": module_params, "flows": flows}


def read_template_file(path: Path, section: str, model, error: type[Exception]) -> tuple[Any, Any]:
    """A file of two sections: @section, validated by the pydantic @model, and `scenario`, a template.

    Returns (spec, template).  Errors name the file, and every field error is listed as
    @section.<field>."""
    data = read_yaml_file(path, error)
    if not isinstance(data, dict) or set(data) != {section, "scenario"}:
        raise error(f"{path}: a {section} file has exactly two sections, {section} and scenario")
    try:
        spec = model.model_validate(data[section])
    except ValidationError as e:
        lines = [f"  {section}.{ln.strip()}" for ln in field_errors(e)]
        raise error(f"{path}: invalid {section} ({len(lines)} error{'s' if len(lines) > 1 else ''})\n"
                    + "\n".join(lines)) from None
    return spec, data["scenario"]
