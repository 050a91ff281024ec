"""TRL's own ``GRPOTrainer`` on sweworld episodes (``environment_factory``), through ``sweworld train
rl --config rl.yaml``: a tiny model built from a config (no download) takes 2 GRPO steps on 2
default-dataset instances, once on the real backend and once on the sim backend.

The tiny model is warmed up first (``train_sft`` on rows that carry the prompts TRL renders: the same
tools in TRL's order) to answer each task either with the tool call that fixes it or with "Done.":
a group of rollouts then has rewards that differ, so GRPO's advantages and gradients are not zero.
Checked: the run's files (resolved config, checkpoints, metrics per step, rollouts), gradients that
are not zero and weights that moved, each reward equal to the backend's verdict on that rollout's own
patch (graded again here), and no episode left open.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from unidiff import PatchSet

from sweworld.backends import make_backend
from sweworld.harness.predictions import Prediction
from sweworld.integrations import trl as sw
from sweworld.rl.rewards import reward_of
from sweworld.sandbox import workdirs

pytestmark = [pytest.mark.slow, pytest.mark.train, pytest.mark.bwrap, pytest.mark.network]

pytest.importorskip("trl", reason="the train extra is not installed (pip install 'sweworld[train]')")

IDS = ["cachetools-5.5.0__swap_call_args__62d96ed1", "cachetools-5.5.0__invert_condition__ec0494b4"]
AGENT = 'system_template: "Fix the repository at {{ workdir }} with the tools."\ninstance_template: "Task {{ instance_id }}."\n'
"""Short prompts: the tiny model learns its two answers in fewer steps (the tool schemas stay whole)."""
ONE_THREAD = {**os.environ, "OMP_NUM_THREADS": "1", "TRL_EXPERIMENTAL_SILENCE": "1"}


def fix_call(task) -> dict:
    """The assistant message calling str_replace_editor with the gold patch's one changed line."""
    patched = PatchSet(task.patch)[0]
    hunk = patched[0]
    arguments = {"command": "str_replace", "path": f"/testbed/{patched.path}",
                 "old_str": "".join(line.value for line in hunk if line.is_removed),
                 "new_str": "".join(line.value for line in hunk if line.is_added)}
    return {"role": "assistant", "content": "",
            "tool_calls": [{"type": "function", "function": {"name": "str_replace_editor", "arguments": arguments}}]}


@pytest.fixture(scope="module")
def warm(tmp_path_factory) -> tuple[Path, Path]:
    """(the warmed-up tiny model, the agent config of its prompts)."""
    from trl.chat_template_utils import qwen2_5_chat_template

    from sweworld.train.rows import row_texts
    from sweworld.train.sft import SFTTrainOptions, train_sft
    from sweworld.train.tiny import build_tiny

    root = tmp_path_factory.mktemp("grpo")
    agent = root / "agent.yaml"
    agent.write_text(AGENT)
    tasks = sw.environment_factory("default", backend="sim", instance_ids=IDS).tasks
    rows = []
    for row in sw.dataset(list(tasks.values()), agent_config=agent):
        fixed = [*row["prompt"], fix_call(tasks[row["instance_id"]]),
                 {"role": "tool", "name": "str_replace_editor", "content": "The file has been edited."},
                 {"role": "assistant", "content": "Done."}]
        done = [*row["prompt"], {"role": "assistant", "content": "Done."}]
        rows += [{"messages": fixed, "tools": sw.tools()}] * 2 + [{"messages": done, "tools": sw.tools()}]
    data = root / "warm.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    tiny = build_tiny(root / "tiny", (text for r in rows for text in row_texts(r)), hidden=96,
                      template=qwen2_5_chat_template)
    summary = train_sft([data], SFTTrainOptions(model=str(tiny), out=root / "warm", max_steps=240, batch_size=4,
                                                learning_rate=1e-2, assistant_only_loss=True, max_length=None,
                                                logging_steps=20))
    assert summary.losses[-1] < 0.1, summary.losses  # it learned both answers
    return root / "warm", agent


def episodes_of(pid: int) -> set[Path]:
    """The episode directories on disk whose owner is the process ``pid`` (other tests run beside this one)."""
    root = workdirs.root()
    return {d for d in (root.iterdir() if root.is_dir() else ()) if (workdirs.read_owner(d) or {}).get("pid") == pid}


def regrade(backend_name: str, rollouts: list[dict], logs: Path) -> dict[str, float]:
    """Each distinct (instance, patch) graded again by a fresh backend of the same kind."""
    backend = make_backend(backend_name)
    tasks = sw.environment_factory("default", backend=backend, instance_ids=IDS).tasks
    verdicts: dict[str, float] = {}
    for r in rollouts:
        key = r["instance_id"] + "\0" + r["patch"]
        if key not in verdicts:
            prediction = Prediction(instance_id=r["instance_id"], model_name_or_path="regrade", model_patch=r["patch"])
            report = backend.evaluate(tasks[r["instance_id"]], prediction, logs / str(len(verdicts)), timeout=600)
            verdicts[key] = reward_of(report) or 0.0
    return verdicts


@pytest.mark.parametrize("backend", ["real", "sim"])
def test_two_grpo_steps_from_the_cli_reward_each_rollout_with_its_own_verdict(warm, backend, tmp_path):
    import torch
    from safetensors.torch import load_file

    model, agent = warm
    out = tmp_path / "rl"
    config = tmp_path / "rl.yaml"
    config.write_text(json.dumps({
        "model": str(model), "dataset": "default", "instance_ids": IDS, "backend": {"kind": backend},
        "agent_config": str(agent), "out": str(out), "max_steps": 2, "num_generations": 4, "batch_size": 4,
        "grad_accum": 2, "max_completion_length": 512, "max_tool_calls": 3, "lr": 1e-3, "save_steps": 1,
        "seed": 0}))
    run = subprocess.Popen([sys.executable, "-m", "sweworld.cli.app", "train", "rl", "--config", str(config)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ONE_THREAD)
    stdout, stderr = run.communicate()
    assert run.returncode == 0, stdout[-3000:] + stderr[-3000:]

    # the run's files: resolved config, a checkpoint per step, the model, metrics per step, every rollout
    assert (out / "config.yaml").is_file() and "kind: " + backend in (out / "config.yaml").read_text()
    assert (out / "checkpoint-1").is_dir() and (out / "checkpoint-2").is_dir()
    summary = json.loads((out / "rl_summary.json").read_text())
    assert summary["steps"] == 2 and summary["backend"] == backend and summary["instances"] == 2
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [1, 2]
    rollouts = [json.loads(line) for line in (out / "rollouts.jsonl").read_text().splitlines()]
    assert len(rollouts) == summary["rollouts"] == 2 * 2 * 4  # 2 generation rounds x 2 prompts x 4 rollouts
    assert sum(m["rollouts"] for m in metrics) == len(rollouts)
    for m in metrics:
        assert m["reward_mean"] == pytest.approx(m["trl/rewards/SWEWorldEnv/mean"], abs=1e-6)

    # the model acted: some rollouts fixed the task and some did not, so gradients were not zero
    fixed = [r for r in rollouts if r["patch"]]
    assert fixed and len(fixed) < len(rollouts)
    assert all(r["error"] is None for r in rollouts)
    assert max(m["trl/grad_norm"] for m in metrics) > 0
    start, end = load_file(model / "model.safetensors"), load_file(out / "model.safetensors")
    assert any(not torch.equal(start[k], end[k]) for k in start)

    # each reward is the verdict on that rollout's own patch, graded again
    verdicts = regrade(backend, rollouts, tmp_path / "regrade")
    for r in rollouts:
        assert r["reward"] == verdicts[r["instance_id"] + "\0" + r["patch"]], r
    if backend == "real":
        assert {r["reward"] for r in rollouts} == {0.0, 1.0} and summary["resolved"] >= 1
    else:
        assert all(0.0 <= r["reward"] <= 1.0 for r in rollouts) and len({r["reward"] for r in rollouts}) >= 2

    # no episode left open: the run's episode directories are gone with their episodes
    assert episodes_of(run.pid) == set()
