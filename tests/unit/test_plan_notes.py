"""What every matrix report says of its plan (sslab.analysis.plan_notes), from hand-made plans."""

from types import SimpleNamespace

from sslab.analysis.plan_notes import (beside_notes, off_grid_notes, runs_as_notes, shown_values,
                                       unavailable_notes)


def plan(**fields):
    base = {"unavailable": [], "labels": {}, "runs_as": {}, "available_ccas": {}, "paper_beside": {},
            "axis_values": None}
    return SimpleNamespace(**{**base, **fields})


def test_settings_unavailable_for_one_reason_are_one_note_named_by_the_value_the_reason_names():
    why = "bbr2 or bbr2_sslab is not offered by the kernel under test"
    unavailable = [SimpleNamespace(setting={"large_cc": "bbr2", "buffer": b, "large_rtt": r}, reason=why)
                   for b in ("1BDP", "2BDP") for r in ("25ms", "50ms", "100ms", "200ms")]
    unavailable.append(SimpleNamespace(setting={"large_cc": "bbr3", "buffer": "1BDP", "large_rtt": "25ms"},
                                       reason="bbr3 is not offered by the kernel under test"))
    # A reason that names no value of the settings: they are listed, axis by axis.
    unavailable.append(SimpleNamespace(setting={"large_cc": "x", "buffer": "1BDP", "large_rtt": "25ms"},
                                       reason="needs patch 0005"))
    assert unavailable_notes(plan(unavailable=unavailable, labels={"bbr2": "BBRv2"})) == [
        "- BBRv2 (8 settings: buffer 1BDP, 2BDP; large_rtt 25ms, 50ms, 100ms, 200ms): **unavailable**, not run and "
        f"not substituted: {why}.",
        "- bbr3 (1 setting: buffer 1BDP; large_rtt 25ms): **unavailable**, not run and not substituted: bbr3 is not "
        "offered by the kernel under test.",
        "- 1 setting: large_cc x; buffer 1BDP; large_rtt 25ms: **unavailable**, not run and not substituted: needs "
        "patch 0005."]


def test_what_each_control_ran_in_the_order_shown_and_nothing_of_other_values():
    settings = [{"buffer": "1BDP", "large_cc": "cubic"}, {"buffer": "2BDP", "large_cc": "bbr"},
                {"buffer": "1BDP", "large_cc": "bbr2"}, {"buffer": "1BDP", "large_cc": "mine"}]
    shown = shown_values(settings)
    assert shown == ["1BDP", "2BDP", "cubic", "bbr", "bbr2", "mine"]
    p = plan(labels={"cubic": "CUBIC", "bbr": "BBRv1", "bbr2": "BBRv2"},
             runs_as={"cubic": "cubic_hs", "bbr2": "bbr2_sslab"}, available_ccas={"bbr": "built in", "cubic": "built in"})
    # `mine` is neither run as another nor offered by the kernel: no line (it ran nothing of that name).
    assert runs_as_notes(p, shown) == [
        "- CUBIC ran `cubic_hs`, ours: Linux's CUBIC and HyStart, ACK for ACK the kernel's.",
        "- BBRv1 ran `bbr`, Linux's BBRv1.",
        "- BBRv2 ran `bbr2_sslab`, ours: BBRv2 as Google's v2alpha set it, written from its published facts."]


def test_beside_and_off_grid_only_of_what_is_shown():
    p = plan(labels={"bbr2": "BBRv2", "bbr3": "BBRv3"}, paper_beside={"bbr3": {"column": "bbr2", "note": "why."}},
             axis_values={"buffer": ["1BDP", "2BDP"], "large_cc": ["cubic", "bbr3"]})
    assert beside_notes(p, ["cubic"]) == []
    assert beside_notes(p, ["bbr3"]) == ["- BBRv3 is shown beside the paper's BBRv2 values: why."]
    on, off = {"buffer": "1BDP", "large_cc": "cubic"}, {"buffer": "3BDP", "large_cc": "cubic"}
    assert off_grid_notes(p, [on]) == []
    assert off_grid_notes(p, [on, off]) == ["- 1 setting(s) beside the paper's grid (a value the matrix file does "
                                            "not list): no paper value, and left out of the averages."]
    # A plan from before the grid was recorded: every setting is on it.
    assert off_grid_notes(plan(), [off]) == []
