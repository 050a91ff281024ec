"""``sweworld mine --repos FILE --out-dir DIR``: the CLI of ``mine.batch`` (many repositories, one run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.table import Table

from sweworld.cli import common, options
from sweworld.cli.mine_view import Bars, mine_options, progress
from sweworld.core.config import MineConfig

DEFAULT_DIR = Path("mined")


def _repos_table(report: dict[str, Any]) -> Table:
    table = Table("repository", "validated / tried", "yield", "why none, or the error",
                  title=f"mine {report['repos']} repositories")
    for line in report["per_repo"]:
        if line["status"] == "done":
            table.add_row(line["repo"], f"{line['validated']} / {line['validated_candidates']}",
                          str(line["yield"] if line["yield"] is not None else "-"), line["why"] or "")
        else:
            table.add_row(line["repo"], "-", "-", f"[red]failed[/red]: {line['error']}")
    return table


def _causes_table(report: dict[str, Any]) -> Table:
    table = Table("stage", "dropped because", "count", title="causes, all repositories")
    for line in report["causes"]:
        table.add_row(line["stage"], line["cause"], str(line["count"]))
    return table


def run_batch(run: MineConfig) -> None:
    """``sweworld mine --repos`` of a resolved configuration."""
    from sweworld.envs import EnvBuilder
    from sweworld.mine.batch import BatchView, mine_batch, read_repos
    from sweworld.parallel.runner import runner_of
    from sweworld.repos import RepoStore
    from sweworld.runlock import lock_for_command

    assert run.repos is not None
    out_dir = run.out_dir or DEFAULT_DIR
    with common.reported():
        specs = read_repos(run.repos)
        out_dir.mkdir(parents=True, exist_ok=True)
        lock_for_command(out_dir, f"mining into {out_dir}", name=".mine.lock")
        settings, where = mine_options(run), runner_of(run.runner)
        options.save(run, out_dir / "config.yaml")
        repos = RepoStore(repos_dir=run.backend.repos_dir)
        backend = options.backend(run, EnvBuilder(repos, timeout=run.timeouts.build))
        with progress() as view:
            overall = view.add_task("repositories", total=len(specs), note="")
            bars = Bars(view)

            def started(index: int, spec: Any) -> None:
                bars.validated = 0
                view.update(overall, description=f"repositories ({spec.repo})", completed=index)

            def over(record: dict[str, Any]) -> None:
                done = record["status"] == "done"
                note = f"{record['summary']['validated']} validated" if done else f"failed: {record['error']}"
                view.update(overall, advance=1, note=f"{record['repo']}: {note}"[:100])

            report = mine_batch(specs, out_dir, settings, backend=backend, repos=repos, runner=where,
                                view=BatchView(on_repo=started, on_record=over, on_stage=bars.stage,
                                               on_step=bars.step, on_entry=bars.entry))
        common.out.print(_repos_table(report))
        common.out.print(_causes_table(report))
        common.out.print(f"{report['validated']} instances from {report['done']} of {report['repos']} repositories "
                         f"({report['failed']} failed) -> {out_dir / 'tasks.jsonl'} ({report['tasks']} after "
                         f"deduplication); report: {out_dir / 'report.md'}; {report['validated_per_cpu_hour'] or '-'} "
                         f"validated per CPU-hour")
