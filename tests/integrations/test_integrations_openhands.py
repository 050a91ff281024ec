"""OpenHands' own Agent, Conversation and TestLLM on sweworld episodes of a shipped lite instance.

The scripted conversation makes the instance's gold fix with OpenHands' file_editor (str_replace) after
looking with the terminal and the editor; the real harness resolves the diff, and nothing on the host
changes. The editor is checked against OpenHands' own editor on a host copy of the same files.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import pytest

os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
pytest.importorskip("openhands.sdk")
pytest.importorskip("openhands.tools")

from openhands.sdk import Agent, Conversation, Tool
from openhands.sdk.event import ActionEvent, AgentErrorEvent, ObservationEvent
from openhands.sdk.llm import Message, MessageToolCall, TextContent
from openhands.sdk.testing import TestLLM
from openhands.tools.file_editor.definition import FileEditorAction
from openhands.tools.file_editor.impl import FileEditorExecutor
from openhands.tools.terminal.definition import TerminalAction, TerminalObservation

from sweworld.core.errors import DatasetError, EnvBuildError, SandboxError
from sweworld.harness.predictions import Prediction
from sweworld.integrations.episodes import EpisodeSpec, backend_for, task_of
from sweworld.integrations.openhands import (
    EpisodeFileEditorExecutor,
    EpisodeTerminalExecutor,
    attached,
    episode_conversation,
    register_sweworld_tools,
    sweworld_tools,
)
from sweworld.integrations.openhands_editor import NOT_UTF8
from sweworld.testing.isolation import check_isolation

pytestmark = [pytest.mark.bwrap, pytest.mark.network, pytest.mark.py312]

INSTANCE = "boltons-24.0.0__change_arith_op__a5f686dc"
MODULE = "/testbed/boltons/mathutils.py"


def gold_change(patch: str) -> tuple[str, str]:
    """(old, new) of the one-hunk gold patch: its removed and its added lines."""
    body = [line for line in patch.splitlines() if not line.startswith(("---", "+++", "diff ", "@@", "index "))]
    old = "\n".join(line[1:] for line in body if line.startswith("-"))
    new = "\n".join(line[1:] for line in body if line.startswith("+"))
    return old.strip(), new.strip()


def call(n: int, name: str, **arguments) -> Message:
    return Message(role="assistant", content=[TextContent(text="")], tool_calls=[
        MessageToolCall(id=f"call_{n}", name=name, arguments=json.dumps(arguments), origin="completion")])


def gold_script(task) -> list[Message]:
    old, new = gold_change(task.patch)
    return [call(1, "terminal", command=f"cd /testbed && grep -n {json.dumps(old)} boltons/mathutils.py"),
            call(2, "file_editor", command="view", path=MODULE, view_range=[155, 160]),
            call(3, "file_editor", command="str_replace", path=MODULE, old_str=old, new_str=new),
            call(4, "finish", message="Fixed the hex length.")]


def shape(events) -> list[tuple]:
    """What a trajectory is made of: event kinds, tools, observation types and error flags."""
    return [(type(e).__name__, getattr(e, "tool_name", None),
             type(e.observation).__name__ if isinstance(e, ObservationEvent) else None,
             e.observation.is_error if isinstance(e, ObservationEvent) else None) for e in events]


def texts(events, tool: str) -> list[str]:
    return [e.observation.text for e in events if isinstance(e, ObservationEvent) and e.tool_name == tool]


@pytest.fixture(scope="module")
def spec():
    return EpisodeSpec(instance_id=INSTANCE, dataset="lite", backend="real")


@pytest.fixture(scope="module")
def task(spec):
    task = task_of(spec, where="test")
    old, _ = gold_change(task.patch)
    assert old == "len_ = (len_ - 2) // 4"
    return task


@pytest.fixture
def episode(spec, task):
    with backend_for(spec).open(task) as executor:
        yield executor


def test_gold_fix_through_openhands_tools_resolves_and_leaves_the_host_alone(spec, task, tmp_path):
    base = backend_for(spec).builder.repos.base_tree(task) / "boltons/mathutils.py"
    before = base.read_bytes()
    with episode_conversation(INSTANCE, dataset="lite", backend="real", llm=TestLLM.from_messages(gold_script(task))) \
            as episode:
        assert episode.backend.name == "real"
        episode.run()
        events = list(episode.events)
        assert [type(e).__name__ for e in events if isinstance(e, (ActionEvent, ObservationEvent))] == \
            ["ActionEvent", "ObservationEvent"] * 4
        assert not [e for e in events if isinstance(e, AgentErrorEvent)]
        grep, = texts(events, "terminal")
        assert grep.startswith("159:") and "// 4" in grep
        terminal_obs = next(e.observation for e in events if isinstance(e, ObservationEvent) and e.tool_name == "terminal")
        assert isinstance(terminal_obs, TerminalObservation) and terminal_obs.exit_code == 0
        assert "[Command finished with exit code 0]" in terminal_obs.to_llm_content[-1].text
        view, edit = texts(events, "file_editor")
        assert view.startswith(f"Here's the result of running `cat -n` on {MODULE}:\n   155\t")
        assert edit.startswith(f"The file {MODULE} has been edited.") and "len_ = (len_ - 2) * 4" in edit
        stage = episode.conversation.agent.tools_map["file_editor"].executor.stage
        assert all(str(stage) not in text for text in texts(events, "file_editor"))
        diff = episode.diff()
        assert "-                        len_ = (len_ - 2) // 4" in diff
        assert "+                        len_ = (len_ - 2) * 4" in diff
        report = episode.evaluate(tmp_path / "eval")
        assert report.resolved, report.model_dump()
        assert episode.prediction().model_name_or_path == "test-model"
    assert not stage.exists()  # the editor's staging directory went with the conversation
    assert not Path(MODULE).exists() and base.read_bytes() == before


def test_nothing_replayed_is_an_empty_unresolved_diff(spec, task, tmp_path):
    with episode_conversation(spec=spec, llm=TestLLM.from_messages([call(1, "finish", message="Nothing.")])) as ep:
        ep.run()
        assert ep.diff() == ""
        report = backend_for(spec).evaluate(task, Prediction(instance_id=INSTANCE, model_name_or_path="oh",
                                                             model_patch=ep.diff()), tmp_path / "eval")
        assert not report.resolved and not report.patch_exists


@pytest.mark.parametrize("kind", ["sim", "hybrid"])
def test_sim_and_hybrid_through_the_same_tools_record_the_same_trajectory(kind, task, tmp_path):
    runs = {}
    for backend in ("real", kind):
        with episode_conversation(INSTANCE, dataset="lite", backend=backend,
                                  llm=TestLLM.from_messages(gold_script(task))) as episode:
            assert episode.backend.name == backend
            episode.run()
            runs[backend] = (list(episode.events), episode.diff())
            if backend == kind:
                report = episode.evaluate(tmp_path / kind)
                assert report.instance_id == INSTANCE and report.patch_exists
    (real_events, real_diff), (sim_events, sim_diff) = runs["real"], runs[kind]
    assert shape(real_events) == shape(sim_events)
    assert texts(real_events, "file_editor") == texts(sim_events, "file_editor")
    assert real_diff == sim_diff and "(len_ - 2) * 4" in sim_diff


def test_the_isolation_probes_pass_through_the_terminal_tool(episode):
    terminal = EpisodeTerminalExecutor(episode)

    def run(command: str) -> tuple[int, str]:
        observation = terminal(TerminalAction(command=command))
        assert not observation.is_error, observation.text
        return observation.exit_code, observation.text

    assert check_isolation(run) == []


def test_terminal_keeps_state_and_speaks_openhands(episode):
    terminal = EpisodeTerminalExecutor(episode)
    assert terminal(TerminalAction(command="cd /tmp && export GREETING=hi")).exit_code == 0
    out = terminal(TerminalAction(command="pwd && echo $GREETING"))
    assert out.text == "/tmp\nhi" and out.metadata.exit_code == 0
    assert out.metadata.suffix == "\n[The command completed with exit code 0.]"
    failed = terminal(TerminalAction(command="ls /nothere"))
    assert failed.exit_code == 2 and "No such file" in failed.text and not failed.is_error
    slow = terminal(TerminalAction(command="sleep 5; echo late", timeout=1))
    assert slow.timeout and slow.exit_code == 124 and "late" not in slow.text
    assert "timed out after 1 seconds" in slow.metadata.suffix
    assert terminal(TerminalAction(command="pwd")).text == "/tmp"  # a killed command keeps the shell's state
    empty = terminal(TerminalAction(command=""))
    assert empty.is_error and empty.text == "No previous running command to retrieve logs from."
    keys = terminal(TerminalAction(command="C-c", is_input=True))
    assert keys.is_error and keys.text == "No previous running command to interact with."
    two = terminal(TerminalAction(command="echo a\necho b"))
    assert two.is_error and two.text.startswith("Cannot execute multiple commands at once.")
    literal = terminal(TerminalAction(command='["ls", "-l"]'))
    assert literal.is_error and "looks like a Python/JSON list literal" in literal.text
    reset = terminal(TerminalAction(command="pwd", reset=True))
    assert "cannot be reset" in reset.text and reset.text.endswith("/tmp")
    with pytest.raises(ValueError, match="reset=True with is_input=True"):
        terminal(TerminalAction(command="x", reset=True, is_input=True))


FILES = {"pkg/a.py": "def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x + 1\n", "pkg/.hidden": "h\n",
         "pkg/sub/b.txt": "b\n", "README": "read me\n", ".env": "SECRET=1\n",
         "pkg/data.bin": b"\x00\x01\x02\xff binary", "pkg/latin.py": "s = 'caf\u00e9 cr\u00e8me'\n".encode("latin-1")}


def edits(root: str) -> list[FileEditorAction]:
    a = f"{root}/pkg/a.py"
    return [FileEditorAction(command="view", path=root), FileEditorAction(command="view", path=f"{root}/pkg"),
            FileEditorAction(command="view", path=a),
            FileEditorAction(command="view", path=a, view_range=[2, 9]),
            FileEditorAction(command="str_replace", path=a, old_str="return x + 1", new_str="return x + 2"),
            FileEditorAction(command="str_replace", path=a, old_str="nope", new_str="x"),
            FileEditorAction(command="str_replace", path=a, old_str="def g(x):\n    return x + 1",
                             new_str="def g(x):\n    return x - 1"),
            FileEditorAction(command="insert", path=a, insert_line=1, new_str="    '''f.'''"),
            FileEditorAction(command="undo_edit", path=a),
            FileEditorAction(command="create", path=a, file_text="x"),
            FileEditorAction(command="create", path=f"{root}/pkg/new.py", file_text="NEW = 1\n"),
            FileEditorAction(command="create", path=f"{root}/nodir/new.py", file_text="NEW = 1\n"),
            FileEditorAction(command="view", path=f"{root}/missing.py"),
            FileEditorAction(command="str_replace", path=f"{root}/pkg", old_str="a", new_str="b"),
            FileEditorAction(command="undo_edit", path=f"{root}/README"),
            FileEditorAction(command="view", path=f"{root}/pkg/data.bin"),
            FileEditorAction(command="str_replace", path=f"{root}/pkg/latin.py", old_str="caf\u00e9",
                             new_str="th\u00e9")]


def test_file_editor_is_openhands_own_editor_on_the_episodes_files(episode, tmp_path, request):
    root, host = f"/tmp/fidelity-{uuid.uuid4().hex[:6]}", tmp_path / "fidelity"
    for rel, content in FILES.items():
        episode.write_file(f"{root}/{rel}", content)
        (host / rel).parent.mkdir(parents=True, exist_ok=True)
        (host / rel).write_bytes(content if isinstance(content, bytes) else content.encode())
    ours, theirs = EpisodeFileEditorExecutor(episode), FileEditorExecutor(workspace_root=str(host))
    request.addfinalizer(lambda: shutil.rmtree(theirs.editor._history_manager.cache.directory, ignore_errors=True))
    for mine, own in zip(edits(root), edits(str(host)), strict=True):
        got, want = ours(mine), theirs(own)
        expected = want.text.replace(str(host), root)
        if mine.command == "create" and "nodir" in mine.path:  # the temp file's random name differs
            assert got.is_error and want.is_error and got.text.split("'")[0] == expected.split("'")[0]
            continue
        assert (got.text, got.is_error, got.path) == (expected, want.is_error, want.path and want.path.replace(
            str(host), root)), mine
    for rel in ("pkg/a.py", "pkg/latin.py"):
        assert episode.read_bytes(f"{root}/{rel}") == (host / rel).read_bytes(), rel
    assert (host / "pkg/latin.py").read_bytes() == "s = 'th\u00e9 cr\u00e8me'\n".encode("latin-1")  # kept latin-1
    assert episode.read_file(f"{root}/pkg/new.py") == "NEW = 1\n"
    assert not Path(f"{root}/pkg/new.py").exists()  # the host never saw the episode's path
    relative = ours(FileEditorAction(command="view", path="boltons/mathutils.py"))
    assert relative.is_error and relative.text.endswith("Maybe you meant /testbed/boltons/mathutils.py?")
    ours.close()
    assert not ours.stage.exists()


def test_a_dead_episode_is_openhands_agent_error_with_sweworlds_message(spec, task, tmp_path):
    executor = backend_for(spec).open(task)
    tools = sweworld_tools(executor)
    executor.close()
    with pytest.raises(SandboxError, match="is closed"):
        EpisodeTerminalExecutor(executor)(TerminalAction(command="echo hi"))
    llm = TestLLM.from_messages([call(1, "terminal", command="echo hi"),
                                 call(2, "file_editor", command="view", path="/testbed"),
                                 call(3, "finish", message="gave up")])
    conversation = Conversation(agent=Agent(llm=llm, tools=tools), workspace=str(tmp_path / "home"), visualizer=None)
    conversation.send_message("go")
    conversation.run()
    errors = [e for e in conversation.state.events if isinstance(e, AgentErrorEvent)]
    assert [e.tool_name for e in errors] == ["terminal", "file_editor"]
    assert all("is closed" in e.error and task.instance_id in e.error for e in errors)
    key = tools[0].params["episode"]
    conversation.close()
    with pytest.raises(SandboxError, match="no sweworld episode is attached"):  # the closed conversation released it
        attached(key)
    register_sweworld_tools()
    stale = Conversation(agent=Agent(llm=TestLLM.from_messages([]), tools=[Tool(name="sweworld_terminal",
                                                                               params={"episode": key})]),
                         workspace=str(tmp_path / "home2"), visualizer=None)
    with pytest.raises(SandboxError, match="no sweworld episode is attached"):
        stale.send_message("go")


def test_unknown_instance_and_an_environment_that_does_not_build(task, tmp_path):
    with pytest.raises(DatasetError, match="nope__nope-1"):
        episode_conversation("nope__nope-1", dataset="lite", llm=TestLLM.from_messages([]))
    row = {**task.model_dump(mode="json"), "instance_id": "boltons-openhands__broken-env",
           "install": "python -m pip install -e . && false"}
    dataset = tmp_path / "broken.jsonl"
    dataset.write_text(json.dumps(row) + "\n")
    with pytest.raises(EnvBuildError, match="boltons-openhands__broken-env") as info:
        episode_conversation("boltons-openhands__broken-env", dataset=str(dataset), llm=TestLLM.from_messages([]))
    assert "install exited with status" in str(info.value)


def test_sim_episodes_refuse_to_edit_what_they_read_only_as_text(task):
    sim = EpisodeSpec(instance_id=INSTANCE, dataset="lite", backend="sim")
    with backend_for(sim).open(task) as executor:
        assert not hasattr(executor, "read_bytes")
        executor.write_file("/tmp/latin.py", "s = 'caf\u00e9'\n".encode("latin-1"))
        editor = EpisodeFileEditorExecutor(executor)
        assert not editor(FileEditorAction(command="view", path="/tmp/latin.py")).is_error
        refused = editor(FileEditorAction(command="str_replace", path="/tmp/latin.py", old_str="s =", new_str="t ="))
        assert refused.is_error and refused.text == NOT_UTF8.format(path="/tmp/latin.py")
        assert executor.sandbox.read_bytes("/tmp/latin.py") == "s = 'caf\u00e9'\n".encode("latin-1")
        edited = editor(FileEditorAction(command="create", path="/tmp/new.py", file_text="x = '\u00e9'\n"))
        assert not edited.is_error and executor.read_file("/tmp/new.py") == "x = '\u00e9'\n"
        editor.close()
