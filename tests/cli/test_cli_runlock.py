"""Two processes on one run: the second says the run is in use by the first's pid and exits 2.

The first process is a real one holding the run's lock; the second is the real command line.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sweworld.cli.app import app
from sweworld.core.types import Task
from sweworld.runlock import lock_run
from sweworld.tasks import save_tasks

HOLD = ("import sys; from pathlib import Path; from sweworld.runlock import lock_run; "
        "lock_run(Path(sys.argv[1]), 'held', name=sys.argv[2]); print('held', flush=True); sys.stdin.read()")


@pytest.fixture
def hold():
    procs = []

    def start(directory: Path, name: str = ".sweworld.lock") -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-c", HOLD, str(directory), name], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        assert proc.stdout.readline().strip() == "held"
        return proc
    yield start
    for proc in procs:
        proc.stdin.close()
        proc.wait()


@pytest.fixture
def dataset(tmp_path) -> Path:
    task = Task(instance_id="org__repo-1", repo="org/repo", base_commit="0" * 40, problem_statement="bug",
                patch="diff --git a/x b/x\n", repo_source=f"file://{tmp_path}/missing.git")
    return save_tasks([task], tmp_path / "data.jsonl")


def in_use(result, pid: int) -> bool:
    return result.exit_code == 2 and f"in use by pid {pid}" in result.output


def test_second_eval_of_the_same_run_id_exits_2_naming_the_pid(tmp_path, dataset, hold):
    holder = hold(tmp_path / "logs/run_evaluation/same/gold")
    result = CliRunner().invoke(app, ["eval", "--dataset", str(dataset), "--run-id", "same",
                                      "--logs-dir", str(tmp_path / "logs"), "--out", str(tmp_path)])
    assert in_use(result, holder.pid), result.output
    assert not (tmp_path / "gold.same.json").exists()


def test_second_rollout_into_the_same_out_exits_2(tmp_path, dataset, hold):
    holder = hold(tmp_path / "out")
    result = CliRunner().invoke(app, ["rollout", "--dataset", str(dataset), "--policy", "noop",
                                      "--out", str(tmp_path / "out")])
    assert in_use(result, holder.pid), result.output
    assert not (tmp_path / "out/trajectories.jsonl").exists()


def test_second_validate_into_the_same_out_exits_2(tmp_path, dataset, hold):
    holder = hold(tmp_path, ".validated.jsonl.lock")
    result = CliRunner().invoke(app, ["validate", "--dataset", str(dataset), "--out", str(tmp_path / "validated.jsonl")])
    assert in_use(result, holder.pid), result.output
    assert not (tmp_path / "validated.jsonl").exists()


def test_a_killed_holder_leaves_no_stale_lock(tmp_path, hold):
    holder = hold(tmp_path)
    with pytest.raises(Exception, match=f"in use by pid {holder.pid}"):
        lock_run(tmp_path, "run")
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    with lock_run(tmp_path, "run") as lock:
        assert lock.path.read_text().split()[0] == str(os.getpid())


def test_the_lock_is_released_when_the_command_ends_in_process(tmp_path, dataset):
    """Library users and test runners call commands in one process: the second run of the same run
    id must not find the first one's lock (typer runs on its own copy of click)."""
    args = ["eval", "--dataset", str(dataset), "--run-id", "again", "--logs-dir", str(tmp_path / "logs"),
            "--out", str(tmp_path)]
    first, second = CliRunner().invoke(app, args), CliRunner().invoke(app, args)
    assert "in use" not in first.output and "in use" not in second.output, second.output
    assert first.exit_code == second.exit_code, (first.output, second.output)
