"""A tiny real-directory ``Executor`` for the world's tests: commands run with subprocess (bash) in
a directory that is a git repository; ``diff`` is against the base commit, new files included."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from sweworld.core.types import ExecResult

GIT_ENV = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
# The sandbox clears the environment; pytest prints whole failure messages in its short summary when
# it sees these (CI machines set them), so they must not leak into these real runs either.
CI_MARKERS = ("CI", "BUILD_NUMBER")


def _env() -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if k not in CI_MARKERS}, **GIT_ENV}


class DirExecutor:
    """Stateless: every command starts in ``root`` (or ``cwd``); no isolation (tests only)."""

    def __init__(self, root: Path, base_commit: str = "HEAD"):
        self.root = Path(root)
        self.workdir = str(self.root)
        self.base_commit = base_commit
        self.commands: list[str] = []

    def _path(self, path: str) -> Path:
        return Path(path) if path.startswith("/") else self.root / path

    def run(self, command: str, *, cwd: str | None = None, timeout: float | None = None) -> ExecResult:
        self.commands.append(command)
        started = time.monotonic()
        try:
            done = subprocess.run(["bash", "-c", command], cwd=cwd or self.workdir, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                                  env=_env())
        except subprocess.TimeoutExpired as exc:
            return ExecResult(output=(exc.output or b"").decode(errors="replace"), exit_code=124, timed_out=True,
                              duration=time.monotonic() - started)
        return ExecResult(output=done.stdout.decode(errors="replace"), exit_code=done.returncode,
                          duration=time.monotonic() - started)

    def read_file(self, path: str) -> str:
        return self._path(path).read_bytes().decode("utf-8", errors="replace")

    def write_file(self, path: str, content: str) -> None:
        target = self._path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)

    def diff(self) -> str:
        script = ('idx=$(mktemp) && GIT_INDEX_FILE="$idx" git read-tree "$0" && GIT_INDEX_FILE="$idx" git add -A . '
                  '&& GIT_INDEX_FILE="$idx" git diff --cached --no-color --no-renames "$0"; rc=$?; rm -f "$idx"; exit $rc')
        done = subprocess.run(["bash", "-c", script, self.base_commit], cwd=self.workdir, capture_output=True,
                              text=True, env=_env(), check=True)
        return done.stdout

    def close(self) -> None:
        pass

    def __enter__(self) -> DirExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
