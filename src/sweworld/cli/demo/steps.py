"""The steps of ``sweworld demo`` (see ``command.py``): each prints what it did and returns report sections."""

from __future__ import annotations

import shlex
import time
from typing import TYPE_CHECKING

from rich.table import Table

from sweworld.cli import common
from sweworld.core.config import EvalConfig, RolloutConfig, RunnerConfig, timeouts

if TYPE_CHECKING:
    from sweworld.cli.demo.run import DemoRun
    from sweworld.core.types import Task
    from sweworld.htmlreport import Section

TEST = "python -m pytest -q -p no:cacheprovider {tests} 2>&1 | tail -n 1"
N_SAMPLES = 2


def environments(run: DemoRun) -> list[Section]:
    """Fetch and cache every repository, then build every environment and instance layer."""
    from sweworld.core.errors import EnvBuildError
    from sweworld.htmlreport import Section
    from sweworld.htmlreport import Table as ReportTable

    fetched, fetch_s = _fetch_all(run)
    common.out.print(f"{plural(len({t.repo_source or t.repo for t in run.tasks}), 'repository', 'repositories')}"
                     f" fetched and cached in {fetch_s:.1f}s")
    built, build_s = _build_all(run)
    table, rows, kept, failed = _environment_rows(run, built, fetched, build_s)
    common.out.print(table)
    common.out.print(f"environments ready in {build_s:.1f}s")
    if not kept:
        raise EnvBuildError("no environment of the chosen instances could be built",
                            hint="read the build logs named above")
    run.tasks = kept
    run.results["environments"] = {"fetch_s": fetch_s, "build_s": build_s, "failed": failed}
    text = (f"Each repository was fetched once and cached ({fetch_s:.1f}s), then one environment per "
            f"environment key was built inside the sandbox, plus one install layer per base commit "
            f"({build_s:.1f}s; both are cached for later runs). Times are per instance, waits for a shared "
            f"build included.")
    if failed:
        text += f" Skipped (build failed): {', '.join(failed)}."
    return [Section(title="Environments", text=text,
                    table=ReportTable(columns=["instance", "repository", "environment", "python", "fetch s",
                                               "build s"], rows=rows))]


def _fetch_all(run: DemoRun) -> tuple[dict[str, float], float]:
    """Fetch and cache every task's trees: seconds per instance, and in all."""
    from sweworld.parallel.map import map_items

    def fetch(task: Task) -> float:
        t0 = time.perf_counter()
        run.builder.repos.base_tree(task)
        run.builder.repos.env_tree(task)
        return time.perf_counter() - t0

    started = time.perf_counter()
    fetched = dict(zip([t.instance_id for t in run.tasks], map_items(run.tasks, fetch, workers=run.workers),
                       strict=True))
    return fetched, time.perf_counter() - started


def _build_all(run: DemoRun) -> tuple[list, float]:
    """Build every task's environment and layer: (layer, seconds) or the build's error per task, and
    the seconds in all."""
    from sweworld.core.errors import EnvBuildError, RepoError
    from sweworld.parallel.map import map_items

    def build(task: Task):
        t0 = time.perf_counter()
        layer = run.builder.instance(task)
        return layer, time.perf_counter() - t0

    started = time.perf_counter()
    built = map_items(run.tasks, build, workers=run.workers, catch=(EnvBuildError, RepoError))
    return built, time.perf_counter() - started


def _environment_rows(run: DemoRun, built: list, fetched: dict[str, float], build_s: float):
    """The environments table, the report's rows, the tasks built and the ids that failed (each said)."""
    from sweworld.core.errors import SWEWorldError

    table = Table("instance", "repository", "environment", "python", "fetch", "build",
                  title=f"environments (ready in {build_s:.1f}s)")
    rows, kept, failed = [], [], []
    for task, result in zip(run.tasks, built, strict=True):
        source = task.repo_source or task.repo
        if isinstance(result, SWEWorldError):
            failed.append(task.instance_id)
            common.err.print(f"[yellow]skipped[/yellow] {task.instance_id}: {result.message}")
            rows.append([task.instance_id, source, "build failed", None, round(fetched[task.instance_id], 2),
                         None])
            table.add_row(task.instance_id, source, "[red]build failed[/red]", "-",
                          f"{fetched[task.instance_id]:.1f}s", "-")
            continue
        layer, seconds = result
        kept.append(task)
        rows.append([task.instance_id, source, layer.env.key, layer.env.interpreter.version,
                     round(fetched[task.instance_id], 2), round(seconds, 2)])
        table.add_row(task.instance_id, source, layer.env.key, layer.env.interpreter.version,
                      f"{fetched[task.instance_id]:.1f}s", f"{seconds:.1f}s")
    return table, rows, kept, failed


def substrate(run: DemoRun) -> list[Section]:
    """Build one real environment and use it from two isolated episodes."""
    from sweworld.envs import episode_sandbox
    from sweworld.htmlreport import Section
    from sweworld.htmlreport import Table as ReportTable

    task = run.instance or run.tasks[0]
    builder = run.builder
    say = common.out.print
    say(f"[bold]task[/bold] {task.instance_id}  ({task.repo_source or task.repo} @ {task.base_commit[:12]})")
    started = time.perf_counter()
    layer = builder.instance(task)
    build_s = time.perf_counter() - started
    say(f"environment {layer.env.key} (python {layer.env.interpreter.version}) ready in {build_s:.1f}s "
        f"[dim]{layer.env.path}[/dim]")
    tests = " ".join(shlex.quote(t) for t in task.FAIL_TO_PASS) or test_target(layer.tree)
    rows = []
    started = time.perf_counter()
    with episode_sandbox(layer, label="demo-a") as a, episode_sandbox(layer, label="demo-b") as b:
        open_ms = (time.perf_counter() - started) * 1000 / 2
        say(f"two isolated episodes opened ({a.info['route']} route, {a.info['workspace']} workspaces, "
            f"process limit by {a.info['process_limit']}), {open_ms:.0f} ms each")
        if task.test_patch:
            for name, sb in (("A", a), ("B", b)):
                sb.write_file("/tmp/tests.diff", task.test_patch)
                applied = sb.run("git apply /tmp/tests.diff && git diff --stat | tail -n 1")
                rows.append((name, "apply the test patch", summary_line(applied.output), ""))
        for name, sb in (("A", a), ("B", b)):
            result = sb.run(TEST.format(tests=tests), timeout=timeouts.COMMAND)
            rows.append((name, "run the failing tests of the issue", summary_line(result.output),
                         f"{result.duration:.2f}s"))
        if task.patch:
            a.write_file("/tmp/fix.diff", task.patch)
            applied = a.run("git apply /tmp/fix.diff && git diff --stat | tail -n 1")
            rows.append(("A", "apply the fix (gold patch)", summary_line(applied.output), ""))
        for name, sb in (("A", a), ("B", b)):
            result = sb.run(TEST.format(tests=tests), timeout=timeouts.COMMAND)
            rows.append((name, "run them again", summary_line(result.output), f"{result.duration:.2f}s"))
        net = a.run("python -c \"import socket; socket.create_connection(('pypi.org', 443), timeout=3)\" "
                    "2>&1 | tail -n 1")
        rows.append(("A", "reach the network", summary_line(net.output), ""))
        rows.append(("A", "diff against base commit", f"{len(a.diff().splitlines())} lines", ""))
        rows.append(("B", "diff against base commit", f"{len(b.diff().splitlines())} lines", ""))
    table = Table("episode", "action", "result", "time", title="two episodes, one environment")
    for row in rows:
        table.add_row(*row)
    say(table)
    clean = builder.repos.tree(task.repo, task.base_commit, task.repo_source)
    untouched = is_clean(clean)
    say(f"base tree untouched: {untouched}  [dim]{clean}[/dim]")
    text = (f"Instance {task.instance_id}: two episodes ({a.info['workspace']} workspaces, {open_ms:.0f} ms to "
            f"open each) over one shared environment, isolated from each other, from the network and from the "
            f"host. The fix applied in A changes nothing in B nor in the cached base tree "
            f"(untouched: {'yes' if untouched else 'NO'}).")
    return [Section(title="Isolation", text=text,
                    table=ReportTable(columns=["episode", "action", "result", "time"],
                                      rows=[list(row) for row in rows]))]


def harness(run: DemoRun) -> list[Section]:
    """Evaluate the gold and the empty predictions of the chosen instances."""
    from sweworld.harness.predictions import Prediction
    from sweworld.htmlreport import evaluation_section
    from sweworld.runs.eval import evaluate_run

    table = Table("predictions", "instances", "resolved", "unresolved", "empty patch", "errors", "summary",
                  title="docker-free evaluation (SWE-bench layout)")
    summaries: dict[str, dict] = {}
    for model, patch_of in (("gold", lambda t: t.patch), ("empty", lambda t: "")):
        preds = {t.instance_id: Prediction(instance_id=t.instance_id, model_name_or_path=model,
                                           model_patch=patch_of(t)) for t in run.tasks}
        settings = EvalConfig(run_id="demo", logs_dir=run.out / "logs", out=run.out, force=True,
                              runner=RunnerConfig(workers=run.workers))
        summary, path = evaluate_run(run.tasks, preds, settings, model=model, backend=run.backend)
        summaries[model] = summary
        table.add_row(model, str(summary["total_instances"]), str(summary["resolved_instances"]),
                      str(summary["unresolved_instances"]), str(summary["empty_patch_instances"]),
                      str(summary["error_instances"]), str(path))
    common.out.print(table)
    run.results["evaluation"] = summaries
    return [evaluation_section(summaries, title="Evaluation: gold and empty predictions")]


def rollouts(run: DemoRun) -> list[Section]:
    """Roll out the oracle (with test runs) and noop policies, every trajectory evaluated by the harness."""
    import shutil

    from sweworld.agents.config import load_agent_config
    from sweworld.agents.policies import NoopPolicy, TestingOraclePolicy
    from sweworld.htmlreport import instances_section, rollout_section
    from sweworld.runs.rollout import run_rollouts
    from sweworld.runs.store import TrajectoryStore

    table = Table("policy", "trajectories", "resolve rate", "empty-patch rate", "stuck rate", "mean steps",
                  "pass@1", "pass@2", title="rollouts (agent loop + tools, rewards from the harness)")
    summaries: dict[str, dict] = {}
    trajectories = []
    for name, policy in (("oracle-tests", TestingOraclePolicy), ("noop", NoopPolicy)):
        target = run.out / "rollouts" / name
        shutil.rmtree(target, ignore_errors=True)
        summary = run_rollouts(run.tasks, policy, RolloutConfig(out=target, n_samples=N_SAMPLES,
                                                                runner=RunnerConfig(workers=run.workers)),
                               agent=load_agent_config(), backend=run.backend)
        summaries[name] = summary
        trajectories += TrajectoryStore(target / "trajectories.jsonl").load()
        table.add_row(name, str(summary["trajectories"]), str(summary["resolve_rate"]),
                      str(summary["empty_patch_rate"]), str(summary["stuck_rate"]), str(summary["mean_steps"]),
                      str(summary.get("pass@1")), str(summary.get("pass@2")))
    common.out.print(table)
    run.results["rollouts"] = summaries
    return [rollout_section(summaries, title=f"Rollouts: oracle-tests and noop, {N_SAMPLES} samples each"),
            instances_section(trajectories, title="Trajectories")]


def plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def summary_line(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def test_target(tree) -> str:
    for name in ("tests", "testing", "test"):
        if (tree / name).is_dir():
            return name
    found = sorted(p.name for p in tree.glob("test_*.py"))
    return " ".join(found) or "."


def is_clean(tree) -> bool:
    import subprocess
    status = subprocess.run(["git", "status", "--porcelain"], cwd=tree, capture_output=True, text=True)
    return status.returncode == 0 and not status.stdout.strip()
