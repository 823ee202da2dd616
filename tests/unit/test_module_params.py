"""Our module's parameters: one declaration each (kernel/core/<start>.h), read by the compiler and by
the harness (sslab.ccas), and the two readings agree."""

import re
import subprocess

import pytest

from sslab import ccas
from sslab.paths import REPO_ROOT

KERNEL = REPO_ROOT / "kernel"


def compiled_params() -> list[tuple[str, int, str]]:
    """(name, default, kind) of every field of struct ss_params, as the C compiler expands the
    declarations (kernel/tests/test_sscore.c --params)."""
    subprocess.run(["make", "-s", "-C", str(KERNEL), "build/test_sscore"], check=True, capture_output=True)
    out = subprocess.run([str(KERNEL / "build/test_sscore"), "--params"], check=True, capture_output=True,
                         text=True).stdout
    return [(name, int(value), kind) for name, value, kind in (ln.split(maxsplit=2) for ln in out.splitlines())]


def test_the_harness_reads_the_parameters_the_compiler_builds():
    ours = [(p.name, p.default, p.kind) for p in ccas.module_param_declarations() if p.source.startswith("core/")]
    assert ours == compiled_params()


def test_the_module_parameters_the_harness_accepts():
    # The starts' (HyStart's first), then bbr3's and bbr2_sslab's six; the defaults as the papers and drafts
    # give them.
    names = ccas.MODULE_PARAMS
    assert names[:2] == ("hs_low_window", "hs_ack_delta_us") and "rapid_k36" in names
    assert names[-6:] == ("bbr3_drain_gain", "bbr3_probe_down_gain", "bbr2_high_gain", "bbr2_startup_cwnd_gain",
                          "bbr2_drain_gain", "bbr2_full_loss_cnt")
    assert ccas.param_default("suss_version") == ccas.SUSS_DEFAULT_VERSION == 2024
    assert ccas.param_default("rapid_k36") == 22 and ccas.param_default("bbr3_drain_gain") == 500
    with pytest.raises(KeyError):
        ccas.param_default("nosuch")


def entry(start: str, *lines: str, variant: str = "SS_VARIANT(HALF, 0, ss_half_ops)") -> str:
    """A start's entry in the registry, SS_<start>_REGISTRY, of @lines and its @variant line."""
    return f"#define SS_{start}_REGISTRY \\\n" + "".join(f"\t{ln} \\\n" for ln in lines) + f"\t{variant}\n"


def _tree(tmp_path, header: str, registry: tuple[str, ...] = ("SS_PARAMS(SS_HALF_PARAMS)",)):
    (tmp_path / "core").mkdir(parents=True)
    (tmp_path / "core/half.h").write_text(header + entry("HALF", *registry))
    (tmp_path / "core/bbr3.h").write_text("#define BBR3_DRAIN_PACING_GAIN 500U\n")
    (tmp_path / "sslab_bbr3.c").write_text(
        "static unsigned int bbr3_drain_gain = BBR3_DRAIN_PACING_GAIN;\nmodule_param(bbr3_drain_gain, uint, 0644);\n"
        'MODULE_PARM_DESC(bbr3_drain_gain, "bbr3: Drain\'s gain (draft-06: 500)");\n')
    return tmp_path


HALF = ('#define HALF_EVERY 2U\n'
        '#define HALF_MAX 9U\n'
        '#define SS_HALF_PARAMS(P) \\\n'
        '\tP(half_every, HALF_EVERY, uint, "growth: one packet per this many, \\"acked\\" (2, ours)") \\\n'
        '\tP(half_min, 0, range(0,  HALF_MAX), "none below this (packets)")\n'
        'P(not_in_the_list, 1, uint, "after the list")\n')


def test_parse_a_start_header(tmp_path):
    params = ccas.parse_module_params(_tree(tmp_path, HALF))
    assert [(p.name, p.default, p.kind, p.source, p.range) for p in params] == [
        ("half_every", 2, "uint", "core/half.h", None), ("half_min", 0, "range(0, HALF_MAX)", "core/half.h", (0, 9)),
        ("bbr3_drain_gain", 500, "uint", "sslab_bbr3.c", None)]
    assert params[0].description == 'growth: one packet per this many, \\"acked\\" (2, ours)'


def test_a_list_the_registry_names_but_no_header_defines_is_refused(tmp_path):
    with pytest.raises(ValueError, match="SS_PARAMS\\(SS_GONE_PARAMS\\): defined in 0 headers"):
        ccas.parse_module_params(_tree(tmp_path, HALF, ("SS_PARAMS(SS_HALF_PARAMS)", "SS_PARAMS(SS_GONE_PARAMS)")))


def test_a_parameter_declared_twice_or_a_default_of_nothing_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"declared twice: \['half_every'\]"):
        ccas.parse_module_params(_tree(tmp_path, HALF.replace("half_min", "half_every")))
    with pytest.raises(ValueError, match="default HALF_EVRY is neither"):
        ccas.parse_module_params(_tree(tmp_path / "b", HALF.replace("P(half_every, HALF_EVERY", "P(half_every, HALF_EVRY")))


def test_a_value_its_kind_does_not_take_is_refused_before_a_run():
    """A parameter's kind, from its declaration: rapid_pace_first is a flag (0 or 1), suss_version a SUSS
    version; a scenario asking for another is refused (exit 2 on the command line) naming what it takes."""
    from sslab.scenario import ScenarioError, parse_scenario
    assert ccas.param_refusal("rapid_pace_first", 2) == "rapid_pace_first 2: 0 or 1"
    assert ccas.param_refusal("rapid_pace_first", 0) is None and ccas.param_refusal("rapid_k36", 99) is None
    assert ccas.param_refusal("suss_version", 2023).startswith("suss_version 2023: a SUSS version: 2024, 2025, 0")
    data = {"name": "x", "topology": {"kind": "dumbbell", "pairs": 1},
            "bottleneck": {"rate": "50mbit", "buffer": {"packets": 100}}, "pairs": [{"rtt": "20ms"}],
            "module_params": {"rapid_pace_first": 2},
            "cases": [{"name": "c", "flows": [{"pair": 1, "cc": "cubic_rapid", "size": "1MB"}]}]}
    with pytest.raises(ScenarioError, match="rapid_pace_first 2: 0 or 1"):
        parse_scenario(data)
    data["module_params"] = {"rapid_pace_first": 0}
    assert parse_scenario(data).module_params == {"rapid_pace_first": 0}


def test_searchs_parameters_take_what_its_core_holds():
    """SEARCH's version is 3 or 4; THRESH 0 (the version's) to 99 %; W 1-31 and EXTRA_BINS 0-32 bins (its
    rings hold 64, kernel/core/search.h); the window 1-100 tenths of the initial RTT."""
    refusal = ccas.param_refusal
    assert refusal("search_version", 5).startswith("search_version 5: 3 to 4 (SEARCH: cubic_search's version")
    assert refusal("search_version", 3) is None and refusal("search_version", 4) is None
    assert refusal("search_thresh_pct", 100).startswith("search_thresh_pct 100: 0 to 99 (SEARCH: THRESH, percent")
    assert refusal("search_thresh_pct", 0) is None and refusal("search_thresh_pct", 99) is None
    assert refusal("search_bins", 0) and refusal("search_bins", 32) and refusal("search_bins", 31) is None
    assert refusal("search_extra_bins", 33) and refusal("search_extra_bins", 0) is None
    assert refusal("search_window_x10", 0) and refusal("search_window_x10", 101) and refusal("search_window_x10", 35) is None
    assert ccas.param_default("search_version") == 3 and ccas.param_default("search_thresh_pct") == 0
    # THRESH of each version when search_thresh_pct is 0, read from the core's defines: the drafts' 0.35, 0.26.
    assert ccas.search_thresh_pct(3) == 35 and ccas.search_thresh_pct(4) == 26
    # The version a flow runs: its name's pin, else search_version's (unset: 3.0).
    assert ccas.search_version_of("cubic_search4", {"search_version": 3}) == "4.0"
    assert ccas.search_version_of("cubic_search", {"search_version": 4}) == "4.0"
    assert ccas.search_version_of("cubic_search", {}) == "3.0" and ccas.search_version_of("cubic_hs") is None


def test_the_standard_starts_take_google_quics_cubic_by_default():
    """cubic_std and cubic_blitz stand for the Blitzstart report's Google QUIC sender: CUBIC of two connections
    and no ACK-train exit unless asked; N goes from 1 (Linux's) to the core's own bound, read from its header."""
    refusal = ccas.param_refusal
    assert ccas.param_default("std_connections") == 2 and ccas.param_default("std_ack_train") == 0
    header = (KERNEL / "core/sscore.h").read_text()
    assert "#define SS_CUBIC_MAX_CONNECTIONS 8U" in header
    [std] = [p for p in ccas.module_param_declarations() if p.name == "std_connections"]
    assert (std.kind, std.range) == ("range(1, SS_CUBIC_MAX_CONNECTIONS)", (1, 8))
    assert refusal("std_connections", 0).startswith("std_connections 0: 1 to 8 (cubic_std and cubic_blitz: CUBIC emulates")
    assert refusal("std_connections", 9) and refusal("std_connections", 1) is None
    assert refusal("std_connections", 8) is None and refusal("std_ack_train", 2) == "std_ack_train 2: 0 or 1"


def compiled_trace() -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(number, constant) of every exit cause and (number, name) of every trace event, as the C compiler
    expands the declarations (kernel/tests/test_sscore.c --trace)."""
    subprocess.run(["make", "-s", "-C", str(KERNEL), "build/test_sscore"], check=True, capture_output=True)
    out = subprocess.run([str(KERNEL / "build/test_sscore"), "--trace"], check=True, capture_output=True,
                         text=True).stdout
    rows = [ln.split() for ln in out.splitlines()]
    return ([(int(n), i) for kind, n, i in rows if kind == "exit"],
            [(int(n), name) for kind, n, name in rows if kind == "event"])


def test_the_harness_reads_the_exit_causes_and_events_the_compiler_builds():
    """A start declares its exits and events in its header; the numbers every trace carries and the names
    it prints are the compiler's, and the harness reads the same lines."""
    exits, events = ccas.parse_trace_declarations()
    c_exits, c_events = compiled_trace()
    assert [(x.number, x.ident) for x in exits] == c_exits
    assert [(i, e.name) for i, e in enumerate(events)] == c_events
    # The numbers of before the declarations moved into the starts' headers are kept (they are in every
    # trace); a new start's causes take others.
    assert {x.ident: x.number for x in exits}.items() >= {"NONE": 0, "ACK_TRAIN": 1, "DELAY": 2, "CSS_DONE": 3,
                                                           "SUSS_CAP": 4, "LOSS": 5, "BLITZ": 6, "SEARCH": 7}.items()


def test_the_harness_reads_each_starts_versions_as_the_compiler_builds_them():
    """A start declares its versions in its header (SS_<START>_VERSIONS, named by the registry's SS_VERSIONS):
    the constants a name pins and the values its parameter takes are the compiler's, the harness reads the
    same lines, and each SUSS value maps to its own constant (ss_suss_version_of_year)."""
    subprocess.run(["make", "-s", "-C", str(KERNEL), "build/test_sscore"], check=True, capture_output=True)
    out = subprocess.run([str(KERNEL / "build/test_sscore"), "--versions"], check=True, capture_output=True,
                         text=True).stdout
    rows = [ln.split() for ln in out.splitlines()]
    compiled = [(variant, ident, int(value), name) for kind, variant, ident, _pin, value, name in
                (r for r in rows if r[0] == "version")]
    assert compiled == [(v.variant, v.ident, v.value, v.name) for v in ccas.START_VERSIONS]
    pins = {ident: int(pin) for kind, _v, ident, pin, _value, _name in (r for r in rows if r[0] == "version")}
    # SUSS's pins index its versions; SEARCH's lie apart from them; none is SS_VERSION_PARAM (0xff).
    assert sorted(pins[i] for i in ("SUSS_VER_PAPER", "SUSS_VER_2024", "SUSS_VER_2025")) == [0, 1, 2]
    assert (pins["SEARCH_VER_3"], pins["SEARCH_VER_4"]) == (0x30, 0x40) and 0xff not in pins.values()
    years = {int(year): int(v) for kind, year, v in (r for r in rows if r[0] == "suss_year")}
    assert years == {2024: pins["SUSS_VER_2024"], 2025: pins["SUSS_VER_2025"], 0: pins["SUSS_VER_PAPER"]}
    assert ccas.SUSS_VERSIONS == {2024: "SUSS 2024 (the authors' code behind the paper)",
                                  2025: "SUSS 2025 (the authors' rewrite)", 0: "SUSS, ours from the paper's text"}
    assert ccas.search_version_of("cubic_search4") == "4.0" and ccas.suss_tag(0) == "ours"


#: The starts whose events and exit causes kernel/README.md documents (a new start's are its header's lines).
DOCUMENTED = ("SS_CORE", "SS_HYSTART_", "SS_HYSTARTPP_", "SS_SUSS_", "SS_RATESTART_", "SS_SEARCH_")


def test_the_readme_documents_the_trace_events_and_exit_causes_of_the_core_and_the_papers_starts():
    """kernel/README.md's table of sslab_event's types: a row for each event of the core and of the starts
    it documents, none for an event no one declares; its `exit` row names each of their causes by number."""
    lines = [ln.strip().rstrip("\\").strip() for _, text in ccas.registry() for ln in text.splitlines()]
    documented = {ln.split("(")[1].rstrip(")") for ln in lines
                  if ln.startswith(("SS_EXITS(", "SS_EVENTS(")) and ln.split("(")[1].startswith(DOCUMENTED)}
    # The starts it documents are in the registry (else the list above is stale).
    assert {"SS_SUSS_EVENTS", "SS_SEARCH_EVENTS", "SS_HYSTART_EXITS", "SS_RATESTART_EXITS"} <= documented
    exits, events = ccas.parse_trace_declarations()
    text = (KERNEL / "README.md").read_text()
    table = text[text.index("| type | a | b | c |"):].split("\n\n")[0].splitlines()[2:]
    rows = {ln.split("`")[1] for ln in table}
    assert rows <= {e.name for e in events}
    assert rows == {e.name for e in events if e.ident in _declared_by(documented, "EVENTS")}
    [exit_row] = [ln for ln in table if ln.startswith("| `exit` |")]
    assert all(f"{x.number} " in exit_row for x in exits if x.number and x.ident in _declared_by(documented, "EXITS"))


def _declared_by(lists: set[str], kind: str) -> set[str]:
    """The IDs the list macros @lists of @kind (EXITS or EVENTS), and the core's, declare."""
    import re
    headers = "\n".join(h.read_text() for h in (KERNEL / "core").glob("*.h"))
    out = set()
    for name in {n for n in lists if n.endswith(kind)} | {f"SS_CORE_{kind}"}:
        body = re.search(rf"#define {name}\(\w\)((?:[^\n]*\\\n)*[^\n]*)", headers)[1]
        out |= set(re.findall(r"\b[XE]\(\s*(\w+)", body))
    return out


def compiled_names() -> list[tuple[str, str, int, int]]:
    """(name, variant, variant number, pin) of every name the module registers, in its order, as the C
    compiler expands the starts' entries (kernel/tests/test_sscore.c --names)."""
    subprocess.run(["make", "-s", "-C", str(KERNEL), "build/test_sscore"], check=True, capture_output=True)
    out = subprocess.run([str(KERNEL / "build/test_sscore"), "--names"], check=True, capture_output=True,
                         text=True).stdout
    return [(name, variant, int(number), int(pin)) for _, name, variant, number, pin in map(str.split, out.splitlines())]


def test_the_harness_reads_the_names_the_module_registers_in_its_order():
    """The module's list of starts (kernel/starts.sh) and the harness's (ccas.registry) are made by one
    rule: the headers that declare an entry, by their first variant's number.  The names, their variants
    and their pins as the compiler has them are the harness's, in the same order."""
    compiled = compiled_names()
    assert [(name, variant) for name, variant, _, _ in compiled] == [(n, v) for n, v, _ in ccas._ENTRIES]
    # Unpinned names carry SS_VERSION_PARAM (255); a pinned one its version's constant.
    assert {n for n, _, _, pin in compiled if pin == 255} == {n for n, _, p in ccas._ENTRIES if p is None}
    # A variant's number never goes down along the list: the registry's order is the numbers'.
    numbers = [number for _, _, number, _ in compiled]
    assert numbers == sorted(numbers) and numbers[:2] == [0, 1]
    assert [h for h, _ in ccas.registry()][:3] == ["hystart.h", "hystartpp.h", "suss.h"]


def test_the_registry_is_ordered_by_the_starts_numbers_and_refuses_what_it_cannot_order(tmp_path):
    """Which headers are starts, and their order, by the rule kernel/starts.sh builds the module with:
    the harness and the script agree on a tree of three toy starts, and refuse alike a start with no
    variant or two starts of one number (exit 1 for the script, before any compiler runs)."""
    core = tmp_path / "core"
    core.mkdir()
    (core / "a.h").write_text(entry("LATE", 'SS_NAME(late, "late", LATE, SS_VERSION_PARAM)',
                                    variant="SS_VARIANT(LATE, 20, ss_late_ops)"))
    (core / "b.h").write_text("/* no entry: not a start */\n#define SS_B_PARAMS(P)\n")
    (core / "c.h").write_text(entry("EARLY", variant="SS_VARIANT(EARLY, 3, ss_early_ops)")
                              + "/* SS_VARIANT(LATER, 1, x) in a comment is no line */\n")
    (core / "d.h").write_text(entry("MID", variant="SS_VARIANT(MID, 7, ss_mid_ops)"))
    assert [h for h, _ in ccas.registry(tmp_path)] == ["c.h", "d.h", "a.h"]
    made = subprocess.run(["sh", str(KERNEL / "starts.sh"), str(core)], check=True, capture_output=True,
                          text=True).stdout
    assert re.findall(r'#include "../core/(\w+\.h)"', made) == ["c.h", "d.h", "a.h"]
    assert re.findall(r"SS_(\w+)_REGISTRY", made) == ["EARLY", "MID", "LATE"]
    (core / "d.h").write_text(entry("MID", variant="SS_VARIANT(MID, 20, ss_mid_ops)"))
    with pytest.raises(ValueError, match="two starts in place 20: a.h, d.h"):
        ccas.registry(tmp_path)
    refused = subprocess.run(["sh", str(KERNEL / "starts.sh"), str(core)], capture_output=True, text=True)
    assert refused.returncode == 1 and "two starts in place 20" in refused.stderr and not refused.stdout
    (core / "d.h").write_text(entry("MID", variant="/* none */"))
    with pytest.raises(ValueError, match="d.h: SS_MID_REGISTRY has no SS_VARIANT line"):
        ccas.registry(tmp_path)
    refused = subprocess.run(["sh", str(KERNEL / "starts.sh"), str(core)], capture_output=True, text=True)
    assert refused.returncode == 1 and "SS_MID_REGISTRY has no SS_VARIANT line" in refused.stderr
