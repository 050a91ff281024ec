"""inspect-ai on sweworld: inspect's own agent, tools (``bash``, ``bash_session``, ``text_editor``)
and deterministic model (``mockllm``) on episodes of shipped instances, scored by sweworld's harness
through ``sweworld_task``; the sandbox found by name as ``--sandbox sweworld`` finds it."""

from __future__ import annotations

import asyncio
import tempfile

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval
from inspect_ai.solver import basic_agent
from inspect_ai.tool import bash, bash_session, text_editor
from inspect_ai.util._sandbox.registry import registry_find_sandboxenv

from inspect_replay import call, gold_edits, mock_model
from sweworld.integrations.episodes import load_task
from sweworld.integrations.inspect_sandbox import SweworldSandboxEnvironment
from sweworld.integrations.inspect_task import sweworld_task
from sweworld.testing.isolation import check_isolation

pytestmark = [pytest.mark.bwrap, pytest.mark.network]

ID = "boltons-24.0.0__change_arith_op__a5f686dc"
TOOLS = [bash(timeout=180), bash_session(), text_editor()]


def run(task, model):
    [log] = inspect_eval(task, model=model, display="none", log_dir=tempfile.mkdtemp(prefix="inspect-logs-"), log_format="json")
    assert log.status == "success", log.error
    return log


def test_the_entry_point_registers_the_sandbox_by_name():
    import inspect_ai._util.entrypoints as entrypoints
    entrypoints.ensure_entry_points()
    assert registry_find_sandboxenv("sweworld") is SweworldSandboxEnvironment


def test_gold_replayed_through_inspects_tools_resolves(tmp_path):
    task = load_task(ID, "lite")
    test = task.FAIL_TO_PASS[0]
    model = mock_model(
        call("bash", command=f"cd /testbed && python -m pytest -q {test} 2>&1 | tail -3"),
        *gold_edits(task.patch),
        call("bash_session", action="type_submit", input="cd /testbed && export CHECKED=yes"),
        call("bash_session", action="type_submit", input=f"python -m pytest -q {test} 2>&1 | tail -1; echo $CHECKED $PWD"),
        call("submit", answer="fixed"))
    log = run(sweworld_task(dataset="lite", instance_ids=ID, solver=basic_agent(tools=TOOLS)), model)
    [sample] = log.samples
    tool_replies = [m for m in sample.messages if m.role == "tool"]
    assert "failed" in tool_replies[0].text  # the bug, before the fix
    assert "has been edited" in tool_replies[1].text, tool_replies[1].text  # text_editor's own words
    assert "1 passed" in tool_replies[3].text and "yes /testbed" in tool_replies[3].text  # the session kept state
    score = sample.scores["sweworld_scorer"]
    assert score.value == "C", score.explanation
    assert score.metadata["report"]["resolved"] and "mathutils.py" in score.answer
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_nothing_replayed_is_unresolved():
    log = run(sweworld_task(dataset="lite", instance_ids=ID, solver=basic_agent(tools=TOOLS)),
              mock_model(call("submit", answer="nothing")))
    score = log.samples[0].scores["sweworld_scorer"]
    assert score.value == "I" and score.answer == ""
    assert score.metadata["report"]["patch_exists"] is False


def test_the_sim_backend_records_the_same_shape():
    task = load_task(ID, "lite")
    script = [call("bash", command="cd /testbed && ls boltons | head -2"), *gold_edits(task.patch),
              call("bash", command=f"python -m pytest -q {task.FAIL_TO_PASS[0]}"), call("submit", answer="x")]
    logs = {backend: run(sweworld_task(dataset="lite", instance_ids=ID, backend=backend,
                                       solver=basic_agent(tools=[bash(), text_editor()])), mock_model(*script))
            for backend in ("real", "sim", "hybrid")}
    shapes = {b: [(m.role, [c.function for c in getattr(m, "tool_calls", None) or []]) for m in log.samples[0].messages]
              for b, log in logs.items()}
    assert shapes["real"] == shapes["sim"] == shapes["hybrid"]
    sim = logs["sim"].samples[0]
    assert sim.scores["sweworld_scorer"].metadata["backend"] == "sim"
    assert "boltons/mathutils.py" in sim.scores["sweworld_scorer"].answer  # the editor's edit, made for real
    assert "__init__.py" in next(m for m in sim.messages if m.role == "tool").text  # navigation ran for real


def test_isolation_holds_through_inspects_exec():
    async def probe():
        envs = await SweworldSandboxEnvironment.sample_init("probe", None, {"instance_id": ID, "dataset": "lite"})
        env = envs["default"]
        loop = asyncio.get_running_loop()

        def run_one(command: str) -> tuple[int, str]:
            result = asyncio.run_coroutine_threadsafe(env.exec(["bash", "-c", command], timeout=60), loop).result()
            return result.returncode, result.stdout + result.stderr

        try:
            return await loop.run_in_executor(None, check_isolation, run_one)
        finally:
            await SweworldSandboxEnvironment.sample_cleanup("probe", None, envs, False)

    assert asyncio.run(probe()) == []


def test_an_unknown_instance_is_one_clear_error():
    from inspect_ai._util.error import PrerequisiteError
    with pytest.raises(PrerequisiteError, match="not-an-instance") as info:
        asyncio.run(SweworldSandboxEnvironment.sample_init("x", None, {"instance_id": "not-an-instance",
                                                                       "dataset": "lite"}))
    assert "lite" in str(info.value)


def test_a_closed_episode_is_unavailable():
    from inspect_ai.util._sandbox.environment import SandboxUnavailableError

    async def closed():
        envs = await SweworldSandboxEnvironment.sample_init("x", None, {"instance_id": ID, "dataset": "lite"})
        await SweworldSandboxEnvironment.sample_cleanup("x", None, envs, False)
        await envs["default"].exec(["true"])

    with pytest.raises(SandboxUnavailableError, match=ID):
        asyncio.run(closed())


def test_an_environment_that_does_not_build_is_one_clear_error(tmp_path):
    from inspect_ai._util.error import PrerequisiteError

    from sweworld.tasks import save_tasks
    broken = load_task(ID, "lite").model_copy(update={"install": "echo the install fails here >&2; exit 3"})
    dataset = save_tasks([broken], tmp_path / "broken.jsonl")
    with pytest.raises(PrerequisiteError, match=r"exit|status 3|failed") as info:
        asyncio.run(SweworldSandboxEnvironment.sample_init("x", None, {"instance_id": ID, "dataset": str(dataset)}))
    assert "build log" in str(info.value)


def test_execs_output_past_inspects_limit_raises_its_error_with_the_head():
    """inspect's exec contract: at most 10 MiB per stream (``INSPECT_SANDBOX_MAX_EXEC_OUTPUT_SIZE``, or
    a scoped override), else ``OutputLimitExceededError`` (20 MiB used to come back whole)."""
    from inspect_ai.util import OutputLimitExceededError
    from inspect_ai.util._sandbox.limits import override_max_exec_output_size

    async def flood():
        envs = await SweworldSandboxEnvironment.sample_init("flood", None, {"instance_id": ID, "dataset": "lite"})
        env = envs["default"]
        try:
            small = await env.exec(["bash", "-c", "head -c 1000 /dev/zero | tr '\\0' a"], timeout=120)
            assert small.stdout == "a" * 1000
            with pytest.raises(OutputLimitExceededError) as default:
                await env.exec(["bash", "-c", "head -c 20971520 /dev/zero | tr '\\0' b"], timeout=300)
            assert default.value.limit_str == "10 MiB" and len(default.value.truncated_output) == 10 * 1024**2
            with override_max_exec_output_size(1024 * 1024):
                with pytest.raises(OutputLimitExceededError) as scoped:
                    await env.exec(["bash", "-c", "head -c 2000000 /dev/zero | tr '\\0' c; echo err >&2"],
                                   timeout=120)
                assert scoped.value.limit_str == "1 MiB" and scoped.value.truncated_output.startswith("c")
                fits = await env.exec(["bash", "-c", "head -c 1048576 /dev/zero | tr '\\0' d"], timeout=120)
                assert len(fits.stdout) == 1024 * 1024
        finally:
            await SweworldSandboxEnvironment.sample_cleanup("flood", None, envs, False)

    asyncio.run(flood())
