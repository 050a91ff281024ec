"""``sweworld demo``: the main job on the embedded default dataset.

1. Substrate: fetch a real PyPI release, build its environment once inside the sandbox, open two
   isolated copy-on-write episodes over it, run the issue's failing tests in both, fix the code in
   one and show that the other and the cached base tree are untouched.
2. Harness: evaluate the gold and the empty predictions of the dataset's real bug instances,
   docker-free, and print the run summaries (SWE-bench's layout under ``--out``).
3. Agents: roll out the ``oracle`` and ``noop`` policies (2 samples each) through the agent loop and
   the tools, evaluate every trajectory, print resolve / empty-patch / stuck rates and pass@k.
"""

from __future__ import annotations

import shlex
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from sweworld.cli import common
from sweworld.cli.common import Dataset, ReposDir, Workers

TEST = "python -m pytest -q -p no:cacheprovider {tests} 2>&1 | tail -n 1"


def _summary_line(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def demo(dataset: Dataset = common.DEFAULT_DATASET, repos_dir: ReposDir = None,
         instance: Annotated[str | None, typer.Option(help="Instance id (default: the first).")] = None,
         out: Annotated[Path, typer.Option(help="Where evaluation logs and summaries go.")] = Path("runs/demo"),
         workers: Workers = 2) -> None:
    """Build one real environment, use it from two isolated episodes, then evaluate gold and empty
    predictions of the real bug instances."""
    _substrate(dataset, repos_dir, instance)
    _harness(dataset, repos_dir, out, workers)
    _rollouts(dataset, repos_dir, out, workers)


def _rollouts(dataset: str, repos_dir, out: Path, workers: int) -> None:
    import shutil

    from sweworld.agents.config import load_agent_config
    from sweworld.agents.policies import NoopPolicy, OraclePolicy
    from sweworld.envs import EnvBuilder
    from sweworld.repos import RepoStore
    from sweworld.rollout.runner import run_rollouts

    with common.reported():
        tasks = [t for t in common.load(dataset) if t.FAIL_TO_PASS]
        builder = EnvBuilder(RepoStore(repos_dir=repos_dir))
        table = Table("policy", "trajectories", "resolve rate", "empty-patch rate", "stuck rate", "mean steps",
                      "pass@1", "pass@2", title="rollouts (agent loop + tools, rewards from the harness)")
        for name, policy in (("oracle", OraclePolicy), ("noop", NoopPolicy)):
            target = out / "rollouts" / name
            shutil.rmtree(target, ignore_errors=True)
            summary = run_rollouts(tasks, policy, load_agent_config(), target, n_samples=2, workers=workers,
                                   builder=builder)
            table.add_row(name, str(summary["trajectories"]), str(summary["resolve_rate"]),
                          str(summary["empty_patch_rate"]), str(summary["stuck_rate"]), str(summary["mean_steps"]),
                          str(summary["pass@1"]), str(summary["pass@2"]))
        common.out.print(table)


def _harness(dataset: str, repos_dir, out: Path, workers: int) -> None:
    from sweworld.envs import EnvBuilder
    from sweworld.harness.predictions import Prediction
    from sweworld.harness.run import evaluate_run
    from sweworld.repos import RepoStore

    with common.reported():
        tasks = [t for t in common.load(dataset) if t.FAIL_TO_PASS]
        builder = EnvBuilder(RepoStore(repos_dir=repos_dir))
        table = Table("predictions", "instances", "resolved", "unresolved", "empty patch", "errors", "summary",
                      title="docker-free evaluation (SWE-bench layout)")
        for model, patch_of in (("gold", lambda t: t.patch), ("empty", lambda t: "")):
            preds = {t.instance_id: Prediction(instance_id=t.instance_id, model_name_or_path=model,
                                               model_patch=patch_of(t)) for t in tasks}
            summary, path = evaluate_run(tasks, preds, run_id="demo", model=model, logs_root=out / "logs",
                                         summary_dir=out, workers=workers, force=True, builder=builder)
            table.add_row(model, str(summary["total_instances"]), str(summary["resolved_instances"]),
                          str(summary["unresolved_instances"]), str(summary["empty_patch_instances"]),
                          str(summary["error_instances"]), str(path))
        common.out.print(table)


def _substrate(dataset: str, repos_dir, instance: str | None) -> None:
    """Build one real environment and use it from two isolated episodes."""
    from sweworld.envs import EnvBuilder, episode_sandbox
    from sweworld.repos import RepoStore

    with common.reported():
        taskset = common.load(dataset, instance_ids=[instance] if instance else None)
        task = taskset[0]
        builder = EnvBuilder(RepoStore(repos_dir=repos_dir))
        say = common.out.print
        say(f"[bold]task[/bold] {task.instance_id}  ({task.repo_source or task.repo} @ {task.base_commit[:12]})")
        started = time.perf_counter()
        layer = builder.instance(task)
        build_s = time.perf_counter() - started
        say(f"environment {layer.env.key} (python {layer.env.interpreter.version}) ready in {build_s:.1f}s "
            f"[dim]{layer.env.path}[/dim]")
        tests = " ".join(shlex.quote(t) for t in task.FAIL_TO_PASS) or _test_target(layer.tree)
        rows = []
        started = time.perf_counter()
        with episode_sandbox(layer, label="demo-a") as a, episode_sandbox(layer, label="demo-b") as b:
            open_ms = (time.perf_counter() - started) * 1000 / 2
            say(f"two isolated episodes opened ({a.info['workspace']} workspaces, "
                f"process limit by {a.info['process_limit']}), {open_ms:.0f} ms each")
            for name, sb in (("A", a), ("B", b)):
                result = sb.run(TEST.format(tests=tests), timeout=600)
                rows.append((name, "run the failing tests of the issue", _summary_line(result.output),
                             f"{result.duration:.2f}s"))
            if task.patch:
                a.write_file("/tmp/fix.diff", task.patch)
                applied = a.run("git apply /tmp/fix.diff && git diff --stat | tail -n 1")
                rows.append(("A", "apply the fix (gold patch)", _summary_line(applied.output), ""))
            for name, sb in (("A", a), ("B", b)):
                result = sb.run(TEST.format(tests=tests), timeout=600)
                rows.append((name, "run them again", _summary_line(result.output), f"{result.duration:.2f}s"))
            net = a.run("python -c \"import socket; socket.create_connection(('pypi.org', 443), timeout=3)\" "
                        "2>&1 | tail -n 1")
            rows.append(("A", "reach the network", _summary_line(net.output), ""))
            rows.append(("A", "diff against base commit", f"{len(a.diff().splitlines())} lines", ""))
            rows.append(("B", "diff against base commit", f"{len(b.diff().splitlines())} lines", ""))
        table = Table("episode", "action", "result", "time", title="two episodes, one environment")
        for row in rows:
            table.add_row(*row)
        say(table)
        clean = builder.repos.tree(task.repo, task.base_commit, task.repo_source)
        say(f"base tree untouched: {_is_clean(clean)}  [dim]{clean}[/dim]")


def _test_target(tree) -> str:
    for name in ("tests", "testing", "test"):
        if (tree / name).is_dir():
            return name
    found = sorted(p.name for p in tree.glob("test_*.py"))
    return " ".join(found) or "."


def _is_clean(tree) -> bool:
    import subprocess
    status = subprocess.run(["git", "status", "--porcelain"], cwd=tree, capture_output=True, text=True)
    return status.returncode == 0 and not status.stdout.strip()
