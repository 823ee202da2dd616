"""One NAME=value on every experiment (sslab.scenario.sets resolves it, sslab.scenario.overrides sets
the fields): a knob, an axis, a name an experiment declares, or a field by its path."""

import re

import pytest

from sslab.experiment import ExperimentError, load_experiment
from sslab.experiment.compile import compile_parts
from sslab.experiment.spec import experiment_files
from sslab.paths import REPO_ROOT
from sslab.scenario import overrides as ov
from sslab.scenario.sets import SetError, resolve

from sslab.matrix import load_matrix as _load_matrix

#: The axes of Table 1 and of its calibration, whose options (CCA=, OFFLOADS=, ...) narrow them.
TABLE1 = _load_matrix("table1").spec.axes
CALIBRATE = _load_matrix("table1-calibrate").spec.axes


def fields(settings, aliases=None):
    """The fields @settings set (an alias's paths in its place), resolved as for an experiment without axes."""
    return list(resolve(settings, "x", aliases=aliases).fields)


def overridden(exp, parts, settings):
    """@parts of @exp with @settings set, as `make <exp> NAME=value ...` sets them, and compiled as it
    compiles them (a field that refuses its value is refused there: ExperimentError)."""
    parts = exp.overridden(parts, resolve(settings, exp.target, aliases=exp.spec.aliases).fields)
    compile_parts(exp, parts)
    return parts


def test_a_path_sets_one_field_and_star_every_item_without_touching_the_original():
    data = {"bottleneck": {"rate": "50mbit", "buffer": {"bdp": 1, "rtt": "100ms"}},
            "pairs": [{"rtt": "100ms"}, {"rtt": "100ms"}]}
    sets = fields(["pairs.*.rtt=25ms", "bottleneck.buffer.bdp=2BDP", "pairs.1.rtt=40ms"])
    out = ov.apply(data, sets)
    assert out == {"bottleneck": {"rate": "50mbit", "buffer": {"bdp": "2BDP", "rtt": "100ms"}},
                   "pairs": [{"rtt": "25ms"}, {"rtt": "40ms"}]}
    assert data["pairs"][0]["rtt"] == "100ms" and data["bottleneck"]["buffer"]["bdp"] == 1


def test_values_read_as_yaml_scalars():
    [o] = fields(["bottleneck.buffer.bdp=2"])
    assert o.value == 2 and o.path == ("bottleneck", "buffer", "bdp")
    assert fields(["a.b=null"])[0].value is None
    assert fields(["a.b=25ms"])[0].value == "25ms"
    with pytest.raises(SetError, match="give one value"):
        fields(["a.b=[1, 2]"])


def test_an_alias_sets_each_of_its_paths_and_an_undeclared_one_is_refused():
    sets = fields(["RTT=25ms"], {"RTT": ["pairs.*.rtt", "bottleneck.buffer.rtt"]})
    assert [o.dotted for o in sets] == ["pairs.*.rtt", "bottleneck.buffer.rtt"] and {o.value for o in sets} == {"25ms"}
    with pytest.raises(SetError, match=r"`make startup` has no setting CCA \(its names: RTT; over every "
                                       r"experiment: SUSS_VERSION, HOSTS"):
        resolve(["CCA=bbr"], "`make startup`", aliases={"RTT": ["pairs.*.rtt"]})
    with pytest.raises(SetError, match="not a field's path"):
        fields(["Pairs.rtt=1ms"])
    with pytest.raises(SetError, match="give NAME=VALUE"):
        fields(["RTT"], {"RTT": ["pairs.*.rtt"]})


def test_a_name_is_an_axis_a_knob_an_alias_or_a_path_in_that_order():
    """One meaning on every experiment: an axis's option (case-blind), which narrows it; a knob by its
    make variable or field; a declared name; a field by its path.  Table 1's RTT= is its axis, E1's RTT=
    its alias of two fields; the calibration's OFFLOADS= its axis, everywhere else the knob."""
    s = resolve(["SUSS_VERSION=2025", "topology.sender_qdisc=fq", "cca=cubic,bbr", "RTT=25ms",
                 "bottleneck.rate=20mbit", "seed=7"], "table1", axes=TABLE1)
    assert s.knobs == {"suss_version": 2025, "sender_qdisc": "fq"}
    # An axis's values as its labels (the axis's names, in the order asked).
    assert s.axes == {"large_cc": ["cubic", "bbr"], "large_rtt": ["25ms"]}
    assert [(o.dotted, o.value) for o in s.fields] == [("bottleneck.rate", "20mbit"), ("seed", 7)]
    e1 = resolve(["RTT=25ms"], "`make startup`", aliases={"RTT": ["pairs.*.rtt", "bottleneck.buffer.rtt"]})
    assert e1.axes == {} and [o.dotted for o in e1.fields] == ["pairs.*.rtt", "bottleneck.buffer.rtt"]
    # A name with a dot is a field's path, never an axis.
    assert resolve(["cca.x=1"], "t", axes=TABLE1).fields[0].dotted == "cca.x"
    with pytest.raises(SetError, match=r"table1 has no setting FOO \(its axes: BUF, CCA"):
        resolve(["FOO=1"], "table1", axes=TABLE1)
    # A knob's make variable that is also a matrix's axis narrows the axis, a list of values too; its
    # field's path stays the knob.
    cal = resolve(["OFFLOADS=off,linux", "SOCKET_BUFFERS=raised"], "table1-calibrate", axes=CALIBRATE)
    assert cal.axes == {"offloads": ["off", "linux"], "socket_buffers": ["raised"]} and cal.knobs == {}
    assert resolve(["topology.offloads=linux"], "t", axes=CALIBRATE).knobs == {"offloads": "linux"}
    assert resolve(["OFFLOADS=linux"], "table1", axes=TABLE1).knobs == {"offloads": "linux"}
    with pytest.raises(SetError, match="OFFLOADS=off,linux: OFFLOADS takes off, linux"):
        resolve(["OFFLOADS=off,linux"], "table1", axes=TABLE1)
    # So does the knob's own option (sslab run --offloads linux), where the matrix sweeps its field.
    assert resolve([], "table1-calibrate", axes=CALIBRATE, knobs={"offloads": "linux"}).axes == {"offloads": ["linux"]}
    assert resolve([], "table1", axes=TABLE1, knobs={"offloads": "linux"}).knobs == {"offloads": "linux"}


def test_a_name_given_twice_with_two_values_is_refused():
    with pytest.raises(SetError, match="CCA given twice: cubic and bbr"):
        resolve(["CCA=cubic", "CCA=bbr"], "table1", axes=TABLE1)
    with pytest.raises(SetError, match="HOSTS given twice: ideal and 1gbe"):
        resolve(["HOSTS=ideal", "hosts.model=1gbe"], "x")
    with pytest.raises(SetError, match="SUSS_VERSION given twice: 2025 and 2024"):
        resolve(["SUSS_VERSION=2024"], "x", knobs={"suss_version": 2025})
    with pytest.raises(SetError, match=r"pairs\.\*\.rtt set twice, to two values: RTT=25ms and pairs\.\*\.rtt=1ms"):
        fields(["RTT=25ms", "pairs.*.rtt=1ms"], {"RTT": ["pairs.*.rtt"]})
    # The same value twice, or by its two spellings, is one setting.
    assert resolve(["CCA=cubic", "cca=cubic"], "t", axes=TABLE1).axes == {"large_cc": ["cubic"]}
    assert resolve(["SENDER_QDISC=fq", "topology.sender_qdisc=fq"], "x").knobs == {"sender_qdisc": "fq"}


def test_a_path_the_data_does_not_have_is_refused_with_where():
    data = {"pairs": [{"rtt": "1ms"}], "bottleneck": {"rate": "1mbit"}}
    with pytest.raises(ov.OverrideError, match="pairs.3: the list at pairs has 1 item"):
        ov.apply(data, fields(["pairs.3.rtt=2ms"]))
    with pytest.raises(ov.OverrideError, match="bottleneck.0: bottleneck is a mapping, not a list"):
        ov.apply(data, fields(["bottleneck.0=2ms"]))
    with pytest.raises(ov.OverrideError, match="no mapping or list here to set buffer.bdp"):
        ov.apply(data, fields(["bottleneck.queue.buffer.bdp=2"]))
    # A mapping the data leaves out (at its default) is made for its first key: module_params.
    assert ov.apply(data, fields(["module_params.search_version=4"]))["module_params"] == {
        "search_version": 4}


def test_a_form_of_the_buffer_replaces_the_form_the_file_gave():
    """The buffer is one of packets, bytes, bdp or time: BUF=2BDP on a part whose buffer is 560 packets
    (E10's LTE path) asks for 2 BDP, not for both (which the model refuses); its rtt stays."""
    data = {"bottleneck": {"rate": "50mbit", "buffer": {"packets": 560}}}
    [o] = fields(["BUF=2BDP"], {"BUF": ["bottleneck.buffer.bdp"]})
    assert ov.apply(data, [o])["bottleneck"]["buffer"] == {"bdp": "2BDP"}
    out = ov.apply({"bottleneck": {"buffer": {"bdp": 1, "rtt": "25ms"}}}, fields(["bottleneck.buffer.packets=100"]))
    assert out["bottleneck"]["buffer"] == {"packets": 100}   # the RTT was bdp's: it goes with it
    # Elsewhere a key set beside others leaves them: only the buffer's forms are alternatives.
    assert ov.apply({"pairs": [{"rtt": "1ms", "loss": 1}]}, fields(["pairs.0.rtt=2ms"])) == {
        "pairs": [{"rtt": "2ms", "loss": 1}]}
    # E10's series: its satellite paths take BUF=2BDP at their RTTs; its LTE path, whose buffer the file
    # gives in packets, is refused for what 2 BDP lacks there (the RTT it refers to), no longer for two forms.
    exp = load_experiment("search")
    parts = overridden(exp, exp.choose(["geo", "leo"]), ["BUF=2BDP"])
    assert [(p.name, p.data["bottleneck"]["buffer"]) for p in parts] == [
        ("geo", {"bdp": "2BDP", "rtt": "600ms"}), ("leo", {"bdp": "2BDP", "rtt": "30ms"})]
    with pytest.raises(ExperimentError, match="(?s)lte with BUF=2BDP.*bdp needs the rtt it refers to"):
        overridden(exp, exp.choose(["lte"]), ["BUF=2BDP"])
    parts = overridden(exp, exp.choose(["lte"]), ["BUF=2BDP", "bottleneck.buffer.rtt=60ms"])
    assert parts[0].data["bottleneck"]["buffer"] == {"bdp": "2BDP", "rtt": "60ms"}


def test_the_report_directory_says_what_was_set():
    sets = fields(["RTT=25ms", "pairs.*.loss=1"], {"RTT": ["pairs.*.rtt", "bottleneck.buffer.rtt"]})
    assert ov.dir_suffix(sets) == "_set-RTT-25ms_set-pairs.all.loss-1"


def test_startup_at_25ms_is_e1_with_every_rtt_and_its_buffer_at_25ms():
    """What experiments/startup-25ms.yaml wrote as a file of its own: the five pairs at 25 ms and the
    buffer 1 BDP of 25 ms (104 frames at 50 Mbit/s), everything else E1's."""
    e = load_experiment("startup")
    [plain] = e.choose(None)
    [part] = overridden(e, [plain], ["RTT=25ms"])
    assert part.data["pairs"] == [{"rtt": "25ms"}] * 5
    assert part.data["bottleneck"] == {"rate": "50mbit", "buffer": {"bdp": 1, "rtt": "25ms"}}
    assert part.data["description"].endswith("(set: RTT=25ms)")
    base = e.data_of(plain)
    same = {k for k in base if k not in ("pairs", "bottleneck", "description")}
    assert same and all(part.data[k] == base[k] for k in same)
    [part] = overridden(e, [plain], ["BUF=2BDP"])
    assert part.data["bottleneck"]["buffer"] == {"bdp": "2BDP", "rtt": "100ms"}
    assert overridden(e, [plain], []) == [plain]


def test_runs_with_a_field_set_go_apart_from_the_experiments_own():
    """A scenario experiment's runs with SET= land in results/dynamics_set-.../, a series' in its part's
    directory with the same suffix: never under results/dynamics/, where the claims ledger reads E3 as
    its file has it."""
    e = load_experiment("dynamics")
    [plain] = e.choose(None)
    assert e.kind_of(plain) == "dynamics"
    [part] = overridden(e, [plain], ["RTT=100ms", "bottleneck.link.aggregation.down=null"])
    assert e.kind_of(part) == "dynamics_set-RTT-100ms_set-bottleneck.link.aggregation.down-null"
    s = load_experiment("search")
    [geo] = overridden(s, s.choose(["geo"]), ["BUF=2BDP"])
    assert s.kind_of(geo) == "search/geo_set-BUF-2BDP" and s.kind_of(s.choose(["geo"])[0]) == "search/geo"


def test_a_field_that_refuses_the_value_refuses_the_run():
    e = load_experiment("startup")
    with pytest.raises(ExperimentError, match="startup with bottleneck.rate=fast: invalid scenario(?s:.*)rate"):
        overridden(e, e.choose(None), ["bottleneck.rate=fast"])
    with pytest.raises(SetError, match="has no setting NETEM"):
        overridden(e, e.choose(None), ["NETEM=one"])


def test_every_declared_alias_is_a_name_the_makefile_passes():
    makefile = (REPO_ROOT / "Makefile").read_text()
    passed = set(re.search(r"^SET_NAMES := (.*)$", makefile, re.M)[1].split())
    declared = {name for f in experiment_files() for name in (load_experiment(f.stem).spec.aliases or {})}
    assert declared and declared <= passed, declared - passed


def test_every_matrix_option_is_a_name_the_makefile_passes():
    from sslab.matrix.spec import load_matrix, matrix_files
    makefile = (REPO_ROOT / "Makefile").read_text()
    passed = set(re.search(r"^SET_NAMES := (.*)$", makefile, re.M)[1].split())
    # The knobs' variables reach every command as NAME=value too (KNOB_ARGS), where an axis of theirs
    # narrows the axis (the calibration's OFFLOADS= and SOCKET_BUFFERS=).
    passed |= set(re.findall(r"--set (\w+)=", re.search(r"^KNOB_ARGS = (.*)$", makefile, re.M)[1]))
    options = {a.option for f in matrix_files() for a in load_matrix(str(f)).spec.axes.values() if a.option}
    assert {"LAYOUT", "FIRST_START", "SOCKET_BUFFERS"} <= options <= passed, options - passed


def test_a_matrix_takes_a_field_of_its_template_and_archives_its_cells_apart():
    """SET=bottleneck.rate=20mbit on Table 1: every cell's scenario at 20 Mbit/s, the axes untouched,
    and the matrix's directory says what was set (never the ledger's `table1/*` evidence)."""
    from sslab import matrix as mx
    from sslab.analysis.claims import _apart
    from sslab.matrix.orchestrate import matrix_rel_of
    from sslab.substrate.kernelchanges import KernelChanges
    m = mx.load_matrix("table1")
    sets = resolve(["bottleneck.rate=20mbit", "CCA=cubic"], "table1", axes=m.spec.axes)
    assert sets.axes == {"large_cc": ["cubic"]}
    m2 = m.with_sets(list(sets.fields))
    setting = mx.settings(m2.spec, {})[0]
    assert m2.scenario_for(setting, 0).bottleneck.rate_mbit == 20.0 and m.scenario_for(setting, 0).bottleneck.rate_mbit == 50.0
    rel = matrix_rel_of(m2, sets.axes, None, None, KernelChanges())
    assert rel == "table1/cca-cubic_set-bottleneck.rate-20mbit" and _apart(REPO_ROOT / "results" / rel)
    assert m.with_sets(list(resolve(["CCA=cubic"], "table1", axes=m.spec.axes).fields)) is m
    with pytest.raises(mx.MatrixError, match="bottleneck.rte: unknown field"):
        m.with_sets(list(resolve(["bottleneck.rte=20mbit"], "table1", axes=m.spec.axes).fields))


def test_a_knob_by_its_field_or_make_variable_is_the_knob():
    """SET=topology.sender_qdisc=fq and SET=SUSS_VERSION=2025 are SENDER_QDISC=fq and SUSS_VERSION=2025:
    the same cells, archived under the knob's name; a value the knob refuses is refused."""
    from sslab.scenario import knobs
    s = resolve(["topology.sender_qdisc=fq", "SUSS_VERSION=2025", "RTT=25ms"], "x", aliases={"RTT": ["pairs.*.rtt"]})
    assert s.knobs == {"sender_qdisc": "fq", "suss_version": 2025} and [o.given for o in s.fields] == ["RTT=25ms"]
    assert knobs.dir_suffix(s.knobs) == "_suss-2025_qdisc-fq"
    with pytest.raises(SetError, match="SENDER_QDISC takes none, fq, fq_codel"):
        resolve(["topology.sender_qdisc=pfifo"], "x")
