"""Harbor's absolute paths in a sweworld episode, the image a Harbor task names, and directory transfers.

Harbor writes and reads fixed absolute paths in its environments: ``/logs/agent``, ``/logs/verifier``
(``reward.txt``), ``/logs/artifacts``, ``/tests``, ``/solution``, ``/installed-agent``, ``/runtime``
and ``/skills``. A sweworld episode is writable only under ``/testbed`` and ``/tmp``: its root is
read-only. The environment asks the backend for writable empty directories there (the sandbox's
``scratch_dirs``); each root the episode still cannot write (an older sandbox, ``isolation: none``, a
user's own ``scratch_dirs``) ``PathMap`` maps onto ``/tmp/.harbor/<root>`` inside the episode, in three
places and nowhere else:

- the paths Harbor passes to ``upload_*``, ``download_*`` and ``exec(cwd=...)``;
- the commands Harbor's ``exec`` receives (a path starting one of the roots, standing alone: not
  ``/testbed/tests`` or ``$HOME/logs``);
- the text files Harbor uploads into a root (its ``tests/test.sh``, ``solution/solve.sh``...), which
  write ``/logs/verifier/reward.txt`` themselves.

What a command prints is mapped back (``/tmp/.harbor/logs`` reads ``/logs``), so an agent sees the
paths Harbor documents. A path a command assembles at run time (``d=/lo; "${d}gs"``) or that a binary
holds is not rewritten: see docs/harbor.md. Where the episode has the roots, nothing is rewritten.
"""

from __future__ import annotations

import io
import re
import tarfile
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

ROOTS = ("/logs", "/tests", "/solution", "/installed-agent", "/runtime", "/skills")
"""Harbor's absolute directories (``harbor.models.trial.paths.EnvironmentPaths`` and its agents)."""
SCRATCH = "/tmp/.harbor"
"""Where the roots live in an episode whose root is read-only."""

_FROM = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*(?P<image>\S+)", re.IGNORECASE | re.MULTILINE)


class PathMap:
    """Harbor's roots in ``mapped`` onto ``SCRATCH``; the other paths as they are (nothing mapped: off)."""

    def __init__(self, mapped: Iterable[str] = ()):
        self.mapped = tuple(root for root in ROOTS if root in set(mapped))
        names = "|".join(re.escape(root[1:]) for root in self.mapped)
        # a root standing alone: not after a word character, ``.``, ``/``, ``-``, ``~``, ``$``, ``}`` or ``)``
        # (``/testbed/tests``, ``./logs``, ``$HOME/logs``, ``$(pwd)/tests`` are other paths), and followed
        # by ``/`` or the end of the word
        self._root = re.compile(rf"(?<![\w.~$/}})-])/(?:{names})(?=/|[^\w.-]|$)") if names else None
        self._back = re.compile(rf"{re.escape(SCRATCH)}(?=/(?:{names})(?:/|[^\w.-]|$))") if names else None

    @property
    def active(self) -> bool:
        return bool(self.mapped)

    def path(self, path: str) -> str:
        """``path`` in the episode (``/logs/verifier`` -> ``/tmp/.harbor/logs/verifier`` where mapped)."""
        text = str(path)
        return SCRATCH + text if self._root is not None and self._root.match(text) else text

    def command(self, command: str) -> str:
        """``command`` with each mapped root standing alone rewritten."""
        return self._root.sub(lambda m: SCRATCH + m.group(0), command) if self._root is not None else command

    def content(self, target: str, data: bytes) -> bytes:
        """A file uploaded to ``target``: a text file in a mapped root has its roots rewritten; anything
        else, and every binary file (NUL bytes, or not UTF-8), is left as it is."""
        if self._root is None or not self._root.match(target) or b"\0" in data:
            return data
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return data
        return self.command(text).encode("utf-8")

    def restore(self, output: str) -> str:
        """What a command printed, with the mapped roots read back as Harbor's paths."""
        return self._back.sub("", output) if self._back is not None and SCRATCH in output else output

    def dirs(self) -> list[str]:
        """The directories made in the episode at start (Harbor expects the log directories)."""
        return [self.path(p) for p in ("/logs/agent", "/logs/verifier", "/logs/artifacts", "/tests", "/solution")]


#: prints each root the episode cannot write
PROBE = "; ".join(f"{{ [ -d {root} ] && [ -w {root} ]; }} || echo {root}" for root in ROOTS)


def image_of(environment_dir: Path, docker_image: str | None) -> str | None:
    """The image a Harbor task runs in: ``[environment].docker_image`` of its task.toml, else the first
    ``FROM`` of ``environment/Dockerfile``; None when it names neither."""
    if docker_image:
        return docker_image
    dockerfile = Path(environment_dir) / "Dockerfile"
    if not dockerfile.is_file():
        return None
    match = _FROM.search(dockerfile.read_text(encoding="utf-8", errors="replace"))
    return match["image"] if match else None


def pack(source_dir: Path, target: str, paths: PathMap) -> bytes:
    """``source_dir`` as a tar archive (modes kept), its files' content mapped for ``target``."""
    buffer = io.BytesIO()
    root = Path(source_dir)
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path in sorted(root.rglob("*")):
            name = path.relative_to(root).as_posix()
            if path.is_symlink() or not path.is_file():  # directories and links as they are
                archive.add(path, arcname=name, recursive=False)
                continue
            data = paths.content(str(PurePosixPath(target) / name), path.read_bytes())
            info = archive.gettarinfo(path, arcname=name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def unpack(data: bytes, target_dir: Path) -> None:
    """A tar archive made in the episode, extracted under ``target_dir`` (Harbor's own filter: no
    path outside it, special files skipped)."""
    from harbor.environments.base import transfer_tar_filter
    target_dir.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
        archive.extractall(target_dir, filter=transfer_tar_filter)


__all__ = ["PROBE", "ROOTS", "SCRATCH", "PathMap", "image_of", "pack", "unpack"]
