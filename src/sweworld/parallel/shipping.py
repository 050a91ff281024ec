"""What a work item produces for the run's files, held until the driver writes it.

An item of a run may execute on another node (``--runner ray``), where the run's paths mean nothing.
So the code an item runs does not write the run's files itself:

- ``stage(directory)`` is where the item writes files meant for ``directory`` (an evaluation's log
  directory): a scratch directory of the node the item runs on; its files travel back compressed
  and the driver writes them at ``directory`` (each by rename; ``last``, e.g. ``report.json``, after
  the others, so a kill in between leaves an unfinished directory);
- ``append(path, line)`` holds a JSON line meant for the append-only file ``path`` (traces, hybrid
  audits); the driver appends an item's lines to each file in one write, so an item's records are
  committed whole with its result, or (a killed attempt) not at all.

Inside ``collecting()`` (what ``run_item`` sets around an item) both are held in the ``Outputs``
returned; outside an item (a direct call) both act at once on the real paths. ``Outputs.land()``
is the driver's half. One thread runs one item: the collector is a context variable of it.
"""

from __future__ import annotations

import contextlib
import contextvars
import fcntl
import os
import shutil
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Staged:
    """Files an item wrote for ``directory``: (relative name, zlib-compressed bytes), ``last`` last."""

    directory: str
    files: list[tuple[str, bytes]] = field(default_factory=list)
    last: str | None = None


@dataclass
class Outputs:
    """What one item produced: lines per append-only file, files per directory (see the module)."""

    lines: dict[str, list[str]] = field(default_factory=dict)
    staged: list[Staged] = field(default_factory=list)
    scratch: dict[str, tuple[Path, str | None]] = field(default_factory=dict, repr=False)
    pack_seconds: float = 0.0
    """What packing took where the item ran."""
    land_seconds: float = 0.0
    """What landing took on the driver (set by ``land``)."""

    def pack(self) -> Outputs:
        """Read the scratch directories into ``staged`` (compressed) and remove them."""
        started = time.perf_counter()
        for directory, (scratch, last) in self.scratch.items():
            files = []
            for path in sorted(p for p in scratch.rglob("*") if p.is_file() and not p.is_symlink()):
                files.append((str(path.relative_to(scratch)), zlib.compress(path.read_bytes(), 6)))
            self.staged.append(Staged(directory, files, last))
            shutil.rmtree(scratch.parent, ignore_errors=True)
        self.scratch = {}
        self.pack_seconds = time.perf_counter() - started
        return self

    def discard(self) -> None:
        """Remove the scratch directories of an item whose result is not kept (it failed)."""
        for scratch, _last in self.scratch.values():
            shutil.rmtree(scratch.parent, ignore_errors=True)
        self.scratch = {}

    @property
    def nbytes(self) -> int:
        """Bytes this item sends back: compressed files and lines."""
        return (sum(len(data) for s in self.staged for _name, data in s.files)
                + sum(len(line) for lines in self.lines.values() for line in lines))

    def land(self) -> None:
        """Write everything at its real place (the driver; the files' rules in the module docstring)."""
        started = time.perf_counter()
        for path, lines in self.lines.items():
            append_lines(Path(path), lines)
        for staged in self.staged:
            directory = Path(staged.directory)
            directory.mkdir(parents=True, exist_ok=True)
            if staged.last:
                (directory / staged.last).unlink(missing_ok=True)
            for name, data in sorted(staged.files, key=lambda f: f[0] == staged.last):
                target = directory / name
                target.parent.mkdir(parents=True, exist_ok=True)
                tmp = target.with_name(f".{target.name}.landing")
                tmp.write_bytes(zlib.decompress(data))
                os.replace(tmp, target)
        self.land_seconds = time.perf_counter() - started


_CURRENT: contextvars.ContextVar[Outputs | None] = contextvars.ContextVar("sweworld_item_outputs", default=None)


@contextlib.contextmanager
def collecting() -> Iterator[Outputs]:
    """Hold what ``stage`` and ``append`` get in this thread in the yielded ``Outputs``."""
    outputs = Outputs()
    token = _CURRENT.set(outputs)
    try:
        yield outputs
    finally:
        _CURRENT.reset(token)


def stage(directory: Path, *, last: str | None = None) -> Path:
    """Where to write the files meant for ``directory``: ``directory`` itself outside an item; inside
    one, a scratch directory (the same for every call with ``directory``) whose files the driver
    writes there, ``last`` after the others."""
    outputs = _CURRENT.get()
    if outputs is None:
        return directory
    key = str(directory)
    if key not in outputs.scratch:
        scratch = Path(tempfile.mkdtemp(prefix="sweworld-item-")) / Path(directory).name
        scratch.mkdir()
        outputs.scratch[key] = (scratch, last)
    return outputs.scratch[key][0]


def append(path: Path, line: str) -> None:
    """Append ``line`` (one JSON record, no newline) to ``path``: at once outside an item; inside one,
    when the driver lands the item's outputs."""
    outputs = _CURRENT.get()
    if outputs is None:
        append_lines(path, [line])
    else:
        outputs.lines.setdefault(str(path), []).append(line)


def append_lines(path: Path, lines: list[str]) -> None:
    """Append ``lines`` to ``path`` in one write, flushed and fsynced under an exclusive ``flock``
    (threads and processes may share the file), after cutting off a last line a crash left short.
    The one writer of the append-only JSONL files (traces, audits, ``runs.store``)."""
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    with _whole_lines(path) as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def cut_torn_tail(path: Path) -> None:
    """Cut off a last line of ``path`` a crash left short, under the lock ``append_lines`` takes
    (nothing when ``path`` does not exist): what a reader that resumes from the file does first."""
    if path.exists():
        with _whole_lines(path):
            pass


@contextlib.contextmanager
def _whole_lines(path: Path) -> Iterator[Any]:
    """``path`` opened a+b under an exclusive ``flock``, a torn last line cut off."""
    with open(path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            _cut_torn_tail(handle)
            yield handle
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _cut_torn_tail(handle: Any) -> None:
    """Truncate ``handle`` (opened a+b, locked) after its last newline, if it does not end with one."""
    size = handle.seek(0, os.SEEK_END)
    if not size:
        return
    handle.seek(size - 1)
    if handle.read(1) == b"\n":
        return
    end, chunk = size, 1 << 16
    while end > 0:
        start = max(0, end - chunk)
        handle.seek(start)
        at = handle.read(end - start).rfind(b"\n")
        if at >= 0:
            handle.truncate(start + at + 1)
            return
        end = start
    handle.truncate(0)


@dataclass
class Shipped:
    """An item's result with its ``Outputs`` (what a pool's worker returns to the driver)."""

    result: Any
    outputs: Outputs


def run_item(fn: Callable[..., Any], /, *args: Any) -> Shipped:
    """``fn(*args)`` collecting its outputs (the worker's half); an item that raises leaves nothing."""
    with collecting() as outputs:
        try:
            result = fn(*args)
        except BaseException:
            outputs.discard()
            raise
    return Shipped(result, outputs.pack())
