"""Each run command's configuration, built once: from its flags, or from ``--config FILE.yaml`` with
the flags given on the command line overriding the file's values. The run writes the resolved
configuration as ``config.yaml`` beside its outputs, so ``--config`` of that file repeats it.

Each command names where its flags go in its configuration (``BACKEND``, ``RUNNER``: the shared
ones); a flag it does not name is the key of the same name. A backend flag that does not apply to
the chosen backend (``--audit-rate`` with ``--backend real``) is dropped, as the backends ignored
it before; in a file, such a key is an error, as every unknown key is (one message, exit 2).
"""

from __future__ import annotations

import copy
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from pydantic import BaseModel

from sweworld.cli import common

if TYPE_CHECKING:
    import click

M = TypeVar("M", bound=BaseModel)

ConfigFile = Annotated[Path | None, typer.Option(
    "--config", exists=True, dir_okay=False, readable=True,
    help="Run configuration (YAML: the keys of the flags; an earlier run's config.yaml repeats it). "
    "Flags given on the command line override its values.")]

BACKEND: dict[str, tuple[str, ...]] = {
    "backend": ("backend", "kind"), "repos_dir": ("backend", "repos_dir"), "network": ("backend", "network"),
    "traces": ("backend", "traces"), "world": ("backend", "world", "kind"), "world_url": ("backend", "world", "urls"),
    "world_model": ("backend", "world", "model"), "prompt_style": ("backend", "world", "style"),
    "world_traces": ("backend", "world", "traces"), "world_max_tokens": ("backend", "world", "max_tokens"),
    "audit_rate": ("backend", "audit_rate"), "route_below": ("backend", "route_below"),
    "isolation": ("backend", "sandbox", "isolation"), "env_source": ("backend", "env_source")}
RUNNER: dict[str, tuple[str, ...]] = {"runner": ("runner", "name"), "ray_address": ("runner", "address"),
                                      "workers": ("runner", "workers")}
GIVEN = ("COMMANDLINE", "ENVIRONMENT")
"""The sources of a value given for this run (by name: typer may bring its own copy of click)."""


def _put(data: dict, path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        if not isinstance(data.get(key), dict):
            data[key] = {}
        data = data[key]
    data[path[-1]] = value


def _given(ctx: click.Context, name: str) -> bool:
    source = ctx.get_parameter_source(name)
    return source is not None and source.name in GIVEN


def _missing(ctx: click.Context, name: str) -> Exception:
    """click's own "Missing option" error (of the click the context comes from)."""
    exceptions = importlib.import_module(type(ctx).__module__.rpartition(".")[0] + ".exceptions")
    param = next(p for p in ctx.command.params if p.name == name)
    return exceptions.MissingParameter(ctx=ctx, param=param)


def _fit_backend(model: type[BaseModel], data: dict, flagged: set[tuple[str, ...]]) -> None:
    """Drop the flag-set backend keys the chosen backend has no field for (a file's stay: errors)."""
    from sweworld.core.config import config_class
    from sweworld.core.errors import ConfigError

    backend = data.get("backend")
    if "backend" not in model.model_fields or not isinstance(backend, dict):
        return
    backend.setdefault("kind", "real")
    try:
        chosen = config_class(str(backend["kind"]))
    except ConfigError:  # an unknown backend: validation names it
        return
    for path in flagged:
        if path[0] == "backend" and path[1] not in chosen.model_fields:
            backend.pop(path[1], None)
    if backend.get("sandbox") == {"isolation": None}:
        backend.pop("sandbox")


def resolve(ctx: click.Context, model: type[M], paths: dict[str, tuple[str, ...]] | None = None, *,
            negated: tuple[str, ...] = (), skip: tuple[str, ...] = ("config",)) -> M:
    """``model`` from ``--config`` (when given) and the flags (all of them without a file; only those
    given on the command line with one). ``typer.Exit(2)`` after one message on a bad file or key."""
    paths = paths or {}
    source = ctx.params.get("config")
    with common.reported():
        from sweworld.core.config import files
        data, lines = files.read(source) if source else ({}, {})
        data = copy.deepcopy(data)
        flagged: set[tuple[str, ...]] = set()
        for name, value in ctx.params.items():
            if name in skip or (source is not None and not _given(ctx, name)):
                continue
            path = paths.get(name, (name,))
            if value in (None, [], ()) and len(path) == 1 and model.model_fields[path[0]].is_required():
                raise _missing(ctx, name)  # a list option not given is empty
            if value is None and len(path) > 1 and name in BACKEND:
                continue  # an unset backend or runner flag: the model's default
            _put(data, path, (not value) if name in negated else value)
            flagged.add(path)
        _fit_backend(model, data, flagged)
        config = files.validate(model, data, source=source, lines=lines)
    return _world_kind(config)


def _world_kind(config: M) -> M:
    """A sim or hybrid backend without a world kind: openai with URLs, else embedded (said once)."""
    backend = getattr(config, "backend", None)
    world = getattr(backend, "world", None)
    if world is not None and world.kind_defaulted:  # WorldModelConfig chose it: openai with URLs, else embedded
        from sweworld.cli.backend_opts import world_kind
        world_kind(None, world.urls)  # says so in one line when it is the embedded world
    return config


def backend(config: Any, builder: Any = None):
    """The backend of ``config`` (a sim world knows the run's tasks: ``DatasetSelection``)."""
    from sweworld.backends import make_backend

    return make_backend(config.backend, timeouts=getattr(config, "timeouts", None), builder=builder)


def config_path(out: Path) -> Path:
    """Where a run writing the file ``out`` writes its resolved configuration: ``<out>.config.yaml``."""
    return out.with_name(out.name + ".config.yaml")


def save(config: BaseModel, path: Path) -> Path:
    """Write the resolved ``config`` to ``path`` (``config.yaml`` of the run)."""
    from sweworld.core.config import files
    return files.write(config, path)


__all__ = ["BACKEND", "RUNNER", "ConfigFile", "backend", "config_path", "resolve", "save"]
