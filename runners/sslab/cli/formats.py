"""The file formats, read from the models that load them: the documentation's reference page.

Each model that reads a file (an experiment, a scenario, a series, a matrix, a matrix's plan) and every model
nested in it becomes a table of its fields: the name a file uses (its alias), the type, the
default and what the field says of itself.  The docs build calls formats_markdown() (docs/hooks.py),
so the page cannot drift from the code.
"""

from __future__ import annotations

import inspect
import re
import types
import typing

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from ..experiment.spec import ExperimentSpec
from ..matrix.spec import MatrixSpec
from ..plan_record import MatrixPlan
from ..scenario.model import Scenario

#: The files, with the model that reads each and where such files live.
FILES = (
    ("Experiment file", ExperimentSpec, "`experiments/<name>.yaml`: the make target of its name"),
    ("Scenario file", Scenario, "`experiments/scenarios/*.yaml` (and `topologies/` for topologies they extend)"),
    ("Matrix", MatrixSpec, "an experiment's `matrix:` mapping beside its `scenario:` and `axes:` (its name, "
                           "iterations, compared starts, ...: keyed cells over axes), or a matrix file's `matrix:` "
                           "section (`experiments/scenarios/smoke.yaml`)"),
    ("Matrix plan (written by the harness)", MatrixPlan,
     "`results/<matrix>/<selection>/plans/plan-<stamp>.json`: a matrix's (or an experiment's parts') cells as "
     "the controller planned them; hosts run it and reports read it (`sslab.plan_record`)"),
)


def _type_name(t) -> str:
    """A field's annotation as a reader writes it (`int | None`, `list[Flow]`)."""
    origin = typing.get_origin(t)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in typing.get_args(t))
    if origin is typing.Literal:
        return " | ".join(repr(a) for a in typing.get_args(t))
    if origin is typing.Annotated:
        return _type_name(typing.get_args(t)[0])
    if origin is not None:
        args = ", ".join(_type_name(a) for a in typing.get_args(t))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    if t is type(None):
        return "None"
    return getattr(t, "__name__", str(t))


def _nested(t) -> list[type[BaseModel]]:
    """The models a field's annotation names, at any depth."""
    if inspect.isclass(t) and issubclass(t, BaseModel):
        return [t]
    return [m for a in typing.get_args(t) for m in _nested(a)]


def _default(field) -> str:
    if field.is_required():
        return "required"
    value = field.default_factory() if field.default_factory is not None else field.default
    if value is PydanticUndefined:
        return ""
    if isinstance(value, BaseModel):
        return "its own defaults"
    return f"`{value!r}`"


def _field_comments(model: type[BaseModel]) -> dict[str, str]:
    """What the model's source says of each field: the comment lines just above it, or the one at
    the end of its line (the models document their fields in comments, not in descriptions)."""
    try:
        lines = inspect.getsource(model).splitlines()
    except (OSError, TypeError):
        return {}
    out: dict[str, str] = {}
    above: list[str] = []
    for line in lines[1:]:
        stripped = line.strip()
        if stripped.startswith("#"):
            above.append(stripped.lstrip("#:").strip())
            continue
        m = re.match(r"^    ([A-Za-z_][A-Za-z0-9_]*)\s*:\s*[^=]", line)
        if m:
            trailing = line.split("  # ", 1)[1].strip() if "  # " in line else ""
            out[m.group(1)] = " ".join(above) or trailing
        above = []
    return out


def _first_paragraph(doc: str | None) -> str:
    text = inspect.cleandoc(doc or "").split("\n\n")[0]
    return re.sub(r"\s+", " ", text)


def model_table(model: type[BaseModel]) -> tuple[str, list[type[BaseModel]]]:
    """@model's fields as a markdown table, and the models its fields name."""
    rows = ["| field | type | default | |", "|---|---|---|---|"]
    nested: list[type[BaseModel]] = []
    comments = _field_comments(model)
    for name, field in model.model_fields.items():
        key = field.alias or name
        about = re.sub(r"\s+", " ", field.description or comments.get(name, "")).replace("|", "\\|")
        rows.append(f"| `{key}` | {_type_name(field.annotation).replace('|', '&#124;')} | {_default(field)} | {about} |")
        nested += _nested(field.annotation)
    return "\n".join(rows), nested


def formats_markdown() -> str:
    """Every file format's models, each table once, in the order a reader meets them."""
    out: list[str] = []
    done: set[type] = set()
    for title, top, where in FILES:
        out += [f"## {title}", "", f"Where: {where}.", ""]
        queue = [top]
        while queue:
            model = queue.pop(0)
            if model in done:
                continue
            done.add(model)
            table, nested = model_table(model)
            doc = _first_paragraph(model.__doc__)
            out += [f"### `{model.__name__}`", "", *([doc, ""] if doc else []), table, ""]
            queue += [m for m in nested if m not in done]
    return "\n".join(out)


def module_params_markdown() -> str:
    """Our module's parameters as a table (docs/starts.md): each one's name, default, description and
    the file that declares it (sslab.ccas.module_param_declarations, read from the C sources)."""
    from ..ccas import module_param_declarations
    rows = ["| parameter | default | what it is | declared in |", "|---|---|---|---|"]
    for p in module_param_declarations():
        what = p.description.replace("|", "\\|")
        rows.append(f"| `{p.name}` | {p.default} | {what} | `kernel/{p.source}` |")
    return "\n".join(rows) + "\n"
