"""The one protocol that makes real and simulated execution interchangeable.

Tools, the agent loop, the harness and the integrations are written against ``Executor`` only.
A failing command is a result (``exit_code != 0``, ``timed_out``, ``truncated``), never an
exception; exceptions are for infrastructure (sandbox unavailable, environment broken) and for
``read_file`` of a missing path (``FileNotFoundError``).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from sweworld.core.types import ExecResult


@runtime_checkable
class Executor(Protocol):
    """Runs commands and file operations inside one episode's workspace."""

    #: Where the repository lives as the commands see it (``/testbed``).
    workdir: str

    def run(self, command: str, *, cwd: str | None = None, timeout: float | None = None) -> ExecResult:
        """Run a shell command. In a persistent session cwd and exported variables persist; ``cwd``
        runs this one command elsewhere without changing the session."""
        ...

    def read_file(self, path: str) -> str:
        """Read a text file (invalid UTF-8 replaced). Missing path: ``FileNotFoundError``."""
        ...

    def write_file(self, path: str, content: str) -> None:
        """Create or overwrite a file, creating parent directories."""
        ...

    def diff(self) -> str:
        """The workspace's changes against the base commit, as a git diff (new files included)."""
        ...

    def close(self) -> None:
        """Release everything the episode holds. Idempotent."""
        ...

    def __enter__(self) -> Executor: ...

    def __exit__(self, *exc: object) -> None: ...
