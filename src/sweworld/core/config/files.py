"""Configuration files: YAML read with the line of every key (so an unknown key is one error at
``file:line``), and the resolved configuration written back (``config.yaml``), which reads again
into the same configuration."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar, get_args

import yaml
from pydantic import BaseModel, ValidationError

from sweworld.core.errors import ConfigError

M = TypeVar("M", bound=BaseModel)
CONFIG_FILE = "config.yaml"
"""The resolved configuration a run writes into its output directory."""


def _lines(node: yaml.Node, path: tuple = ()) -> dict[tuple, int]:
    """Each key path of the YAML tree -> its 1-based line."""
    found: dict[tuple, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            here = (*path, key.value)
            found[here] = key.start_mark.line + 1
            found.update(_lines(value, here))
    elif isinstance(node, yaml.SequenceNode):
        for i, value in enumerate(node.value):
            found.update(_lines(value, (*path, i)))
    return found


def read(path: Path) -> tuple[dict[str, Any], dict[tuple, int]]:
    """The mapping in ``path`` and the line of each key (``ConfigError`` when it is not one)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except OSError as exc:
        raise ConfigError(f"cannot read the configuration: {exc.strerror or exc}", where=str(path)) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ConfigError(f"not valid YAML: {getattr(exc, 'problem', None) or exc}", where=where) from exc
    if data is None:
        return {}, {}
    if not isinstance(data, dict):
        raise ConfigError(f"a configuration is a mapping of keys, not a {type(data).__name__}", where=str(path))
    return data, _lines(node)


def _key_path(loc: tuple, data: Any) -> tuple:
    """``loc`` of a validation error without the union tags pydantic puts in it (``backend.sim.x``)."""
    path: list = []
    for part in loc:
        if (isinstance(data, dict) and part in data) or (isinstance(data, list) and isinstance(part, int) and part < len(data)):
            data = data[part]
        elif isinstance(data, dict) and isinstance(part, str) and (
                part == data.get("kind") or part.startswith(("tagged-union[", "json-or-python[", "function-"))):
            continue  # a union's tag: the backend's kind, or the arm pydantic tried
        else:
            data = None
        path.append(part)
    return tuple(path)


def validate(model: type[M], data: dict[str, Any], *, source: Path | None = None,
             lines: dict[tuple, int] | None = None) -> M:
    """``model`` of ``data``: ``ConfigError`` naming the first bad key (``file:line`` when known)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        path = _key_path(tuple(first["loc"]), data)
        key = ".".join(str(p) for p in path) or "(top level)"
        line = (lines or {}).get(path)
        where = None if source is None else f"{source}:{line}" if line else str(source)
        if first["type"] == "extra_forbidden":
            message = f"unknown key {key!r}"
            hint = f"the keys of {key.rpartition('.')[0] or 'the top level'}: " + _known(model, path[:-1], data)
        else:
            message, hint = f"{key}: {first['msg']}", None
        raise ConfigError(message, where=where or None, hint=hint) from None


def _known(model: type[BaseModel], path: tuple, data: Any) -> str:
    """The keys of the model at ``path`` (the union member ``data``'s ``kind`` picks)."""
    fields = model.model_fields
    for part in path:
        info = fields.get(part) if isinstance(part, str) else None
        data = data.get(part) if isinstance(data, dict) else None
        members = [t for t in (getattr(info, "annotation", None), *get_args(getattr(info, "annotation", None)))
                   if isinstance(t, type) and issubclass(t, BaseModel)]
        kind = data.get("kind") if isinstance(data, dict) else None
        chosen = next((m for m in members if m.model_fields.get("kind") is None
                       or m.model_fields["kind"].default == kind), None)
        if chosen is None:
            return "see the documentation"
        fields = chosen.model_fields
    return ", ".join(fields)


def load(model: type[M], path: Path) -> M:
    """The configuration in ``path`` (unknown keys and bad values are ``ConfigError``)."""
    data, lines = read(path)
    return validate(model, data, source=path, lines=lines)


def dump(config: BaseModel) -> str:
    """``config`` as YAML (every value, defaults included)."""
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, default_flow_style=False)


def write(config: BaseModel, path: Path) -> Path:
    """Write ``config`` to ``path`` (by rename: a reader never sees half of it); returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(dump(config), encoding="utf-8")
    tmp.replace(path)
    return path


__all__ = ["CONFIG_FILE", "dump", "load", "read", "validate", "write"]
