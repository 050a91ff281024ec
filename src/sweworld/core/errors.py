"""One exception hierarchy for sweworld.

Every error says what failed, where (file:line for data, instance id for tasks) and what to do.
A failing command inside a sandbox is never an exception: it is an ``ExecResult`` with a non-zero
exit code. Exceptions are for bad input and broken infrastructure.
"""

from __future__ import annotations


class SWEWorldError(Exception):
    """Base class of every error sweworld raises on purpose."""

    def __init__(self, message: str, *, where: str | None = None, hint: str | None = None):
        self.message = message
        self.where = where
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        if self.hint:
            text += f"\n  what to do: {self.hint}"
        return text


class DatasetError(SWEWorldError):
    """A dataset file or row is malformed (where = file:line or instance id)."""


class InfraError(SWEWorldError):
    """Infrastructure failed, not the model: kept apart from model outcomes in every report, caught
    once per runner (eval, validate, rollout, synth), and retried by a rerun."""


InfraFailure = InfraError
"""The former name of `InfraError`, kept for code that still uses it."""


class RepoError(InfraError):
    """A repository or commit could not be found or materialised."""


class EnvBuildError(InfraError):
    """An environment (virtualenv + install recipe) failed to build."""

    def __init__(self, message: str, *, where: str | None = None, hint: str | None = None,
                 log_path: str | None = None, log_tail: str = "", cause: str = ""):
        self.log_path = log_path
        self.log_tail = log_tail
        self.cause = cause
        """The one line of the build log that says why (``envs.store.error_line``), "" when unknown."""
        if log_path:
            message += f"\n  build log: {log_path}"
        if log_tail:
            message += "\n  last lines of the build log:\n" + "\n".join(
                "    " + line for line in log_tail.splitlines())
        super().__init__(message, where=where, hint=hint)


class SandboxError(InfraError):
    """The sandbox could not be created or died (isolation unavailable, namespaces refused, a helper
    process inside it such as the synthesis fork server did not start...)."""


class SnapshotError(SWEWorldError):
    """A snapshot handle was misused (released, another episode's) or refused (over the episode's disk
    limit): the caller's mistake or choice, not the episode's death, which goes on unharmed."""


class ImageError(InfraError):
    """A container image could not be pulled or unpacked (a bad name, a missing tag, a refused login,
    a rate limit, an unreachable registry, a layer that fails its digest); where = the image and,
    when known, the instance."""


class PatchApplyError(InfraError):
    """The apply machinery failed (the tree could not be put back after a failed attempt). A patch
    that does not apply, or is refused as unsafe, is no error: it is a ``PatchApplyResult``."""


class WorldBrokenError(InfraError):
    """The episode's world cannot run what grading needs: no shell, a missing loader, a patch checker
    or apply command that cannot run, an eval script that never reaches its tests, a test command
    that cannot start (``harness.worldcheck``). The world's failure, never the patch's verdict;
    where = the instance (or the episode's directory), the message says what was seen."""


class ModelError(SWEWorldError):
    """A model endpoint failed or answered something unusable."""


class WorldError(SWEWorldError):
    """The simulated world could not produce a transition or a reward."""


class RunInUseError(SWEWorldError):
    """Another process is running the same run (same run id / output directory): it holds the lock."""


class ConfigError(SWEWorldError):
    """A setting is unusable: an environment variable (``SWEWORLD_HOME``), an option, a config file
    (where = the variable, option or file:line)."""
