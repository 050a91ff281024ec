"""Which modules of the repository a probed module imports, to serve them inside the probe.

``package_of(path, read)``: the dotted name of a source module and of its package, found by walking
up the directories that hold an ``__init__.py`` (``src/pkg/sub/mod.py``: ``pkg.sub.mod``,
``pkg.sub``). ``closure(texts, read, skip)``: the repository's own modules (dotted name -> path)
that the modules ``texts`` (path -> text) import, absolutely within their top package or
relatively, anywhere in the file (lazy imports inside functions too), and what those import in turn,
``DEPTH`` levels deep, with the packages above each (served empty unless imported themselves);
modules in ``skip`` (the ones the gold patch touches: their version is the probed one) are left
out, and at most ``MAX_MODULES``/``MAX_BYTES`` are kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache

from sweworld.surrogates.swr.patched import FileSource
from sweworld.surrogates.swr.syntax import module
from sweworld.surrogates.swt.importgraph import imported_names

DEPTH = 1
MAX_MODULES = 40
MAX_BYTES = 3_000_000


def package_of(path: str, read: FileSource) -> tuple[str, str, str]:
    """(dotted name, package, the directory the top package lies in) of the module at ``path``."""
    parts = path[:-3].split("/")
    is_init = parts[-1] == "__init__"
    dirs = parts[:-1]
    top = len(dirs)
    while top > 0 and read("/".join([*dirs[:top], "__init__.py"])) is not None:
        top -= 1
    names = dirs[top:] + ([] if is_init else [parts[-1]])
    package = names if is_init else names[:-1]
    return ".".join(names) or parts[-1], ".".join(package), "/".join(dirs[:top])


def _imports(text: str, name: str, package: str) -> set[str]:
    """Absolute dotted names ``text`` imports (``from a import b``: ``a`` and ``a.b``, ``b`` may be a module)."""
    return set(_imports_cached(text, name, package))


@lru_cache(maxsize=512)
def _imports_cached(text: str, name: str, package: str) -> frozenset[str]:
    tree = module(text).tree
    return frozenset(imported_names(tree, package)) if tree is not None else frozenset()


def _path(dotted: str, root: str, read: FileSource) -> tuple[str, str] | None:
    """(path, text) of the module ``dotted`` under ``root``."""
    stem = "/".join(filter(None, [root, *dotted.split(".")]))
    for path in (stem + ".py", stem + "/__init__.py"):
        text = read(path)
        if text is not None:
            return path, text
    return None


def closure(texts: Mapping[str, Iterable[str]], read: FileSource, skip: set[str]) -> dict[str, tuple[str, bool]]:
    """See the module docstring: dotted name -> (path, whether its text is served: a package only
    above what is imported is served empty, so that importing ``pkg.sub.mod`` does not run all of
    ``pkg/__init__.py``)."""
    out: dict[str, tuple[str, bool]] = {}
    total = 0
    frontier: list[tuple[str, str, str, str]] = []  # (text, name, package, root)
    tops: set[tuple[str, str]] = set()
    for path, versions in texts.items():
        name, package, root = package_of(path, read)
        tops.add((name.split(".", 1)[0], root))
        frontier += [(text, name, package, root) for text in versions]
    for _ in range(DEPTH):
        found: list[tuple[str, str, str, str]] = []
        for text, name, package, root in frontier:
            for dotted in sorted(_imports(text, name, package)):
                if (dotted.split(".", 1)[0], root) not in tops or len(out) >= MAX_MODULES:
                    continue
                parts = dotted.split(".")
                for i in range(1, len(parts) + 1):
                    wanted, whole = ".".join(parts[:i]), i == len(parts)
                    if wanted in out and (out[wanted][1] or not whole):
                        continue
                    hit = _path(wanted, root, read)
                    if hit is None or hit[0] in skip:
                        continue
                    if whole and total + len(hit[1]) <= MAX_BYTES:
                        out[wanted] = (hit[0], True)
                        total += len(hit[1])
                        found.append((hit[1], wanted, wanted if hit[0].endswith("__init__.py") else
                                      wanted.rpartition(".")[0], root))
                    elif wanted not in out:
                        out[wanted] = (hit[0], False)
        frontier = found
    return out
