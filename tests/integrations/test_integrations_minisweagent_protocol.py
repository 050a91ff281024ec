"""mini-swe-agent's own protocol over sweworld episodes, with mini's own classes: template variables,
the submission after the sentinel, and construction from a config (``get_environment``, its SWE-bench
batch procedure) as docs/minisweagent.md shows it."""

from __future__ import annotations

import json
import os
import platform
import re
from pathlib import Path

import minisweagent.run.benchmarks.swebench as mini_swebench
import pytest
import yaml

os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
pytest.importorskip("minisweagent")

from minisweagent.agents.default import DefaultAgent
from minisweagent.config import get_config_from_spec
from minisweagent.environments import get_environment
from minisweagent.models.test_models import DeterministicModel, make_output
from minisweagent.run.benchmarks.swebench import process_instance
from minisweagent.run.benchmarks.utils.batch_progress import RunBatchProgressManager
from minisweagent.utils.serialize import recursive_merge

from realtasks import MODULE
from sweworld.core.types import Task
from sweworld.harness.predictions import load_predictions
from sweworld.harness.report import make_summary
from sweworld.integrations.minisweagent import SENTINEL, SweworldEnvironment
from sweworld.tasks import save_tasks

pytestmark = [pytest.mark.bwrap]
DOC = Path(__file__).resolve().parents[2] / "docs" / "minisweagent.md"
SUBMIT_PATCH_FILE = f"echo {SENTINEL} && cat patch.txt"  # swebench.yaml's exact submit command
SUBMIT_NO_CHANGE = f"git diff > patch.txt; {SUBMIT_PATCH_FILE}"  # on an unchanged tree: patch.txt is empty


def doc_yaml() -> dict:
    return yaml.safe_load(re.search(r"```yaml\n(.*?)```", DOC.read_text(), re.S).group(1))


def scripted(*commands: str) -> DeterministicModel:
    return DeterministicModel(outputs=[make_output(f"step {n}", [{"command": c}]) for n, c in enumerate(commands)])


def swebench_agent(**overrides) -> dict:
    """mini's own swebench.yaml agent settings (its prompts), without the cost limit."""
    return {**get_config_from_spec("swebench.yaml")["agent"], "cost_limit": 0, **overrides}


@pytest.fixture
def small_env(sandbox, small_tree):
    task = Task(instance_id="org__small-1", repo="org/small", base_commit=small_tree[1], version="5.5.0",
                problem_statement="add() is wrong")
    return SweworldEnvironment(sandbox, task=task)


def test_platform_fields_are_not_shadowed_by_task_fields(small_env):
    agent = DefaultAgent(scripted(f"echo {SENTINEL}"), small_env, **swebench_agent(
        system_template="{{system}} {{release}} {{version}} {{machine}}",
        instance_template="{{task}} ({{repo}})"))
    agent.run("fix it")
    u = platform.uname()
    assert agent.messages[0]["content"] == f"{u.system} {u.release} {u.version} {u.machine}"
    assert agent.messages[1]["content"] == "fix it (org/small)"
    assert small_env.get_template_vars()["task_version"] == "5.5.0"


def test_swebench_procedure_submits_patch_txt_not_the_workspace_diff(small_env):
    model = scripted("sed -i 's/a + b/b + a/' pkg/__init__.py", "git diff -- pkg/__init__.py > patch.txt",
                     SUBMIT_PATCH_FILE)
    agent = DefaultAgent(model, small_env, **swebench_agent())
    result = agent.run("add() is wrong")
    assert result["exit_status"] == "Submitted", agent.messages[-1]
    submission = result["submission"]
    assert submission == small_env.executor.read_file("/testbed/patch.txt")
    assert submission.startswith("diff --git a/pkg/__init__.py b/pkg/__init__.py") and "+    return b + a" in submission
    assert "patch.txt" not in submission and "patch.txt" in small_env.diff()
    assert agent.messages[-1]["extra"]["submission_source"] == "output"


def test_nothing_after_the_sentinel_is_an_empty_submission(small_env):
    """Regression: an empty ``patch.txt`` after the sentinel was replaced by the workspace's diff, which
    then held ``patch.txt`` itself as a new empty file, and the run counted it as a patch."""
    agent = DefaultAgent(scripted(SUBMIT_NO_CHANGE), small_env, **swebench_agent())
    result = agent.run("add() is wrong")
    assert result["exit_status"] == "Submitted", agent.messages[-1]
    assert result["submission"] == "" and agent.messages[-1]["extra"]["submission_source"] == "output"
    assert agent.serialize()["info"]["submission"] == ""
    # what the old fallback submitted: patch.txt, new and empty
    assert small_env.diff().startswith("diff --git a/patch.txt b/patch.txt\nnew file mode 100644")
    task = small_env.task
    summary = make_summary([task.instance_id], {}, {task.instance_id: result["submission"]}, run_id="r", model="mini")
    assert summary.empty_patch_ids == [task.instance_id] and summary.completed_ids == []


def test_minis_batch_procedure_records_an_empty_model_patch(small_env, tmp_path, monkeypatch):
    """The same through mini's own SWE-bench instance procedure (its environment factory handing it the
    adapter): ``preds.json`` holds ``model_patch: ""``, which sweworld's loader and summary count as empty."""
    monkeypatch.setattr(mini_swebench, "get_sb_environment", lambda config, instance: small_env)
    model = {"model_class": "deterministic", "model_name": "deterministic",
             "outputs": scripted(SUBMIT_NO_CHANGE).config.outputs}
    config = recursive_merge(get_config_from_spec("swebench.yaml"), {"model": model, "agent": {"cost_limit": 0}})
    task, out = small_env.task, tmp_path / "mini-run"
    process_instance(task.model_dump(), out, config, RunBatchProgressManager(1, out / "exit_statuses.yaml"))
    assert json.loads((out / "preds.json").read_text())[task.instance_id]["model_patch"] == ""
    saved = json.loads((out / task.instance_id / f"{task.instance_id}.traj.json").read_text())
    assert saved["info"]["exit_status"] == "Submitted" and saved["info"]["submission"] == ""
    prediction = load_predictions(out / "preds.json", [task])[task.instance_id]
    assert prediction.model_patch == ""
    summary = make_summary([task.instance_id], {}, {task.instance_id: prediction.model_patch}, run_id="r", model="m")
    assert summary.empty_patch_ids == [task.instance_id]


def test_submission_mode_diff_ignores_the_output(sandbox, small_tree):
    env = SweworldEnvironment(sandbox, submission="diff")
    result = DefaultAgent(scripted("echo x > new.txt", SUBMIT_PATCH_FILE.replace("cat patch.txt", "echo hi")),
                          env, **swebench_agent()).run("t")
    assert result["submission"] == env.diff() and "new.txt" in result["submission"]


@pytest.mark.network
def test_get_environment_builds_the_adapter_from_the_documented_config(task, tmp_path):
    config = {**doc_yaml()["environment"], "dataset": str(save_tasks([task], tmp_path / "data.jsonl")),
              "instance_id": task.instance_id, "interpreter": ["bash", "-c"]}
    env = get_environment(config)
    try:
        assert isinstance(env, SweworldEnvironment) and env.task == task and env.owns_executor
        assert env.execute({"command": "pwd && git rev-parse HEAD"})["output"].split() == ["/testbed", task.base_commit]
    finally:
        env.close()
    assert not env.executor.episode_dir.exists()


@pytest.mark.network
def test_minis_swebench_instance_procedure_runs_on_a_sweworld_episode(task, tmp_path):
    """docs/minisweagent.md's run_mini.py loop body, with mini's deterministic model."""
    fix = f"sed -i 's/    if default is not _marker:/    if default is _marker:/' {MODULE}"
    model = {"model_class": "deterministic", "model_name": "deterministic", "outputs": scripted(
        fix, f"git diff -- {MODULE} > patch.txt", SUBMIT_PATCH_FILE).config.outputs}
    config = recursive_merge(get_config_from_spec("swebench.yaml"), doc_yaml(), {"model": model})
    environment = {**config["environment"], "dataset": str(save_tasks([task], tmp_path / "data.jsonl")),
                   "instance_id": task.instance_id}
    out = tmp_path / "mini-run"
    process_instance(task.model_dump(), out, {**config, "environment": environment},
                     RunBatchProgressManager(1, out / "exit_statuses.yaml"))
    prediction = json.loads((out / "preds.json").read_text())[task.instance_id]
    patch = prediction["model_patch"]
    assert patch.startswith(f"diff --git a/{MODULE} b/{MODULE}") and "+    if default is _marker:" in patch
    assert "patch.txt" not in patch
    saved = json.loads((out / task.instance_id / f"{task.instance_id}.traj.json").read_text())
    assert saved["info"]["exit_status"] == "Submitted"
    assert saved["info"]["config"]["environment"]["instance_id"] == task.instance_id
