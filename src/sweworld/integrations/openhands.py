"""An OpenHands (openhands-sdk 1.58, Python >= 3.12) agent on a sweworld episode.

Route: OpenHands' own tools re-registered through ``openhands.sdk.tool.registry`` with executors
that call the episode (``sweworld.core.executor.Executor``), not a ``RemoteWorkspace`` with OpenHands'
agent server inside the episode: the sandbox has no network and no OpenHands install, and its
Python is the task's, not one the SDK supports (docs/openhands.md, "Why tools, not a remote
workspace"). The model sees OpenHands' ``terminal`` and ``file_editor`` (same names, schemas and
descriptions); their commands run in the episode's isolated shell (``openhands_terminal``) and their
file edits are OpenHands' own editor over the episode's files (``openhands_editor``). The
conversation's ``LocalWorkspace`` is an empty private directory on the host that no tool uses.

    from openhands.sdk import Agent, Conversation, LLM
    from sweworld.integrations.openhands import episode_conversation, sweworld_tools

    with episode_conversation("boltons-24.0.0__change_arith_op__a5f686dc", dataset="lite",
                              backend="sim", llm=LLM(model=...)) as episode:
        episode.run()                        # the task's problem statement, then the agent's loop
        report = episode.evaluate(log_dir)   # the backend's verdict on episode.diff()

    tools = sweworld_tools(executor)         # or: the tools for an episode opened elsewhere
    conversation = Conversation(agent=Agent(llm=llm, tools=tools), workspace=scratch_dir)

An episode stays attached (``attached(key)``) until a conversation that resolved its tools closes,
or ``release(key)``; whoever opened the episode closes it. Errors: an unknown instance is
sweworld's ``DatasetError``, an environment that does not build its ``EnvBuildError`` (both raised
by ``episode_conversation``, before any OpenHands object exists: the SDK has no error type for
either); a dead episode, mid-conversation, is OpenHands' ``AgentErrorEvent`` ("Error executing tool
'terminal': ...") carrying sweworld's message, as the SDK reports any tool that fails.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

try:
    from openhands.sdk import Agent, Conversation, Tool
except ImportError as exc:  # pragma: no cover - the 3.11 environment has no OpenHands
    raise ImportError(f"sweworld.integrations.openhands needs openhands-sdk and openhands-tools ({exc}): "
                      "pip install 'sweworld[openhands]' (Python >= 3.12)") from exc
from openhands.sdk.tool import register_tool
from openhands.sdk.tool.registry import list_registered_tools

from sweworld.core.errors import InfraError
from sweworld.harness.predictions import Prediction
from sweworld.integrations.episodes import EpisodeSpec, backend_for, spec_of, task_of
from sweworld.integrations.openhands_editor import EpisodeFileEditorExecutor, SweworldFileEditorTool
from sweworld.integrations.openhands_episodes import attach, attached, release
from sweworld.integrations.openhands_terminal import EpisodeTerminalExecutor, SweworldTerminalTool
from sweworld.seam import Graded, grade, prediction

if TYPE_CHECKING:
    from openhands.sdk.agent.base import AgentBase
    from openhands.sdk.conversation.impl.local_conversation import LocalConversation
    from openhands.sdk.llm import LLM

    from sweworld.core.executor import Executor
    from sweworld.core.protocols import Backend
    from sweworld.core.types import Task
    from sweworld.harness.report import InstanceReport

TERMINAL = "sweworld_terminal"
"""The registry name of the episode's terminal (the model sees OpenHands' name, ``terminal``)."""
FILE_EDITOR = "sweworld_file_editor"
"""The registry name of the episode's file editor (the model sees ``file_editor``)."""

_LOCK = threading.Lock()


def register_sweworld_tools() -> list[str]:
    """Register the two tool classes in OpenHands' registry (idempotent); their registry names."""
    with _LOCK:
        known = set(list_registered_tools())
        for name, tool in ((TERMINAL, SweworldTerminalTool), (FILE_EDITOR, SweworldFileEditorTool)):
            if name not in known:
                register_tool(name, tool)
    return [TERMINAL, FILE_EDITOR]


def sweworld_tools(executor: Executor, *, timeout: float | None = None) -> list[Tool]:
    """The ``Tool`` specs to give ``Agent(llm=..., tools=...)``: OpenHands' terminal and file editor
    over ``executor``; ``timeout``: the wall limit of a command whose action gives none."""
    register_sweworld_tools()
    key = attach(executor)
    terminal: dict[str, Any] = {"episode": key} if timeout is None else {"episode": key, "timeout": timeout}
    return [Tool(name=TERMINAL, params=terminal), Tool(name=FILE_EDITOR, params={"episode": key})]


def task_message(task: Task, workdir: str = "/testbed") -> str:
    """The first user message: where the repository is, and the issue (OpenHands' SWE-bench wording)."""
    return (f"<uploaded_files>\n{workdir}\n</uploaded_files>\n\nI've uploaded a python code repository in the "
            f"directory {workdir}. Consider the following issue description:\n\n<issue_description>\n"
            f"{task.problem_statement}\n</issue_description>\n\nCan you help me implement the necessary changes "
            f"to the repository so that the requirements specified in the <issue_description> are met? The tests "
            f"are already in place: do not modify them. Your task is to make the minimal changes to non-test "
            f"files in the {workdir} directory.")


class EpisodeConversation:
    """An OpenHands conversation over one sweworld episode it owns (closed with it)."""

    def __init__(self, conversation: LocalConversation, executor: Executor, task: Task, backend: Backend,
                 home: Path):
        self.conversation, self.executor, self.task, self.backend, self.home = conversation, executor, task, backend, home

    @property
    def events(self) -> Any:
        """The conversation's events (OpenHands' own trajectory record)."""
        return self.conversation.state.events

    def run(self, message: str | None = None) -> None:
        """Send ``message`` (default: ``task_message``) and run the agent until it finishes or stops."""
        self.conversation.send_message(message or task_message(self.task, self.executor.workdir))
        self.conversation.run()

    def diff(self) -> str:
        """The episode's changes against the base commit."""
        return self.executor.diff()

    def prediction(self, model_name_or_path: str | None = None) -> Prediction:
        """SWE-bench's prediction of the episode's diff, named after the agent's model by default."""
        model = model_name_or_path or getattr(self.conversation.agent.llm, "model", None) or "openhands"
        return prediction(self.task, self.diff(), model)

    def grade(self, log_dir: Path | None = None, *, timeout: float | None = None, binary: bool = False) -> Graded:
        """``seam.grade`` of the episode's diff (logs in ``log_dir``, kept; else removed once graded)."""
        model = getattr(self.conversation.agent.llm, "model", None) or "openhands"
        logs, name = (None, None) if log_dir is None else (Path(log_dir).parent, Path(log_dir).name)
        return grade(self.backend, self.task, self.diff(), model=model, logs=logs, name=name, timeout=timeout,
                     binary=binary)

    def evaluate(self, log_dir: Path, *, timeout: float | None = None) -> InstanceReport:
        """The backend's report on the episode's diff (real: the harness; sim: SWR's prediction)."""
        graded = self.grade(log_dir, timeout=timeout)
        if graded.report is None:
            raise InfraError(f"{self.task.instance_id}: {graded.error}")
        return graded.report

    def close(self) -> None:
        """Close the conversation (its tools release the episode), the episode and the scratch home."""
        try:
            self.conversation.close()
        finally:
            self.executor.close()
            shutil.rmtree(self.home, ignore_errors=True)

    def __enter__(self) -> EpisodeConversation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def episode_conversation(instance_id: str = "", *, dataset: str | None = None, backend: str | None = None,
                         llm: LLM | None = None, agent: AgentBase | None = None,
                         spec: EpisodeSpec | dict[str, Any] | None = None, timeout: float | None = None,
                         **conversation_options: Any) -> EpisodeConversation:
    """An OpenHands conversation on a fresh episode of ``instance_id`` of ``dataset`` (a shipped name, a
    file, a directory or a hub name) with ``backend`` (real, sim or hybrid; default ``$SWEWORLD_BACKEND``,
    else real). ``spec``: the whole ``EpisodeSpec`` instead (``backend_options``, ``repos_dir``...).
    ``agent``: one to extend with the episode's tools (default: ``Agent(llm=llm)``).
    ``conversation_options`` go to ``Conversation`` (``visualizer`` defaults to None)."""
    if isinstance(spec, EpisodeSpec):
        spec = spec.model_dump(exclude_unset=True)
    data = {**(spec or {}), **{k: v for k, v in (("instance_id", instance_id), ("dataset", dataset),
                                                 ("backend", backend)) if v}}
    where = f"openhands episode {data.get('instance_id') or data.get('image') or '?'}"
    episode_spec = spec_of(data, where=where)
    if agent is None and llm is None:
        raise TypeError("episode_conversation needs an llm= (or an agent=)")
    task = task_of(episode_spec, where=where)
    chosen = backend_for(episode_spec)
    executor = chosen.open(task, label=task.instance_id)
    home = Path(tempfile.mkdtemp(prefix="sweworld-openhands-home-"))
    try:
        tools = sweworld_tools(executor, timeout=timeout)
        agent = (Agent(llm=llm, tools=tools) if agent is None
                 else agent.model_copy(update={"tools": [*agent.tools, *tools]}))
        conversation_options.setdefault("visualizer", None)
        conversation = Conversation(agent=agent, workspace=str(home), **conversation_options)
    except BaseException:
        executor.close()
        shutil.rmtree(home, ignore_errors=True)
        raise
    return EpisodeConversation(conversation, executor, task, chosen, home)


__all__ = ["FILE_EDITOR", "TERMINAL", "EpisodeConversation", "EpisodeFileEditorExecutor", "EpisodeTerminalExecutor",
           "SweworldFileEditorTool", "SweworldTerminalTool", "attach", "attached", "episode_conversation",
           "register_sweworld_tools", "release", "sweworld_tools", "task_message"]
