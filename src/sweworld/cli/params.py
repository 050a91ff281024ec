"""Checks of option values at parse time, before any work: run ids, output paths, positive numbers.

Each is a typer callback: a bad value stops the command with exit status 2 and one message naming the
option and saying why. Output paths are checked without creating anything.
"""

from __future__ import annotations

import os
from pathlib import Path

import typer

from sweworld.core import names


def run_id(value: str) -> str:
    """A run id names a directory (logs/run_evaluation/<run_id>) and the summary file."""
    reason = names.problem(value)
    if reason is not None:
        raise typer.BadParameter(f"{value!r} cannot name a directory: {reason}; "
                                 "use letters, digits, '.', '_' and '-'")
    return value


def env_source(value: str) -> str:
    """``--env-source``: one of ``envs.image.ENV_SOURCES``."""
    from sweworld.envs.image import ENV_SOURCES
    if value not in ENV_SOURCES:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(ENV_SOURCES)}")
    return value


def positive(value: float | None) -> float | None:
    """A duration (or count) that must be greater than 0; None (unset) passes."""
    if value is not None and value <= 0:
        raise typer.BadParameter(f"must be greater than 0, got {value:g}")
    return value


def _unusable_dir(path: Path) -> str | None:
    """Why files cannot be written in directory ``path`` (to be created when missing), or None."""
    existing = next((p for p in (path, *path.absolute().parents) if p.exists()), None)
    if existing is None:
        return None
    cannot_create = "" if existing == path else f", so {path} cannot be created"
    if not existing.is_dir():
        return f"{existing} is a file, not a directory{cannot_create}"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{existing} is not writable{cannot_create}"
    return None


def output_dir(value: Path | None) -> Path | None:
    """A directory the command writes into: an existing writable directory, or one it can create."""
    if value is not None and (reason := _unusable_dir(value)):
        raise typer.BadParameter(reason)
    return value


def output_file(value: Path | None) -> Path | None:
    """A file the command writes (replacing it when it exists), in a directory it can create."""
    if value is None:
        return value
    if value.is_dir():
        raise typer.BadParameter(f"{value} is a directory; give a file name")
    if value.exists() and not os.access(value, os.W_OK):
        raise typer.BadParameter(f"{value} is not writable")
    output_dir(value.absolute().parent)
    return value


def one_of(*choices: str):
    """A callback accepting only ``choices``."""
    def check(value: str | None) -> str | None:
        if value is not None and value not in choices:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(choices)}")
        return value
    return check


def registered_backend(value: str | None) -> str | None:
    """A callback accepting the names of ``sweworld.core.config.BACKENDS`` (built-in and registered)."""
    from sweworld.core.config import BACKENDS
    return one_of(*BACKENDS.names())(value)
