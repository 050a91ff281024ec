"""Core data types shared by every component: tasks and execution results.

``Task`` is a SWE-bench instance. ``ExecResult`` is what every ``Executor`` returns for a command.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

SWEBENCH_FIELDS = (
    "instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement", "hints_text",
    "created_at", "version", "environment_setup_commit", "FAIL_TO_PASS", "PASS_TO_PASS",
)
ENV_FIELDS = ("python", "pre_install", "install", "packages", "pip_packages", "test_cmd", "exclude_newer",
              "repo_source")


def as_list(value: Any) -> Any:
    """Accept a list, a JSON-encoded list (SWE-bench on the hub) or a single command string."""
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            return json.loads(text)
        return [text] if text else []
    if isinstance(value, tuple):
        return list(value)
    return value


class Task(BaseModel):
    """One SWE-bench-format task instance.

    Unknown fields are kept (``model_extra``) and written back unchanged. ``FAIL_TO_PASS`` and
    ``PASS_TO_PASS`` may arrive as lists or as JSON-encoded strings.
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    # List fields that arrived JSON-encoded (as on the hub); ``sweworld.tasks.dump_row`` writes them
    # back the same way. Set by the loaders, not part of the data.
    _encoded_lists: frozenset[str] = frozenset()

    instance_id: str = Field(min_length=1, description="Unique id, e.g. 'psf__requests-2317'.")
    repo: str = Field(min_length=1, description="'owner/name' (GitHub) or any label for the repository.")
    base_commit: str = Field(min_length=1, description="Commit the agent starts from.")
    patch: str = Field(default="", description="Gold patch (the fix), a unified diff.")
    test_patch: str = Field(default="", description="Patch adding or changing the tests that decide success.")
    problem_statement: str = Field(default="", description="Issue text shown to the agent.")
    hints_text: str = Field(default="", description="Hints (comments before the fix), usually unused.")
    created_at: str = Field(default="", description="Creation time of the instance (ISO 8601).")
    version: str = Field(default="", description="Repository version, keys the install specs.")
    environment_setup_commit: str = Field(default="", description="Commit the environment is built from.")
    FAIL_TO_PASS: list[str] = Field(default_factory=list, description="Tests that must go from fail to pass.")
    PASS_TO_PASS: list[str] = Field(default_factory=list, description="Tests that must keep passing.")

    python: str | None = Field(default=None, description="Python version for the environment, e.g. '3.9'.")
    pre_install: list[str] | None = Field(default=None, description="Shell commands run before install.")
    install: str | None = Field(default=None, description="Command installing the repository itself.")
    packages: str | None = Field(default=None, description="Space-separated packages, or 'requirements.txt'.")
    pip_packages: list[str] | None = Field(default=None, description="Extra pip requirements.")
    test_cmd: str | None = Field(default=None, description="Test command; test files are appended.")
    exclude_newer: str | None = Field(default=None, description=(
        "Resolve the environment's unpinned requirements as of this date (ISO 8601), e.g. the date of "
        "the environment commit of a mined instance."))
    repo_source: str | None = Field(
        default=None, description="Where the repository comes from: a git URL, a local dir, 'pypi:NAME==VER'.")

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", "pre_install", "pip_packages", mode="before")
    @classmethod
    def _decode_list(cls, value: Any) -> Any:
        return as_list(value)

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS")
    @classmethod
    def _strings(cls, value: list[Any]) -> list[str]:
        if not all(isinstance(item, str) for item in value):
            raise ValueError("every test id must be a string")
        return value

    @field_validator("hints_text", "problem_statement", "patch", "test_patch", "created_at",
                     "version", "environment_setup_commit", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        if value is None:
            return ""
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        return value

    @property
    def env_commit(self) -> str:
        """The commit the shared environment is built from."""
        return self.environment_setup_commit or self.base_commit


class ExecResult(BaseModel):
    """The result of one command. A failing command is a result, never an exception."""

    output: str = Field(default="", description="stdout and stderr interleaved, UTF-8 (invalid bytes replaced).")
    exit_code: int = Field(default=0, description="Exit status; 124 when the wall timeout killed the command.")
    timed_out: bool = Field(default=False, description="The wall timeout fired and the process tree was killed.")
    truncated: bool = Field(default=False, description="Output was longer than the cap; head and tail kept.")
    duration: float = Field(default=0.0, description="Wall time in seconds.")
    restarted: bool = Field(default=False, description="The persistent shell died or was killed and was restarted.")
    simulated: bool = Field(default=False, description="Predicted (in part) by the world's transition model, not run.")

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class ServiceLines(BaseModel):
    """The local network stand-ins around a test run, as eval-script lines: ``start`` before the
    tests, ``stop`` after. The environment side writes them (``envs.services.script_lines``) and
    hands them to the harness as data; empty when the tests reach the real network or need none."""

    model_config = ConfigDict(frozen=True)

    start: tuple[str, ...] = ()
    stop: tuple[str, ...] = ()


def install_config_of(row: dict[str, Any]) -> dict[str, Any] | None:
    """A SWE-rebench row's ``install_config`` as a dict (it may arrive JSON-encoded), None when it has none;
    ``row`` is the row, or a ``Task``'s ``model_extra``."""
    value = row.get("install_config")
    if isinstance(value, str) and value.strip():
        value = json.loads(value)
    return value if isinstance(value, dict) and value else None

