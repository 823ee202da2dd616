"""Setting a scenario's field from the command line: one syntax for every experiment.

    make startup SET=bottleneck.rate=20mbit          # a field, by its path in the scenario file
    make startup SET="pairs.*.rtt=25ms bottleneck.buffer.rtt=25ms"
    make startup RTT=25ms                            # the same, by a name the experiment file declares

A path names a field as the scenario file writes it, after its `extends:`: mapping keys joined
by dots, a list's item by its index (`pairs.0.rtt`) or every item by `*` (`pairs.*.rtt`).  The
value is read as YAML reads a scalar (`2` a number, `25ms` text, `null` nothing), so it takes
every form the file does (`2BDP`, `20mbit`).  Overrides are applied to the scenario's plain data
before it is validated: a path the scenario does not have, or a value its field refuses, is
refused with the field's own error before anything runs.

An experiment file declares its familiar names as aliases of paths (`aliases: {RTT: [pairs.*.rtt,
bottleneck.buffer.rtt]}`): one name may set several fields (E1's buffer is 1 BDP of its RTT).  What
a NAME is (a knob, an axis, an alias or a path) sslab.scenario.sets resolves, the same way on every
experiment; this module sets the fields.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

#: A path: mapping keys (lower case, as the scenario files write them), list indices or `*`.
PATH_RE = re.compile(r"^[a-z_][a-z0-9_]*(\.([a-z_][a-z0-9_]*|[0-9]+|\*))*$")
#: An alias: a make variable's name.
ALIAS_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")


#: Mappings whose keys are alternative forms of one quantity (the model takes exactly one), each
#: with the keys that belong to it alone: setting one form drops the others the file gave and
#: theirs, so that `BUF=2BDP` (bottleneck.buffer.bdp) on a part whose buffer the file gives in
#: packets asks for 2 BDP, and `bottleneck.buffer.packets=100` on E1's 1 BDP of 100 ms asks for 100
#: packets, instead of either being refused for giving two.
ONE_FORM_OF = {"bottleneck.buffer": {"packets": (), "bytes": (), "bdp": ("rtt",), "time": ()}}


class OverrideError(ValueError):
    """An override that cannot apply (a bad path, a field the scenario does not have)."""


@dataclass(frozen=True)
class Override:
    """One field set: its path in the scenario's data, and the value."""
    path: tuple[str, ...]
    value: Any
    #: As given on the command line ("RTT=25ms", "bottleneck.rate=20mbit"): what reports name.
    given: str

    @property
    def dotted(self) -> str:
        return ".".join(self.path)


def parse_value(text: str) -> Any:
    """A value as the scenario file would hold it: YAML's reading of one scalar."""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise OverrideError(f"cannot read the value {text!r}: {e}") from None
    if isinstance(value, (dict, list)):
        raise OverrideError(f"{text!r}: give one value (a field's path names the field inside a mapping)")
    return value


def split_setting(text: str) -> tuple[str, str]:
    """NAME=VALUE as (NAME, VALUE); refused without '=' or a name."""
    name, eq, value = text.partition("=")
    if not eq or not name.strip():
        raise OverrideError(f"{text!r}: give NAME=VALUE (a field's path, e.g. bottleneck.rate=20mbit, or a name "
                            f"the experiment declares, e.g. RTT=25ms)")
    return name.strip(), value.strip()


def _set(node: Any, path: tuple[str, ...], value: Any, where: str) -> Any:
    """@node (plain data) with the field at @path set to @value; copies, never changes @node."""
    head, rest = path[0], path[1:]
    here = f"{where}.{head}" if where else head
    if isinstance(node, list):
        if head == "*":
            return [_set(item, rest, value, here) if rest else value for item in node]
        if not head.isdigit() or int(head) >= len(node):
            raise OverrideError(f"{here}: the list at {where or 'the top'} has {len(node)} item(s); give an index "
                                f"under {len(node)} or *")
        out = list(node)
        out[int(head)] = _set(node[int(head)], rest, value, here) if rest else value
        return out
    if isinstance(node, dict):
        if head == "*" or head.isdigit():
            raise OverrideError(f"{here}: {where or 'the top'} is a mapping, not a list")
        out = dict(node)
        if rest:
            if head not in node and len(rest) == 1:
                # A mapping the file leaves at its default (module_params: none), given its first key;
                # the scenario's model says whether the field is one.
                out[head] = {rest[0]: value}
                return out
            if head not in node or not isinstance(node[head], (dict, list)):
                raise OverrideError(f"{here}: the scenario has no mapping or list here to set "
                                    f"{'.'.join(rest)} in")
            out[head] = _set(node[head], rest, value, here)
        else:
            if head in (forms := ONE_FORM_OF.get(where, {})):
                for other, its_own in forms.items():
                    if other != head:
                        for key in (other, *its_own):
                            out.pop(key, None)
            out[head] = value
        return out
    raise OverrideError(f"{here}: {where} is a value, not a mapping or list")


def apply(data: dict, overrides: list[Override]) -> dict:
    """@data (a scenario's plain data, `extends:` followed) with every override set, in order."""
    for o in overrides:
        data = _set(data, o.path, o.value, "")
    return data


def dir_suffix(overrides: list[Override]) -> str:
    """What a report directory's name adds for @overrides, as a knob's does: `_set-<given>` each,
    reduced to the characters a directory name keeps."""
    return "".join("_set-" + re.sub(r"[^A-Za-z0-9.*-]+", "-", o.given).replace("*", "all")
                   for o in {o.given: o for o in overrides}.values())
