"""swerex's ``/upload`` into an episode with bounded memory: one file, or a zip extracted member by
member, each written in ``CHUNK`` pieces straight from the request's spooled file.

A small zip can expand a lot (300 MB of zeros pack into 300 KB): nothing is ever held whole, and the
sizes the zip declares for its members (which ``zipfile`` never reads past) must add up to at most
``LIMIT``, checked before anything is written.
"""

from __future__ import annotations

import base64
import posixpath
import shlex
import uuid
import zipfile
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Protocol, runtime_checkable

from sweworld.core.errors import ConfigError

if TYPE_CHECKING:
    from sweworld.core.executor import Executor
    from sweworld.core.types import ExecResult

CHUNK = 1024 * 1024
LIMIT = 4 * 1024**3
"""Bytes one upload may write into an episode (a file, or a zip's members together): the largest
file an episode may write itself (``SandboxConfig.file_size``)."""

Stateless = Callable[["Executor", str], "ExecResult"]


@runtime_checkable
class Appends(Protocol):
    """An episode that writes bytes and appends them (the real sandbox)."""

    def write_file(self, path: str, content: str | bytes) -> None: ...

    def append_file(self, path: str, data: bytes) -> None: ...


def _by_shell(executor: Executor, path: str, chunk: bytes, first: bool, stateless: Stateless) -> None:
    tag = f"SWEWORLD_REX_EOF_{uuid.uuid4().hex}"
    encoded = base64.encodebytes(chunk).decode("ascii")
    result = stateless(executor, f"mkdir -p -- {shlex.quote(posixpath.dirname(path) or '.')} && "
                       f"base64 -d {'>' if first else '>>'} {shlex.quote(path)} <<'{tag}'\n{encoded}{tag}")
    if result.exit_code != 0:
        raise OSError(f"cannot write {path} in the episode: {result.output.strip()}")


def write_stream(executor: Executor, path: str, stream: IO[bytes], stateless: Stateless) -> int:
    """Copy ``stream`` to ``path`` in the episode, ``CHUNK`` bytes at a time; returns the bytes written.

    The real sandbox writes and appends bytes (``Appends``). Another episode (a simulated one) is given
    a file of one piece through its own ``write_file`` when it is text, else base64 through the shell,
    a piece per command."""
    written, first = 0, True
    while True:
        chunk = stream.read(CHUNK)
        if not chunk and not first:
            return written
        if isinstance(executor, Appends):
            (executor.write_file if first else executor.append_file)(path, chunk)
        elif first and len(chunk) < CHUNK and _text(chunk) is not None:  # the whole file (a short read is the end)
            executor.write_file(path, _text(chunk))
        else:
            _by_shell(executor, path, chunk, first, stateless)
        written += len(chunk)
        first = False
        if written > LIMIT:
            raise ConfigError(f"the upload to {path} is over {LIMIT} bytes, the most one upload may write")
        if not chunk:
            return written


def _text(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def inside(target: str, name: str) -> str:
    """Where zip member ``name`` lands under ``target``: as ``zipfile.extractall`` puts it (no absolute
    path, no ``..``); "" when nothing is left of it."""
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".", "..")]
    return posixpath.join(target, *parts) if parts else ""


def extract(executor: Executor, source: IO[bytes], target: str, stateless: Stateless) -> None:
    """The zip in ``source`` (seekable) extracted under ``target`` in the episode, member by member."""
    try:
        archive = zipfile.ZipFile(source)
    except zipfile.BadZipFile as exc:
        raise ConfigError(f"the upload for {target} is not a zip file: {exc}") from None
    with archive:
        members = archive.infolist()
        declared = sum(info.file_size for info in members)
        if declared > LIMIT:
            raise ConfigError(f"the zip for {target} expands to {declared} bytes, over the {LIMIT} one upload "
                              "may write")
        paths = {info: inside(target, info.filename) for info in members}
        dirs = [target, *(path for info, path in paths.items() if path and info.is_dir())]
        made = stateless(executor, "mkdir -p -- " + shlex.join(dirs))
        if made.exit_code != 0:
            raise OSError(f"cannot create {target} in the episode: {made.output.strip()}")
        for info, path in paths.items():
            if path and not info.is_dir():
                with archive.open(info) as member:
                    write_stream(executor, path, member, stateless)
