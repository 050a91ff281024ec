"""Docker-free grading of real SWE-bench instances against SWE-bench's Docker verdicts.

    python benchmarks/swebench_parity.py --dataset D --repos-dir DIR --verdicts V [--predictions P]
        [--workers 2] [--out runs/swebench]

Builds every environment first (timed per repository), then evaluates the gold patches, the empty
patch and, with ``--predictions``, an agent's predictions, and prints one table per repository:
instances, environment builds that succeeded and their time, gold resolved here vs Docker, empty
patches resolved (must be 0), agreement of the agent's verdicts with Docker's, wall time per
instance; then every instance whose verdict differs from Docker's with what its log says.
``V`` is JSON ``{instance_id: {"gold_resolved": bool, "<agent>_resolved": bool, ...}}`` (or any
format ``sweworld eval --compare-to`` reads). The script names no dataset and no repository.
(It is not called ``swebench.py``: run as a script, that name would shadow the swebench package.)
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sweworld.backends.real import RealBackend
from sweworld.core.config import EvalConfig, RunnerConfig
from sweworld.core.errors import SWEWorldError
from sweworld.envs import EnvBuilder
from sweworld.harness.compare import compare, load_verdicts
from sweworld.harness.predictions import Prediction, load_predictions, model_name
from sweworld.repos import RepoStore
from sweworld.runs.eval import evaluate_run
from sweworld.tasks import load_tasks


def build_all(builder: EnvBuilder, tasks, workers: int) -> tuple[dict[str, bool], dict[str, float]]:
    """Every instance layer, one repository at a time on ``workers`` threads (environments shared by
    key are built once): instance id -> built, repository -> wall seconds."""
    def one(task) -> tuple[str, bool]:
        try:
            builder.instance(task)
            return task.instance_id, True
        except SWEWorldError as exc:
            print(f"  build failed: {task.instance_id}: {exc.message.splitlines()[0]}")
            return task.instance_id, False
    built: dict[str, bool] = {}
    seconds: dict[str, float] = {}
    for repo, items in sorted(by_repo(tasks).items()):
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            built.update(pool.map(one, items))
        seconds[repo] = time.monotonic() - started
        print(f"  {repo}: {seconds[repo]:.0f}s for {len(items)} instances", flush=True)
    return built, seconds


def by_repo(tasks) -> dict[str, list]:
    groups: dict[str, list] = defaultdict(list)
    for task in tasks:
        groups[task.repo].append(task)
    return groups


def run(tasks, preds: dict[str, Prediction], name: str, args, builder,
        records: dict | None = None) -> tuple[dict[str, bool | None], dict]:
    """Verdicts (None: an infrastructure failure) and wall seconds per instance; ``records``, when
    given, receives each instance's whole report."""
    times: dict[str, float] = {}
    verdicts: dict[str, bool | None] = {}
    last = [time.monotonic()]

    def done(report) -> None:
        now = time.monotonic()
        times[report.instance_id] = now - last[0]
        last[0] = now
        verdicts[report.instance_id] = None if report.error_kind == "infra" else report.resolved
        if records is not None:
            records[report.instance_id] = report
    evaluate_run(tasks, preds,
                 EvalConfig(run_id=name, logs_dir=args.out / "logs", out=args.out, force=True, runner=RunnerConfig(workers=args.workers)),
                 model=model_name(preds), backend=RealBackend(builder), on_done=done)
    for task in tasks:
        verdicts.setdefault(task.instance_id, False)  # empty patches: never evaluated, never resolved
    return verdicts, times


def instances_and_builder(description: str, out: str, *extra: tuple[str, dict]) -> tuple[argparse.Namespace, list, EnvBuilder]:
    """The options every real-instance benchmark takes (``--dataset``, ``--repos-dir``, ``--workers``,
    ``--out``, and ``extra`` ones), parsed; the tasks; their builder."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--repos-dir", type=Path, required=True)
    for name, options in extra:
        parser.add_argument(name, **options)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path(out))
    args = parser.parse_args()
    return args, list(load_tasks(args.dataset)), EnvBuilder(RepoStore(repos_dir=args.repos_dir))


def main() -> None:
    args, tasks, builder = instances_and_builder(__doc__.splitlines()[0], "runs/swebench",
                                                 ("--verdicts", {"required": True}), ("--predictions", {}))
    started = time.monotonic()
    builds, build_seconds = build_all(builder, tasks, args.workers)
    print(f"environments: {time.monotonic() - started:.0f}s for {len(tasks)} instances")
    gold_ref = load_verdicts(args.verdicts, gold=True)
    gold, gold_times = run(tasks, load_predictions("gold", tasks), "gold", args, builder)
    empty = {t.instance_id: Prediction(instance_id=t.instance_id, model_name_or_path="empty", model_patch="")
             for t in tasks}
    empty_v, _ = run(tasks, empty, "empty", args, builder)
    agent, agent_ref = None, None
    if args.predictions:
        agent_ref = load_verdicts(args.verdicts)
        agent, _ = run(tasks, load_predictions(args.predictions, tasks), "agent", args, builder)

    head = f"{'repository':<22}{'inst':>5}{'env ok':>8}{'build s':>9}{'gold':>7}{'docker':>8}{'empty':>7}"
    head += f"{'agent=docker':>14}" if agent else ""
    print(head + f"{'s/inst':>8}")
    for repo, items in sorted(by_repo(tasks).items()):
        ids = [t.instance_id for t in items]
        row = (f"{repo:<22}{len(ids):>5}{sum(builds[i] for i in ids):>8}{build_seconds[repo]:>9.0f}"
               f"{sum(bool(gold[i]) for i in ids):>7}{sum(gold_ref.get(i, False) for i in ids):>8}"
               f"{sum(bool(empty_v[i]) for i in ids):>7}")
        if agent:
            row += f"{len(compare({i: agent[i] for i in ids}, agent_ref).agree):>10}/{len(ids):<3}"
        print(row + f"{sum(gold_times.get(i, 0) for i in ids) / len(ids) * args.workers:>8.1f}")
    print("gold: " + compare(gold, gold_ref).line())
    if agent:
        print("agent: " + compare(agent, agent_ref).line())


if __name__ == "__main__":
    main()
