"""NAME=value on any experiment: one resolver, one meaning.

Every setting a command line gives over an experiment (`make X NAME=value`, `SET="NAME=value ..."`,
`sslab run X --set NAME=value`) is resolved here, the same way for every kind of experiment, before
anything is validated or run.  A NAME is, in this order:

    an axis       one of the experiment's axes, by its option (CCA=cubic,bbr; case-blind): the
                  values to run, narrowing the axis, each read as the axis's label it names
                  (BUF=2bdp is 2BDP, RTT=100 is 100ms: Axis.named); a value beside the file's is
                  a new one, written as the axis writes its own (RTT=30 is 30ms);
                  a knob's make variable too where the experiment sweeps its field as an axis
                  (the calibration's OFFLOADS=, SOCKET_BUFFERS=)
    a knob        its make variable or its field's path (SUSS_VERSION=2025,
                  topology.sender_qdisc=fq): a setting over every experiment's scenarios
                  (sslab.scenario.knobs), archived under the knob's name whichever spelling
    an alias      a name in capitals the experiment declares for fields (E1's RTT=25ms sets
                  pairs.*.rtt and bottleneck.buffer.rtt)
    a field       a path in the scenario as its file writes it (bottleneck.rate=20mbit,
                  pairs.0.rtt=25ms; sslab.scenario.overrides), set before validation

So a name narrows an axis where the experiment has one, and otherwise sets the field it names; a
name that is none of these, a value a knob refuses, or one name given twice with two values is
refused (SetError) before anything runs, and so is an axis's value the file does not list where
none can be new: on an axis of mappings (a value sets several fields the file must give), or a
word that is no congestion control's name on a start's axis.  What the values are worth (a field's
range, whether the kernel under test offers a start) is the scenario's model's and the kernel's to
say, when the experiment applies them (a matrix: Matrix.check_chosen).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Collection, Mapping

from ..ccas import is_cc_name
from . import knobs as knob_table
from .axes import Axis
from .overrides import ALIAS_RE, PATH_RE, Override, parse_value, split_setting


class SetError(ValueError):
    """A setting that names nothing the experiment has, or a value a knob refuses."""


@dataclass(frozen=True)
class Sets:
    """What a command line's settings resolved to, by kind (module docstring)."""
    #: Knob name -> value (sslab.scenario.knobs), those given by their own options included.
    knobs: dict[str, Any] = field(default_factory=dict)
    #: An axis's name -> the labels asked, in the order asked (CCA=cubic,bbr: large_cc -> [cubic, bbr]).
    axes: dict[str, list[str]] = field(default_factory=dict)
    #: Fields of the scenario set by path, an alias's paths in its place.
    fields: tuple[Override, ...] = ()


def _knob(text: str, name: str, raw: str, found: dict[str, Any]) -> None:
    k = knob_table.BY_ALIAS[name]
    try:
        value = k.type(raw)
    except ValueError:
        value = None
    if value not in k.choices:
        raise SetError(f"{text}: {k.make_var} takes {', '.join(map(str, k.choices))}")
    if found.get(k.name, value) != value:
        raise SetError(f"{k.make_var} given twice: {found[k.name]} and {value}")
    found[k.name] = value


def resolve(settings: Collection[str], what: str, *, axes: Mapping[str, Axis] | None = None,
            aliases: Mapping[str, list[str]] | None = None, knobs: Mapping[str, Any] | None = None) -> Sets:
    """@settings (NAME=value each, in order) over the experiment @what names (`make startup`), whose
    axes are @axes (those with an option are chosen by it) and whose declared names are @aliases;
    @knobs, the knobs its own options gave (--suss-version), which a setting may repeat but not
    contradict."""
    aliases = aliases or {}
    axes = axes or {}
    # An option -> the axis it chooses on.
    options = {a.option: name for name, a in axes.items() if a.option}
    found: dict[str, Any] = {}
    chosen: dict[str, str] = {}
    for name, value in (knobs or {}).items():
        # A knob's own option (--offloads linux) narrows the axis that sweeps its field, as its NAME= does.
        make_var = knob_table.BY_NAME[name].make_var
        if make_var in options:
            chosen[make_var] = str(value)
        else:
            found[name] = value
    fields: list[Override] = []
    for text in settings:
        try:
            name, raw = split_setting(text)
        except ValueError as e:
            raise SetError(str(e)) from None
        if "." not in name and "*" not in name and name.upper() in options:
            option = name.upper()
            if chosen.get(option, raw) != raw:
                raise SetError(f"{option} given twice: {chosen[option]} and {raw}")
            chosen[option] = raw
        elif name in knob_table.BY_ALIAS:
            _knob(text, name, raw, found)
        elif ALIAS_RE.match(name) and name in aliases:
            value = _value(text, raw)
            fields += [Override(tuple(p.split(".")), value, text) for p in aliases[name]]
        elif ALIAS_RE.match(name):
            raise SetError(f"{name}: {what} has no setting {name} ({_names(options, aliases)}; any field by its "
                           f"path: SET=bottleneck.rate=20mbit)")
        elif PATH_RE.match(name):
            fields.append(Override(tuple(name.split(".")), _value(text, raw), text))
        else:
            raise SetError(f"{name!r}: not a field's path (keys joined by dots, a list's item by its index or *: "
                           f"pairs.*.rtt) nor a name in capitals (RTT)")
    for o in fields:
        other = next((p for p in fields if p.dotted == o.dotted and p.value != o.value), None)
        if other is not None:
            raise SetError(f"{o.dotted} set twice, to two values: {o.given} and {other.given}")
    return Sets(found, {options[o]: _labels(axes[options[o]], options[o], o, raw, what) for o, raw in chosen.items()},
                tuple(fields))


def _labels(axis: Axis, name: str, option: str, raw: str, what: str) -> list[str]:
    """The labels @raw (OPTION's value, comma-separated) asks of @axis, each once, in the order asked."""
    own = axis.labels(name)
    picked: list[str] = []
    for word in (w.strip() for w in raw.split(",")):
        if not word:
            continue
        label = axis.named(name, word)
        if label not in own and any(isinstance(v, dict) for v in axis.values):
            # A mapping value sets several fields together: one the file does not list sets none of them.
            raise SetError(f"{option}={word}: {what}'s {name} is one of {', '.join(own)}")
        if label not in own and axis.cca and not any(is_cc_name(cc) for cc in axis.may_run(label)):
            raise SetError(f"{option}={word}: not a congestion-control name (up to 15 of a-z, 0-9 and _, "
                           f"a letter first)")
        if label not in picked:
            picked.append(label)
    if not picked:
        raise SetError(f"{option} is empty")
    return picked


def _value(text: str, raw: str) -> Any:
    try:
        return parse_value(raw)
    except ValueError as e:
        raise SetError(f"{text}: {e}") from None


def _names(options: Collection[str], aliases: Mapping[str, list[str]]) -> str:
    """The names an experiment takes, for a refusal: its axes', its aliases, the knobs'."""
    parts = []
    if options:
        parts.append("its axes: " + ", ".join(sorted(options)))
    if aliases:
        parts.append("its names: " + ", ".join(sorted(aliases)))
    parts.append("over every experiment: " + ", ".join(k.make_var for k in knob_table.KNOBS))
    return "; ".join(parts)
