"""Datasets shipped inside the package, by name (the file name without ``.jsonl`` / ``.jsonl.gz``).

- ``default`` (``default.jsonl.gz``): instances synthesized by ``sweworld synth`` (bugs injected into
  pinned PyPI releases, graded by the release's own tests); the default dataset of every command.
- ``lite`` (``lite.jsonl.gz``): a small subset of ``default`` for quick runs (``sweworld demo``).
- ``demo`` (``demo.jsonl``): three hand-written real bugs in more-itertools 10.5.0 (their buggy base
  commits are derived deterministically from the release and the fix, see ``sweworld.repos.derive``),
  then three releases as smoke tasks. It is the default while ``default.jsonl.gz`` does not ship.
- ``smoke`` (``smoke.jsonl``): the releases only.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from sweworld.core.errors import DatasetError

DEFAULT = "default"
FALLBACK = "demo"
LITE = "lite"
SUFFIXES = (".jsonl.gz", ".jsonl")


def _root() -> Path:
    return Path(str(resources.files(__name__)))


def _name_of(path: Path) -> str | None:
    for suffix in SUFFIXES:
        if path.name.endswith(suffix) and len(path.name) > len(suffix):
            return path.name[: -len(suffix)]
    return None


def available() -> dict[str, Path]:
    """Every shipped dataset, name -> file, sorted by name (``.jsonl.gz`` wins over a ``.jsonl`` of the
    same name)."""
    found: dict[str, Path] = {}
    for path in sorted(_root().iterdir()):
        name = _name_of(path)
        if name is not None and path.is_file() and (name not in found or path.name.endswith(".gz")):
            found[name] = path
    return dict(sorted(found.items()))


def default_path() -> Path:
    """The default dataset: ``default.jsonl.gz`` when it ships, else ``demo.jsonl``."""
    shipped = available()
    return shipped.get(DEFAULT) or shipped[FALLBACK]


def path_of(name: str) -> Path:
    """The file of a shipped dataset; ``default`` is always valid (see ``default_path``)."""
    if name == DEFAULT:
        return default_path()
    shipped = available()
    if name not in shipped:
        raise DatasetError(f"no shipped dataset named {name!r}",
                           hint=f"shipped datasets: {', '.join(sorted({DEFAULT, *shipped}))}")
    return shipped[name]


def is_shipped(name: str) -> bool:
    """True for ``default`` and every name in ``available()``."""
    return name == DEFAULT or name in available()
