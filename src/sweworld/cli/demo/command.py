"""``sweworld demo``: the main job, end to end, on a few instances of the shipped ``lite`` dataset.

The demo is a list of steps (``STEPS``); each prints what it did and returns report sections:

1. Environments: fetch and cache the repositories, build each instance's environment (timed).
2. Isolation: two isolated copy-on-write episodes over one environment; run the issue's failing tests
   in both, fix the code in one, show that the other and the cached base tree are untouched.
3. Evaluation: evaluate the gold and the empty predictions docker-free (SWE-bench's layout under ``--out``).
4. Rollouts: the ``oracle-tests`` and ``noop`` policies (2 samples each) through the agent loop and the
   tools, every trajectory evaluated by the harness; resolve / empty-patch / stuck rates and pass@k.
   Steps 3 and 4 record traces (``<out>/world/traces.jsonl``).
5. World: sim and hybrid rollouts against a replay of the traces of half the repositories, and the
   fidelity table of SWT and SWR on every trace (``world.py``).
6. Embedded world: mixed-outcome real traces (explorer-perturb), then sim and hybrid rollouts on the
   CPU world models (hybrid with confidence routing) and their fidelity table (``embedded.py``).
7. Data: the SFT set from the real rollouts and the SWT/SWR sets from the traces (``data.py``).

After the evaluation, mining: ``sweworld mine`` over a history built from a shipped release's sdist,
and the mined instances evaluated (``mine.py``).

Then an HTML report (``<out>/report/index.html``). New steps (best-of-n) append themselves to ``STEPS``.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable, Hashable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from sweworld.cli import common, params
from sweworld.cli.backend_opts import BackendName, WorldURL
from sweworld.cli.common import ReposDir, Workers
from sweworld.cli.demo.data import data
from sweworld.cli.demo.embedded import embedded
from sweworld.cli.demo.mine import mining
from sweworld.cli.demo.run import DemoRun, Step, traces_path
from sweworld.cli.demo.steps import environments, harness, plural, rollouts, substrate
from sweworld.cli.demo.world import world

if TYPE_CHECKING:
    from sweworld.core.types import Task
    from sweworld.htmlreport import Section

LITE = "lite"

T = TypeVar("T")


def demo(dataset: Annotated[str, typer.Option(
             "--dataset", "-d", help="Dataset: a shipped one by name (default 'lite', or the default dataset "
             "when no lite subset ships), a file, a save_to_disk directory or a hub name.")] = LITE,
         instances: Annotated[int, typer.Option("--instances", "-n", min=1, help="How many instances (one per "
                                                "repository first, then round-robin).")] = 4,
         instance: Annotated[str | None, typer.Option(help="Instance of the isolation step (default: the "
                                                     "first chosen).")] = None,
         out: Annotated[Path, typer.Option(callback=params.output_dir,
                                           help="Where logs, summaries, rollouts and the report go.")]
         = Path("runs/demo"),
         repos_dir: ReposDir = None, workers: Workers = 2, backend: BackendName = "real",
         world_url: WorldURL = None) -> None:
    """Build real environments for a few instances, use one from two isolated episodes, evaluate gold and
    empty predictions, roll out the oracle and noop policies, and write an HTML report."""
    from sweworld.envs import EnvBuilder
    from sweworld.repos import RepoStore

    started = time.perf_counter()
    with common.reported():
        dataset = resolve_dataset(dataset)
        tasks = [t for t in common.load(dataset) if t.FAIL_TO_PASS]
        if not tasks:
            from sweworld.core.errors import DatasetError
            raise DatasetError(f"dataset {dataset!r} has no instance with FAIL_TO_PASS tests",
                               hint="pick a dataset of bug instances (see `sweworld datasets ls`)")
        chosen = choose(tasks, instances)
        run = DemoRun(dataset=dataset, tasks=chosen, builder=EnvBuilder(RepoStore(repos_dir=repos_dir)),
                      out=out, workers=workers, backend_name=backend, world_url=world_url)
        _ = run.backend  # made before any work (sim/hybrid without --world-url: the embedded world)
        traces_path(out).unlink(missing_ok=True)  # this run's traces only
        if instance is not None:
            run.instance = common.load(dataset, instance_ids=[instance]).by_id(instance)
        repos = sorted({t.repo for t in chosen})
        common.out.print(f"[bold]sweworld demo[/bold]: {len(chosen)} of {len(tasks)} instances of {dataset!r} "
                         f"from {plural(len(repos), 'repository', 'repositories')} ({', '.join(repos)})")
        sections = [dataset_section(run)]
        timings: dict[str, float] = {}
        for step in STEPS:
            common.out.rule(step.name)
            step_started = time.perf_counter()
            sections += step.run(run)
            timings[step.name] = time.perf_counter() - step_started
        sections.append(timing_section(timings))
        duration = time.perf_counter() - started
        path = write_demo_report(run, sections, duration)
    common.out.print(f"demo finished in {duration:.0f}s")
    common.out.print(f"report: {path}")


def resolve_dataset(name: str) -> str:
    """``lite`` falls back to the shipped default dataset when no lite subset ships."""
    from sweworld.datasets import DEFAULT, is_shipped
    if name == LITE and not is_shipped(LITE):
        common.console.print(f"[dim]no {LITE!r} dataset ships; using the default dataset[/dim]")
        return DEFAULT
    return name


def _round_robin(groups: Sequence[Sequence[T]]) -> list[T]:
    """The first item of each group, then the second of each, and so on."""
    return [group[depth] for depth in range(max(map(len, groups), default=0))
            for group in groups if depth < len(group)]


def _group(items: Sequence[T], key: Callable[[T], Hashable]) -> dict[Hashable, list[T]]:
    groups: dict[Hashable, list[T]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return groups


def _method(task: Task) -> str:
    return str((task.model_extra or {}).get("method") or "")


def choose(tasks: Sequence[Task], n: int) -> list[Task]:
    """``n`` instances, deterministically: one per repository (sorted by name) first, then round-robin;
    within a repository, round-robin over synthesis methods (in dataset order) so that different kinds
    of bugs show."""
    by_repo = _group(tasks, lambda t: t.repo)
    varied = [_round_robin(list(_group(by_repo[repo], _method).values())) for repo in sorted(by_repo)]
    return _round_robin(varied)[:n]


# ---------------------------------------------------------------------------------------------- steps


STEPS: list[Step] = [
    Step("environments", environments),
    Step("isolation", substrate),
    Step("evaluation", harness),
    Step("mining", mining),
    Step("rollouts", rollouts),
    Step("world", world),
    Step("embedded world", embedded),
    Step("data", data),
]


# --------------------------------------------------------------------------------------------- report


def dataset_section(run: DemoRun) -> Section:
    from sweworld.htmlreport import Section
    from sweworld.htmlreport import Table as ReportTable

    rows = [[t.instance_id, t.repo_source or t.repo, _method(t) or None, len(t.FAIL_TO_PASS),
             len(t.PASS_TO_PASS)] for t in run.tasks]
    text = (f"{len(run.tasks)} instances of {run.dataset!r}, chosen deterministically: one per repository "
            f"first, then round-robin (and round-robin over synthesis methods within a repository).")
    return Section(title="Instances", text=text,
                   table=ReportTable(columns=["instance", "repository", "method", "FAIL_TO_PASS", "PASS_TO_PASS"],
                                     rows=rows))


def timing_section(timings: dict[str, float]) -> Section:
    from sweworld.htmlreport import BarChart, Section
    from sweworld.htmlreport import Table as ReportTable

    total = sum(timings.values())
    return Section(title="Time per step", text=f"Wall time of each step; {total:.1f}s in all.",
                   table=ReportTable(columns=["step", "seconds"],
                                     rows=[[name, round(s, 1)] for name, s in timings.items()]),
                   chart=BarChart(title="Seconds per step", categories=list(timings),
                                  series={"seconds": [round(s, 2) for s in timings.values()]}, y_label="seconds"))


def _dataset_label(dataset: str) -> str:
    from sweworld.datasets import is_shipped
    return f"{dataset} ({Path(common.dataset_path(dataset)).name})" if is_shipped(dataset) else dataset


def write_demo_report(run: DemoRun, sections: list[Section], duration: float) -> Path:
    from sweworld import __version__
    from sweworld.htmlreport import Report, write_html

    repos = sorted({t.repo for t in run.tasks})
    report = Report(
        title="sweworld demo",
        subtitle=(f"{len(run.tasks)} instances from {plural(len(repos), 'repository', 'repositories')} "
                  f"({', '.join(repos)}): real environments, isolated episodes, docker-free evaluation, "
                  f"agent rollouts."),
        meta={"dataset": _dataset_label(run.dataset), "instances": str(len(run.tasks)),
              "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "duration": f"{duration:.1f}s", "sweworld": __version__,
              "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs"},
        sections=sections)
    return write_html(run.out / "report", report)
