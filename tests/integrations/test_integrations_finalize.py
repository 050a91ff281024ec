"""An adapter or ``SWEEnv`` nobody closes still gives its episode back: when collected, and at exit."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sweworld.integrations.gym import SWEEnv
from sweworld.integrations.minisweagent import from_task
from sweworld.tasks import save_tasks

pytestmark = [pytest.mark.bwrap, pytest.mark.network]

AT_EXIT = """
import os, sys
os.environ["MSWEA_SILENT_STARTUP"] = "1"
from minisweagent.environments import get_environment
from sweworld.integrations.gym import SWEEnv
from sweworld.tasks import load_tasks
env = get_environment({"environment_class": "sweworld.integrations.minisweagent.SweworldEnvironment",
                       "dataset": sys.argv[1], "instance_id": sys.argv[2]})
gym = SWEEnv(list(load_tasks(sys.argv[1])))
gym.reset()
print(env.executor.episode_dir, gym.sandbox.episode_dir, gym.log_dir)
"""


def test_an_adapter_never_closed_gives_its_episode_back_when_collected(task, backend):
    env = from_task(task, backend)
    path = env.executor.episode_dir
    assert path.is_dir()
    del env
    gc.collect()
    assert not path.exists()


def test_a_gym_env_never_closed_gives_its_episode_and_logs_back_when_collected(task, backend):
    env = SWEEnv([task], backend=backend)
    env.reset()
    path, logs = env.sandbox.episode_dir, env.log_dir
    assert path.is_dir() and logs.is_dir()
    del env
    gc.collect()
    assert not path.exists() and not logs.exists()


def test_both_give_everything_back_at_interpreter_exit(task, tmp_path):
    dataset = save_tasks([task], tmp_path / "data.jsonl")
    done = subprocess.run([sys.executable, "-c", AT_EXIT, str(dataset), task.instance_id], capture_output=True,
                          text=True, env=os.environ)
    assert done.returncode == 0, done.stderr
    paths = [Path(p) for p in done.stdout.split()]
    assert len(paths) == 3 and not any(p.exists() for p in paths)
