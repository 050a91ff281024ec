"""What a server's error reply may say: the exception, never the host's paths.

A client of ``sweworld runtime serve`` is told which exception a request raised and why (swerex's
``RemoteRuntime`` re-raises it), but neither where sweworld is installed nor where the server keeps
its data: ``HostPaths.text`` replaces the host's own directories (sweworld's source, the Python
virtual environment and site-packages, ``$SWEWORLD_HOME``, the home directory, the server's working directory
and whatever the server adds: its dataset's directory, its clones) by a name in angle brackets, and
``HostPaths.traceback`` writes an exception's frames as ``module, line N, in function``, with no file
name and no source line. Directories of one component (``/root``, ``/tmp``, ``/usr``) are left alone:
an episode has its own of those, and the paths a message names inside an episode are the client's.
"""

from __future__ import annotations

import os
import re
import site
import sys
import sysconfig
import traceback
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def _forms(path: str | os.PathLike) -> set[str]:
    """``path`` as given and resolved, without a trailing slash."""
    text = os.path.abspath(os.fspath(path))
    forms = {text.rstrip("/"), os.path.realpath(text).rstrip("/")}
    return {form for form in forms if form.count("/") >= 2}  # one component: an episode has it too


class HostPaths:
    """The host directories an error reply must not name, each with the label it says instead."""

    def __init__(self, extra: Iterable[tuple[str | os.PathLike, str]] = ()):
        import sweworld
        from sweworld.core.paths import home
        named: list[tuple[str | os.PathLike, str]] = [(Path(sweworld.__file__).parent, "<sweworld>")]
        named += [(sysconfig.get_paths()[key], "<site-packages>") for key in ("purelib", "platlib")]
        named.append((site.getusersitepackages(), "<site-packages>"))
        if sys.prefix != sys.base_prefix:  # a virtual environment (the system's Python is the episode's too)
            named.append((sys.prefix, "<venv>"))
        named += [(home(), "$SWEWORLD_HOME"), (Path.home(), "~"), (Path.cwd(), "<server-cwd>"), *extra]
        labels: dict[str, str] = {}
        for path, label in named:
            for form in _forms(path):
                labels.setdefault(form, label)
        self.labels = labels
        ordered = sorted(labels, key=len, reverse=True)  # the longest first: the most precise label wins
        self._pattern = re.compile("|".join(re.escape(p) for p in ordered) + r"(?![\w.-])") if ordered else None

    @classmethod
    def of_server(cls, dataset: str, repos_dir: str | None = None) -> HostPaths:
        """A server's: the host's directories and its own (its dataset file's directory, its clones)."""
        dirs = [(os.path.dirname(os.path.abspath(dataset)), "<dataset-dir>")] if os.path.isfile(dataset) else []
        return cls(dirs + ([(repos_dir, "<repos-dir>")] if repos_dir else []))

    def text(self, text: str) -> str:
        """``text`` with every host directory replaced by its label."""
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(lambda m: self.labels[m.group(0)], text)

    def value(self, value: Any) -> Any:
        """``text`` through strings, lists and dicts (an exception's ``extra_info``)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value

    def traceback(self, exc: BaseException) -> str:
        """``exc``'s traceback with each frame as ``module, line N, in function`` (no file, no source
        line), then the exception's class and its message with host directories replaced."""
        lines = ["Traceback (most recent call last; the server's file names are left out):"]
        for frame, line in traceback.walk_tb(exc.__traceback__):
            module = frame.f_globals.get("__name__", "?")
            lines.append(f"  {module}, line {line}, in {frame.f_code.co_name}")
        lines.append(f"{type(exc).__module__}.{type(exc).__qualname__}: {self.text(str(exc))}")
        return "\n".join(lines) + "\n"


__all__ = ["HostPaths"]
