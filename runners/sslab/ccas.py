"""Congestion-control names: the ones our module registers and the kernel's own; our module's parameters.

A leaf module (standard library only), imported on the host and in the
guest: the scenario model checks flow names and module parameters against
it and the plan names each SUSS flow's version and each cubic_hs flow's
HyStart with it, the image build lists what the kernel under test offers
with it, the guest checks the module with it.

Our names are read from the module's own registry, the starts' headers
(kernel/core/<start>.h: each declares its entry, SS_<START>_REGISTRY, with
one `SS_NAME(ident, "name", VARIANT, version)` line per name;
kernel/core/variants.h says what a line is), so that a new start is
registered in one place for the module and the harness.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

#: The algorithm core's directory: the starts' headers, the registry (variants.h) that reads them.
CORE = Path(__file__).resolve().parents[2] / "kernel" / "core"
_KERNEL = CORE.parent
_REGISTRY_ENTRY = re.compile(r"^#define (SS_\w+_REGISTRY)(?!\w)", re.M)
_VARIANT = re.compile(r"^\s*SS_VARIANT\(\s*(\w+)\s*,\s*(\d+)\s*,\s*(\w+)\s*\)", re.M)
_SS_NAME = re.compile(r'^\s*SS_NAME\(\s*\w+\s*,\s*"(\w+)"\s*,\s*(\w+)\s*,\s*(\w+)\s*\)', re.M)
_SS_VERSIONS = re.compile(r"^\s*SS_VERSIONS\(\s*(\w+)\s*,\s*(\w+)\s*\)", re.M)
_VERSION = re.compile(r'\bV\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(\d+)\s*,\s*"([^"]*)"\s*,\s*"((?:[^"\\]|\\.)*)"\s*\)')


def _macro_lines(text: str, start: int) -> str:
    """The lines of the #define at @start of @text (each but the last ends in a backslash)."""
    return re.match(r"(?:[^\n]*\\\n)*[^\n]*", text[start:]).group(0)


def _headers(kernel: Path) -> dict[Path, str]:
    """Every header of @kernel/core and its text, in name order."""
    return {h: h.read_text() for h in sorted((kernel / "core").glob("*.h"))}


def registry(kernel: Path = _KERNEL, headers: dict[Path, str] | None = None) -> tuple[tuple[str, str], ...]:
    """(header, entry) of every start, in the registry's order: the headers of @kernel/core (@headers:
    their texts, read already) that define an SS_<START>_REGISTRY, ordered by their first SS_VARIANT's
    number, with the entry's lines (the rule kernel/starts.sh builds the module's list by).  ValueError
    for a header of two entries, an entry with no variant, or two starts in one place."""
    found = []
    for header, text in (headers if headers is not None else _headers(kernel)).items():
        entries = list(_REGISTRY_ENTRY.finditer(text))
        if not entries:
            continue
        if len(entries) > 1:
            raise ValueError(f"kernel/core/{header.name}: two entries, one start a header: "
                             f"{', '.join(m[1] for m in entries)}")
        entry = _macro_lines(text, entries[0].start())
        variant = _VARIANT.search(entry)
        if variant is None:
            raise ValueError(f"kernel/core/{header.name}: {entries[0][1]} has no SS_VARIANT line")
        found.append((int(variant[2]), header.name, entry))
    places = [place for place, _, _ in found]
    if twice := sorted({p for p in places if places.count(p) > 1}):
        raise ValueError(f"kernel/core: two starts in place {twice[0]}: "
                         + ", ".join(h for p, h, _ in found if p == twice[0]))
    return tuple((header, entry) for _, header, entry in sorted(found))


def _registry_text(headers: dict[Path, str]) -> str:
    """Every start's entry, in the registry's order, as one text (@headers: every header's text)."""
    return "\n".join(entry for _, entry in registry(headers=headers))


def _list_body(headers: dict[Path, str], list_name: str, arg: str, what: str) -> tuple[Path, str]:
    """The header that defines the list macro @list_name(@arg), exactly one of @headers, and the macro's
    lines (they end in a backslash, its last does not); ValueError naming @what otherwise."""
    found = [(h, t) for h, t in headers.items() if f"#define {list_name}({arg})" in t]
    if len(found) != 1:
        raise ValueError(f"{what}: defined in {len(found)} headers, not one")
    header, text = found[0]
    return header, _macro_lines(text, text.index(f"#define {list_name}({arg})"))


@dataclass(frozen=True)
class StartVersion:
    """One version of a start, as its header declares it (`V(ID, pin, value, "name", "what it is")`
    of its SS_<START>_VERSIONS, kernel/core/sscore.h says what a line is)."""
    #: The variant it is a version of (SUSS, SEARCH) and the constant a registry name pins it by.
    variant: str
    ident: str
    #: What the start's own version parameter takes for it (suss_version 2024, search_version 3).
    value: int
    #: What a run record's flow calls it ("2024", "ours", "3.0"), and what it is, for the reports.
    name: str
    meaning: str


def parse_start_versions(kernel: Path) -> tuple[StartVersion, ...]:
    """Every start's versions, in the registry's SS_VERSIONS order, read from the lines the compiler
    expands (each start's header makes its constants from them)."""
    headers = _headers(kernel)
    return tuple(StartVersion(variant, ident, int(value), name, meaning)
                 for variant, list_name in _SS_VERSIONS.findall(_registry_text(headers))
                 for ident, _pin, value, name, meaning in _VERSION.findall(
                     _list_body(headers, list_name, "V", f"kernel/core: SS_VERSIONS({list_name})")[1]))


def registry_entries(text: str, versions: tuple[StartVersion, ...]) -> list[tuple[str, str, int | None]]:
    """(name, variant, pinned version or None) per SS_NAME line of a registry's @text, in order: a
    pin (SS_NAME's last field) is SS_VERSION_PARAM (the start's parameter's version) or one of
    @versions' constants, of the line's own variant, given as the value its parameter takes."""
    pins = {v.ident: v for v in versions}
    out = []
    for name, variant, pin in _SS_NAME.findall(text):
        if pin == "SS_VERSION_PARAM":
            out.append((name, variant, None))
            continue
        if pin not in pins:
            raise ValueError(f"kernel/core: {name}: unknown version {pin}")
        if pins[pin].variant != variant:
            raise ValueError(f"kernel/core: {name}: {pin} is not a version of {variant}")
        out.append((name, variant, pins[pin].value))
    return out


#: Every start's versions, as their headers declare them.
START_VERSIONS = parse_start_versions(_KERNEL)
_ENTRIES = registry_entries(_registry_text(_headers(_KERNEL)), START_VERSIONS)
#: Our module's congestion controls (kernel/, module tcp_sslab), in the module's order.
OUR_CCAS = tuple(name for name, _, _ in _ENTRIES)
#: The four slow starts of the SUSS paper and the HyStart/HyStart++ report.
SLOW_START_CCAS = OUR_CCAS[:4]
#: The kernel's own, as built into or shipped as modules with Debian's 6.1 kernel.
KERNEL_CCAS = ("reno", "cubic", "bbr", "bic", "cdg", "dctcp", "highspeed", "htcp", "hybla",
               "illinois", "lp", "nv", "scalable", "vegas", "veno", "westwood", "yeah")
#: Ours too, but registered only by a kernel that carries our patch 0005 (the rate sample's
#: tx_in_flight and lost, and a per-lost-packet callback), as the default UML kernel does: BBRv3 from
#: draft-06 and BBRv2 as Google's v2alpha set it (kernel/README.md, "bbr3 and BBRv2").  Debian's stock
#: kernel and the other KERNEL_SOURCE=s lack the patch: a run asking for one there is refused at
#: preflight.  BBRv2 is "bbr2_sslab" so that Google's own, "bbr2" (a researcher's patch), can run beside it.
HOOKED_CCAS = ("bbr3", "bbr2_sslab")
KNOWN_CCAS = OUR_CCAS + HOOKED_CCAS + KERNEL_CCAS
#: What a report says a congestion control is, where its name alone would mislead.
CC_LABELS = {"cubic_hs": "ours: Linux's CUBIC and HyStart, ACK for ACK the kernel's",
             "bbr": "Linux's BBRv1",
             "bbr2_sslab": "ours: BBRv2 as Google's v2alpha set it, written from its published facts",
             "bbr2": "Google's BBRv2 (v2alpha), from a researcher's kernel patch",
             "bbr3": "ours: BBRv3 from draft-ietf-ccwg-bbr-06"}
#: What Linux takes as a congestion control's name (TCP_CA_NAME_MAX is 16 bytes with the NUL).
_CC_NAME = re.compile(r"[a-z][a-z0-9_]{0,14}")
#: Set (by the Makefile's KERNEL_SOURCE=, KERNEL_PATCHES= and MODULES=) when the kernel under test is not ours.
RESEARCHER_KERNEL_ENV = ("SSLAB_KERNEL_SOURCE", "SSLAB_KERNEL_PATCHES", "SSLAB_MODULES")


def is_cc_name(name: str) -> bool:
    return bool(_CC_NAME.fullmatch(name))


def cc_name_refusal(name: str, env: dict[str, str] | None = None) -> str | None:
    """Why a flow or axis may not ask for congestion control @name, or None.

    Our kernel offers exactly KNOWN_CCAS, so any other name is refused at once.  A researcher's
    kernel (KERNEL_PATCHES=, MODULES=) may register more: any well-formed name passes here and is
    checked against what that kernel lists when it boots, before any run (substrate.preflight)."""
    if name in KNOWN_CCAS:
        return None
    env = os.environ if env is None else env
    if any(env.get(v) for v in RESEARCHER_KERNEL_ENV):
        return None if is_cc_name(name) else (
            f"{name!r} is not a congestion-control name (up to 15 of a-z, 0-9 and _, a letter first)")
    return (f"unknown congestion control {name!r}; known: {', '.join(KNOWN_CCAS)} (a name your own module "
            f"registers: MODULES=dir, README \"Test your own algorithm\")")

#: SUSS versions (SS_SUSS_VERSIONS, kernel/core/suss.h): the module parameter suss_version's values and
#: what they name.  2024: the authors' code behind the SIGCOMM'24 paper's numbers (the default); 2025:
#: their rewrite; 0: ours, written from the paper's text before their code was read.
SUSS_VERSIONS = {v.value: v.meaning for v in START_VERSIONS if v.variant == "SUSS"}
_SUSS_NAMES = {v.value: v.name for v in START_VERSIONS if v.variant == "SUSS"}
SUSS_DEFAULT_VERSION = 2024
#: The names that run SUSS (variant SUSS in the registry) and the version each pins: cubic_suss runs
#: the version of the module parameter (None), the others are pinned to one.
SUSS_CCAS = {name: pin for name, variant, pin in _ENTRIES if variant == "SUSS"}
#: The name that pins a version, for a flow that asks for one.
SUSS_PINNED = {v: cc for cc, v in SUSS_CCAS.items() if v is not None}


def suss_version_of(cc: str, module_params: dict | None = None) -> int | None:
    """The SUSS version a flow of @cc runs with the module's parameters @module_params (as set for
    the run; unset: the module's default), or None if @cc is not SUSS."""
    if cc not in SUSS_CCAS:
        return None
    pinned = SUSS_CCAS[cc]
    return pinned if pinned is not None else int((module_params or {}).get("suss_version", SUSS_DEFAULT_VERSION))


def suss_tag(version: int | None) -> str:
    """A short name for a version in tables and in a run record's `version`, its header's: "2024",
    "2025", "ours"."""
    return "" if version is None else _SUSS_NAMES.get(version, str(version))


#: suss_tag's inverse: the version a run record's SUSS flow names.
SUSS_BY_TAG = {suss_tag(v): v for v in SUSS_VERSIONS}


def variant_label(cc: str, suss_version: int | None = None) -> str:
    """What a table calls a flow's congestion control: a SUSS flow by its version ("cubic_suss 2024";
    "cubic_suss (version not recorded)" for runs from before versions were recorded), others by name."""
    if cc not in SUSS_CCAS:
        return cc
    version = SUSS_CCAS[cc] if SUSS_CCAS[cc] is not None else suss_version
    return "cubic_suss (version not recorded)" if version is None else f"cubic_suss {suss_tag(version)}"


#: SEARCH versions (SS_SEARCH_VERSIONS, kernel/core/search.h): the module parameter search_version's
#: values and what they name.
SEARCH_VERSIONS = {v.value: v.meaning for v in START_VERSIONS if v.variant == "SEARCH"}
_SEARCH_NAMES = {v.value: v.name for v in START_VERSIONS if v.variant == "SEARCH"}
#: The names that run SEARCH and the version each pins (None: search_version's).
SEARCH_CCAS = {name: pin for name, variant, pin in _ENTRIES if variant == "SEARCH"}


def search_thresh_pct(version: int) -> int:
    """THRESH (%) SEARCH @version runs when search_thresh_pct is 0, as kernel/core/search.c defines it."""
    defines = dict(_DEFINE.findall((CORE / "search.c").read_text()))
    return int(defines[f"SEARCH{version}_THRESH_PCT"])


def search_version_of(cc: str, module_params: dict | None = None) -> str | None:
    """The SEARCH a flow of @cc runs with the run's module parameters @module_params ("3.0", "4.0"),
    or None if @cc is not SEARCH.  The module parameter's default is read from its declaration."""
    if cc not in SEARCH_CCAS:
        return None
    pinned = SEARCH_CCAS[cc]
    version = pinned if pinned is not None else int((module_params or {}).get(
        "search_version", param_default("search_version")))
    return _SEARCH_NAMES[version]


def start_version_of(cc: str, module_params: dict) -> str | None:
    """The version of its slow start a flow of @cc runs under its run's module parameters
    @module_params (hs_round_fix resolved: with_hystart_of_suss), as a run record's `version` names
    it: SUSS's by year ("2024", "2025"; "ours"), SEARCH's by number ("3.0", "4.0"), cubic_hs's HyStart
    by its rounds ("Linux 5.19", "Linux 6.1.192"); None for a start the module has in one version."""
    if cc in SUSS_CCAS:
        return suss_tag(suss_version_of(cc, module_params))
    if cc in SEARCH_CCAS:
        return search_version_of(cc, module_params)
    if cc == "cubic_hs":
        return HYSTART_ROUNDS[int(module_params["hs_round_fix"])]
    return None


def recorded_version(flow: dict) -> str | None:
    """The version of its start a flow's record says it ran (start_version_of's words): its `version`,
    or in a run record of format 1 its suss_version, hystart or search, whichever it has."""
    if flow.get("version") is not None:
        return flow["version"]
    if isinstance(flow.get("suss_version"), int):
        return suss_tag(flow["suss_version"])
    return flow.get("hystart") or flow.get("search")


def recorded_suss_version(flow: dict) -> int | None:
    """The SUSS version a flow's record says it ran: its `version` (run records of format 2), or its
    `suss_version` (format 1, and the reports' summaries); None for a flow of another start, or one
    recorded before versions were."""
    if isinstance(flow.get("suss_version"), int):
        return flow["suss_version"]
    if flow.get("cc") in SUSS_CCAS and flow.get("version") in SUSS_BY_TAG:
        return SUSS_BY_TAG[flow["version"]]
    return None


def recorded_hystart(flow: dict) -> str | None:
    """cubic_hs's HyStart (its rounds) as a flow's record names it: its `version` (format 2) or its
    `hystart` (format 1, and the reports' summaries); None for any other flow."""
    if isinstance(flow.get("hystart"), str):
        return flow["hystart"]
    return flow.get("version") if flow.get("cc") == "cubic_hs" else None


@dataclass(frozen=True)
class ModuleParam:
    """One parameter of our module (/sys/module/tcp_sslab/parameters/<name>), as its C source declares
    it: the start headers' `P(name, default, kind, description)` lines (kernel/core/*.h, in the
    registry's SS_PARAMS order), then bbr3's and bbr2_sslab's `module_param` lines
    (kernel/sslab_bbr3.c).  All unsigned integers, read on every ACK (suss_version and bbr3's: when a
    connection starts)."""
    name: str
    default: int
    #: Which values it takes: "uint" (any unsigned 32-bit integer), "flag" (0 or 1), "suss_version" (a
    #: year of SUSS_VERSIONS), "range(lo, hi)" as its header writes it (the ends: @range).
    kind: str
    description: str
    #: The file that declares it, relative to kernel/.
    source: str
    #: A range kind's ends, its defines resolved; None for the other kinds.
    range: tuple[int, int] | None = None


_SS_PARAMS = re.compile(r"^\s*SS_PARAMS\((\w+)\)", re.M)
_PARAM = re.compile(r'\bP\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+(?:\([^()]*\))?)\s*,\s*"((?:[^"\\]|\\.)*)"\s*\)')
#: A kind range(lo, hi): its two ends, numbers or a header's defines.
_RANGE = re.compile(r"range\(\s*(\w+)\s*,\s*(\w+)\s*\)")
_DEFINE = re.compile(r"^#define\s+(\w+)\s+\(?(\d+)U?\)?\s*(?:/\*.*)?$", re.M)
_BBR_PARAM = re.compile(r"^static unsigned int (\w+)\s*=\s*(\w+);\nmodule_param\(\1, uint, 0644\);\n"
                        r'MODULE_PARM_DESC\(\1, "((?:[^"\\]|\\.)*)"\);', re.M)


def _number(token: str, defines: dict[str, int], where: str) -> int:
    if token.isdigit():
        return int(token)
    if token in defines:
        return defines[token]
    raise ValueError(f"{where}: default {token} is neither a number nor a #define of one")


def parse_module_params(kernel: Path = _KERNEL) -> tuple[ModuleParam, ...]:
    """Our module's parameters, read from the C declarations under @kernel (one source: the module's
    fields, defaults and module parameters are expanded from the same lines)."""
    headers = _headers(kernel)
    defines = {name: int(v) for text in headers.values() for name, v in _DEFINE.findall(text)}
    out: list[ModuleParam] = []
    for list_name in _SS_PARAMS.findall(_registry_text(headers)):
        header, body = _list_body(headers, list_name, "P", f"kernel/core: SS_PARAMS({list_name})")
        where = f"kernel/core/{header.name}"
        for name, value, kind, description in _PARAM.findall(body):
            kind = re.sub(r"\s+", " ", kind)
            ends = _RANGE.fullmatch(kind)
            out.append(ModuleParam(name, _number(value, defines, where), kind, description, f"core/{header.name}",
                                   (_number(ends[1], defines, where), _number(ends[2], defines, where))
                                   if ends else None))
    bbr = (kernel / "sslab_bbr3.c").read_text()
    bbr_defines = {n: int(v) for n, v in _DEFINE.findall((kernel / "core" / "bbr3.h").read_text())}
    out += [ModuleParam(name, _number(value, bbr_defines, "kernel/sslab_bbr3.c"), "uint", description,
                        "sslab_bbr3.c") for name, value, description in _BBR_PARAM.findall(bbr)]
    names = [p.name for p in out]
    if len(set(names)) != len(names):
        raise ValueError(f"kernel/: a module parameter declared twice: "
                         f"{sorted({n for n in names if names.count(n) > 1})}")
    return tuple(out)


@dataclass(frozen=True)
class ExitCause:
    """Why slow start ended, as the module's trace numbers it (its `exit` event's a): the core's
    `SS_CORE_EXITS` and each start's `SS_<START>_EXITS` lines, `X(ID, number, "meaning")`."""
    ident: str
    number: int
    meaning: str


@dataclass(frozen=True)
class TraceEvent:
    """One event of the module's `sslab_event` trace, by the name it prints: the core's
    `SS_CORE_EVENTS` and each start's `SS_<START>_EVENTS` lines, `E(ID, "name", "a, b and c")`."""
    ident: str
    name: str
    fields: str


_EXIT = re.compile(r'\bX\(\s*(\w+)\s*,\s*(\d+)\s*,\s*"((?:[^"\\]|\\.)*)"\s*\)')
_EVENT = re.compile(r'\bE\(\s*(\w+)\s*,\s*"(\w+)"\s*,\s*"((?:[^"\\]|\\.)*)"\s*\)')




def parse_trace_declarations(kernel: Path = _KERNEL) -> tuple[tuple[ExitCause, ...], tuple[TraceEvent, ...]]:
    """The module's exit causes and trace events, the core's then each start's in the registry's order,
    read from the same lines the compiler expands (kernel/core/sscore.h says what a line is)."""
    headers = _headers(kernel)
    entries = _registry_text(headers)
    exits = [ExitCause(i, int(n), m) for name in ["SS_CORE_EXITS", *re.findall(r"^\s*SS_EXITS\((\w+)\)", entries, re.M)]
             for i, n, m in _EXIT.findall(_list_body(headers, name, "X", f"kernel/core: {name}")[1])]
    events = [TraceEvent(i, n, f) for name in ["SS_CORE_EVENTS", *re.findall(r"^\s*SS_EVENTS\((\w+)\)", entries, re.M)]
              for i, n, f in _EVENT.findall(_list_body(headers, name, "E", f"kernel/core: {name}")[1])]
    return tuple(exits), tuple(events)


@functools.cache
def module_param_declarations() -> tuple[ModuleParam, ...]:
    """parse_module_params() of this tree, read once when first asked for (the guest never asks:
    under UML every file it opens costs guest time)."""
    return parse_module_params()


#: What each named kind of parameter takes, and how a refusal says it (an unsigned 32-bit integer is checked
#: first); a kind range(lo, hi) takes lo to hi, the ends its header gives (SEARCH's: what its rings hold).
PARAM_KINDS = {"uint": (lambda v: True, "any unsigned 32-bit integer"),
               "flag": (lambda v: v in (0, 1), "0 or 1"),
               "suss_version": (lambda v: v in SUSS_VERSIONS, "a SUSS version: " + ", ".join(map(str, SUSS_VERSIONS)))}


def param_refusal(name: str, value: int) -> str | None:
    """Why our module parameter @name may not be @value by its declared kind, or None."""
    p = next(p for p in module_param_declarations() if p.name == name)
    if p.range is not None:
        lo, hi = p.range
        return None if lo <= value <= hi else f"{name} {value}: {lo} to {hi} ({p.description})"
    takes, says = PARAM_KINDS[p.kind]
    return None if takes(value) else f"{name} {value}: {says}"


def param_default(name: str) -> int:
    """Our module parameter @name's default, as its declaration gives it."""
    for p in module_param_declarations():
        if p.name == name:
            return p.default
    raise KeyError(f"{name}: not one of our module's parameters")


def __getattr__(name: str):
    # MODULE_PARAMS, the names alone, read from the C sources on first use (PEP 562).
    if name == "MODULE_PARAMS":
        return tuple(p.name for p in module_param_declarations())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: cubic_hs's HyStart, by the module parameter hs_round_fix: Linux 5.19's rounds (0; the paper's
#: kernel, whose round check sat after the low-window test) or 6.1.192's (1; the 2025 fix).
HYSTART_ROUNDS = {0: "Linux 5.19", 1: "Linux 6.1.192"}
HYSTART_NAMES = {0: "Linux 5.19's HyStart (the paper's kernel)", 1: "Linux 6.1.192's HyStart (the 2025 round fix)"}
#: Each SUSS version's kernel, whose HyStart the SUSS-off arm (cubic_hs) runs unless a run says otherwise:
#: the 2024 code ran on Linux 5.19; the 2025 rewrite and ours run with the fixed rounds.
SUSS_HYSTART_ROUND_FIX = {2024: 0, 2025: 1, 0: 1}


def with_hystart_of_suss(params: dict) -> dict:
    """A run's module parameters @params with hs_round_fix, when they do not set it, from the run's
    SUSS version (suss_version; unset: the module's default, 2024): the SUSS-off arm runs the HyStart
    of the kernel its SUSS version ran on, so under SUSS 2024 (the paper's) Linux 5.19's."""
    if "hs_round_fix" in params:
        return params
    version = int(params.get("suss_version", SUSS_DEFAULT_VERSION))
    return {**params, "hs_round_fix": SUSS_HYSTART_ROUND_FIX[version]}


#: The kernel's own congestion controls' parameters a run may set, as "<module>.<parameter>"
#: (/sys/module/<module>/parameters/<parameter>): Linux's CUBIC's (the oracle's `hystart=0` runs
#: cubic_ss against).  bic_scale is read-only; the rest are read on every ACK.
KERNEL_MODULE_PARAMS = tuple(f"tcp_cubic.{n}" for n in (
    "fast_convergence", "beta", "initial_ssthresh", "tcp_friendliness", "hystart", "hystart_detect",
    "hystart_low_window", "hystart_ack_delta_us"))
