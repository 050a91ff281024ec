"""One registry: names mapped to ``"package.module:attr"`` targets, loaded on first use.

Every pluggable kind (backends, world models, verifiers, policies, runners) is a ``Registry``, so a
name resolves the same way everywhere and nothing heavy is imported before it is asked
for. Third-party packages add entries through Python entry points (the group each registry names:
``sweworld.backends``, ``.world_models``, ``.verifiers``, ``.policies``, ``.runners``; e.g.
``[project.entry-points."sweworld.backends"] mine = "mypkg.backend:MyBackend"``), read on the first
lookup; an entry given in code (``register``) wins over one from an entry point of the same name.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from sweworld.core.errors import ConfigError

T = TypeVar("T")


def load(target: str) -> Any:
    """The object ``"package.module:attr"`` names (``ConfigError`` when it cannot be imported)."""
    module, sep, attr = target.partition(":")
    if not sep or not module or not attr:
        raise ConfigError(f"{target!r} is not a 'package.module:attr' target",
                          hint="write the module's dotted path, a colon, then the attribute")
    try:
        obj: Any = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot load {target!r}: {exc}",
                          hint="check the name, or install the extra that provides it") from exc
    return obj


def keywords(factory: Callable[..., Any]) -> tuple[str, ...] | None:
    """The keyword options ``factory`` takes, or None when it takes any (``**options``)."""
    parameters = inspect.signature(factory).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return None
    return tuple(p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def refuse_unknown(what: str, options: Iterable[str], takes: Iterable[str]) -> None:
    """``ConfigError`` naming the ``options`` that ``what`` (e.g. "the swr verifier") does not take,
    with a hint listing what it takes; nothing when every option is taken."""
    takes = list(takes)
    unknown = sorted(set(options) - set(takes))
    if unknown:
        raise ConfigError(f"{what} does not take {', '.join(map(repr, unknown))}",
                          hint=f"it takes {', '.join(takes) or 'no options'}")


class Registry(Generic[T]):
    """``name -> target``: a ``"module:attr"`` string (imported on first use) or the object itself."""

    def __init__(self, kind: str, entries: Mapping[str, str | T] | None = None, *, group: str):
        self.kind = kind
        self.group = group
        self._entries: dict[str, str | T] = dict(entries or {})
        self._loaded: dict[str, T] = {}
        self._plugins_read = False

    def _plugins(self) -> None:
        if self._plugins_read:
            return
        self._plugins_read = True
        for point in entry_points(group=self.group):
            self._entries.setdefault(point.name, point.value)

    def register(self, name: str, target: str | T, *, replace: bool = False) -> None:
        """Add ``name`` (``ConfigError`` if it exists and ``replace`` is false)."""
        self._plugins()
        if name in self._entries and not replace:
            raise ConfigError(f"{self.kind} {name!r} is already registered", hint="pass replace=True to replace it")
        self._entries[name] = target
        self._loaded.pop(name, None)

    def names(self) -> list[str]:
        """The registered names, sorted."""
        self._plugins()
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        self._plugins()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def get(self, name: str) -> T:
        """What ``name`` refers to, imported on first use (``ConfigError`` naming the known ones)."""
        self._plugins()
        if name in self._loaded:
            return self._loaded[name]
        if name not in self._entries:
            raise ConfigError(f"unknown {self.kind} {name!r}", hint=f"use one of {', '.join(self.names())}")
        target = self._entries[name]
        obj = load(target) if isinstance(target, str) else target
        self._loaded[name] = obj
        return obj

    def checked(self, name: str, **options: Any) -> Callable[..., T]:
        """``name``'s factory with ``options`` bound, after refusing those it does not take (a
        ``ConfigError`` naming them and listing what it takes; a factory taking ``**options`` takes any)."""
        factory: Callable[..., Any] = self.get(name)  # type: ignore[assignment]
        takes = keywords(factory)
        if takes is not None:
            refuse_unknown(f"the {name} {self.kind}", options, takes)
        return partial(factory, **options) if options else factory

    def create(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """``get(name)(*args, **kwargs)``: build the registered factory or class."""
        factory: Callable[..., Any] = self.get(name)  # type: ignore[assignment]
        return factory(*args, **kwargs)


__all__ = ["Registry", "keywords", "load", "refuse_unknown"]
