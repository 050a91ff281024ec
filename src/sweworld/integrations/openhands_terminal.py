"""OpenHands' ``terminal`` tool over a sweworld episode: ``TerminalAction`` in, ``TerminalObservation`` out.

OpenHands' own ``TerminalExecutor`` drives a tmux (or subprocess) shell on the host. This executor
runs each command with the episode's ``Executor.run`` instead: the episode's persistent shell (cwd
and exported variables carry over), isolated as every sweworld episode is. What OpenHands checks
before running anything is OpenHands' own code, reused as is: the Python/JSON-literal hint, the
foreground-timeout policy, "Cannot execute multiple commands at once", and the messages for an empty
command and ``is_input`` when nothing is running. The observation is the one OpenHands' terminal
session builds for a finished command: the output (right-stripped, cut at ``MAX_CMD_OUTPUT_SIZE``),
``metadata.exit_code`` and the suffix ``[The command completed with exit code N.]``.

Where an episode differs from a tmux pane (docs/openhands.md, "Limits"): every command runs to its
end or to its timeout (``action.timeout``, else the tool's ``timeout``, else the episode's own
limit), and a command past its timeout is killed with every process it started, not left running;
so nothing is ever "still running", ``is_input`` and the empty command always get OpenHands'
"No previous running command..." errors, and ``reset`` cannot clear the episode's shell (it says so
and runs the command). The working directory is not reported after each command (``pwd`` tells it).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from openhands.sdk.tool import ToolAnnotations, ToolExecutor
from openhands.sdk.utils import maybe_truncate
from openhands.tools.terminal.constants import MAX_CMD_OUTPUT_SIZE
from openhands.tools.terminal.definition import (
    _LITERAL_ARG_HINT_TEMPLATE,
    TerminalAction,
    TerminalObservation,
    TerminalTool,
    looks_like_python_literal_argument,
)
from openhands.tools.terminal.descriptions import UNIX_TOOL_DESCRIPTION
from openhands.tools.terminal.env import ENV_VAR_NAME_RE
from openhands.tools.terminal.metadata import CmdOutputMetadata
from openhands.tools.terminal.timeout_policy import foreground_timeout_rejection_for
from openhands.tools.terminal.utils.command import split_bash_commands

from sweworld.integrations.openhands_episodes import attached, release

if TYPE_CHECKING:
    from openhands.sdk.conversation import LocalConversation
    from openhands.sdk.conversation.state import ConversationState

    from sweworld.core.executor import Executor

NO_RESET = ("[sweworld: the episode's shell cannot be reset: commands always finish or are killed at their "
            "timeout, and the shell keeps its cwd and exported variables]")
"""What ``reset=True`` answers (before the command's own output, when a command is given)."""


def _error(text: str, command: str) -> TerminalObservation:
    return TerminalObservation.from_text(text=text, command=command, is_error=True)


class EpisodeTerminalExecutor(ToolExecutor[TerminalAction, TerminalObservation]):
    """Runs OpenHands terminal actions in ``executor`` (a sweworld episode); ``timeout``: the wall limit
    of a command whose action gives none (None: the episode's own limit)."""

    is_pooled = False  # one session: OpenHands serializes terminal calls (TerminalTool.declared_resources)

    def __init__(self, executor: Executor, *, timeout: float | None = None, on_close: Any = None):
        self.executor = executor
        self.timeout = timeout
        self._on_close = on_close

    def __call__(self, action: TerminalAction, conversation: LocalConversation | None = None) -> TerminalObservation:
        if action.reset and action.is_input:
            raise ValueError("Cannot use reset=True with is_input=True")  # as OpenHands' own executor
        command = action.command.strip()
        if not action.is_input:
            literal = looks_like_python_literal_argument(action.command)
            if literal is not None:
                head = action.command.lstrip()[:60]
                return TerminalObservation.from_text(_LITERAL_ARG_HINT_TEMPLATE.format(literal_kind=literal, head=head),
                                                     is_error=True, command=action.command, exit_code=None)
        rejection = foreground_timeout_rejection_for(command=command, is_input=action.is_input,
                                                     timeout=action.timeout)
        if rejection is not None:
            return _error(rejection, command)
        if action.reset and not command:
            return TerminalObservation.from_text(text=NO_RESET, command="[RESET]", exit_code=0)
        if command == "":
            return _error("No previous running command to retrieve logs from.", command)
        if action.is_input:
            return _error("No previous running command to interact with.", command)
        parts = split_bash_commands(command)
        if len(parts) > 1:
            listed = "\n".join(f"({i + 1}) {part}" for i, part in enumerate(parts))
            return _error("Cannot execute multiple commands at once.\nPlease run each command separately OR chain "
                          f"them into a single command via && or ;\nProvided commands:\n{listed}", command)
        self._export_secrets(command, conversation)
        observation = self._run(command, action.timeout or self.timeout)
        if action.reset:
            observation = observation.model_copy(update={
                "content": [observation.content[0].model_copy(update={"text": f"{NO_RESET}\n\n{observation.text}"})],
                "command": f"[RESET] {command}"})
        return observation

    def _run(self, command: str, timeout: float | None) -> TerminalObservation:
        result = self.executor.run(command, timeout=timeout)
        metadata = CmdOutputMetadata(exit_code=result.exit_code)
        if result.timed_out:
            limit = f"{timeout:g}" if timeout else "the episode's"
            metadata.suffix = (f"\n[The command timed out after {limit} seconds and was killed with every process "
                               f"it started (exit code {result.exit_code}).]")
        else:
            metadata.suffix = f"\n[The command completed with exit code {result.exit_code}.]"
        text = maybe_truncate(result.output.rstrip(), truncate_after=MAX_CMD_OUTPUT_SIZE)
        return TerminalObservation.from_text(text=text, command=command, metadata=metadata,
                                             exit_code=result.exit_code, timeout=result.timed_out)

    def _export_secrets(self, command: str, conversation: LocalConversation | None) -> None:
        """The conversation's secrets the command names, exported in the episode's shell first (as
        OpenHands' own executor does); the SDK masks them in every observation."""
        if conversation is None:
            return
        try:
            secrets = conversation.state.secret_registry.get_secrets_as_env_vars(command)
        except (AttributeError, KeyError, ValueError):
            return
        exports = [f"export {k}={shlex.quote(v)}" for k, v in (secrets or {}).items() if ENV_VAR_NAME_RE.match(k)]
        if exports:
            self.executor.run(" && ".join(exports), timeout=self.timeout)

    def close(self) -> None:
        """Forget the episode (its owner closes it)."""
        if self._on_close is not None:
            self._on_close()


class SweworldTerminalTool(TerminalTool):
    """OpenHands' ``terminal`` tool (same name, schema and description for the model) whose commands
    run in a sweworld episode; registered as ``sweworld_terminal`` (``Tool(name="sweworld_terminal",
    params={"episode": KEY})``, KEY from ``sweworld.integrations.openhands.sweworld_tools``)."""

    name: ClassVar[str] = "terminal"
    catalog_description: ClassVar[str] = "Run shell commands in a sweworld episode's isolated shell."

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, episode: str = "",  # type: ignore[override]
               timeout: float | None = None, **_: Any) -> Sequence[SweworldTerminalTool]:
        executor = EpisodeTerminalExecutor(attached(episode), timeout=timeout, on_close=lambda: release(episode))
        return [cls(action_type=TerminalAction, observation_type=TerminalObservation,
                    description=UNIX_TOOL_DESCRIPTION,
                    annotations=ToolAnnotations(title="terminal", readOnlyHint=False, destructiveHint=True,
                                                idempotentHint=False, openWorldHint=True),
                    executor=executor)]


__all__ = ["NO_RESET", "EpisodeTerminalExecutor", "SweworldTerminalTool"]
