"""NAME=value on any experiment: one resolver, one meaning.

Every setting a command line gives over an experiment (`make X NAME=value`, `SET="NAME=value ..."`,
`sslab run X --set NAME=value`) is resolved here, the same way for every kind of experiment, before
anything is validated or run.  A NAME is, in this order:

    an axis       one of the experiment's axes, by its option (CCA=cubic,bbr; case-blind): the
                  values to run, narrowing the axis (a value beside the file's is a new one);
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
refused (SetError) before anything runs.  What the fields' values are worth is the scenario's
model's to say, when the experiment applies them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Collection, Mapping

from . import knobs as knob_table
from .overrides import ALIAS_RE, PATH_RE, Override, parse_value, split_setting


class SetError(ValueError):
    """A setting that names nothing the experiment has, or a value a knob refuses."""


@dataclass(frozen=True)
class Sets:
    """What a command line's settings resolved to, by kind (module docstring)."""
    #: Knob name -> value (sslab.scenario.knobs), those given by their own options included.
    knobs: dict[str, Any] = field(default_factory=dict)
    #: An axis's option (upper case) -> the values asked, as given ("cubic,bbr").
    axes: dict[str, str] = field(default_factory=dict)
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


def resolve(settings: Collection[str], what: str, *, axes: Collection[str] = (),
            aliases: Mapping[str, list[str]] | None = None, knobs: Mapping[str, Any] | None = None) -> Sets:
    """@settings (NAME=value each, in order) over the experiment @what names (`make startup`), whose
    axes' options are @axes and whose declared names are @aliases; @knobs, the knobs its own options
    gave (--suss-version), which a setting may repeat but not contradict."""
    aliases = aliases or {}
    by_option = {a.upper(): a for a in axes}
    found: dict[str, Any] = {}
    chosen: dict[str, str] = {}
    for name, value in (knobs or {}).items():
        # A knob's own option (--offloads linux) narrows the axis that sweeps its field, as its NAME= does.
        make_var = knob_table.BY_NAME[name].make_var
        if make_var in by_option:
            chosen[by_option[make_var]] = str(value)
        else:
            found[name] = value
    fields: list[Override] = []
    for text in settings:
        try:
            name, raw = split_setting(text)
        except ValueError as e:
            raise SetError(str(e)) from None
        if "." not in name and "*" not in name and name.upper() in by_option:
            option = by_option[name.upper()]
            if chosen.get(option, raw) != raw:
                raise SetError(f"{option} given twice: {chosen[option]} and {raw}")
            chosen[option] = raw
        elif name in knob_table.BY_ALIAS:
            _knob(text, name, raw, found)
        elif ALIAS_RE.match(name) and name in aliases:
            value = _value(text, raw)
            fields += [Override(tuple(p.split(".")), value, text) for p in aliases[name]]
        elif ALIAS_RE.match(name):
            raise SetError(f"{name}: {what} has no setting {name} ({_names(by_option, aliases)}; any field by its "
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
    return Sets(found, chosen, tuple(fields))


def _value(text: str, raw: str) -> Any:
    try:
        return parse_value(raw)
    except ValueError as e:
        raise SetError(f"{text}: {e}") from None


def _names(by_option: Mapping[str, str], aliases: Mapping[str, list[str]]) -> str:
    """The names an experiment takes, for a refusal: its axes', its aliases, the knobs'."""
    parts = []
    if by_option:
        parts.append("its axes: " + ", ".join(sorted(by_option.values())))
    if aliases:
        parts.append("its names: " + ", ".join(sorted(aliases)))
    parts.append("over every experiment: " + ", ".join(k.make_var for k in knob_table.KNOBS))
    return "; ".join(parts)
