"""``sweworld mine``: validated SWE-bench instances from the history of a real repository."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from sweworld.cli import common, params
from sweworld.cli.common import ReposDir, Workers
from sweworld.cli.runner_opts import RayAddress, RunnerName, runner_from_options
from sweworld.mine.rules import MAX_PATCH_LINES, MAX_TEST_PATCH_LINES

Repo = Annotated[str, typer.Option("--repo", help="A local clone, a bare mirror or a git URL.")]
Out = Annotated[Path, typer.Option("--out", "-o", callback=params.output_file, help=(
    "Instances to write (.jsonl/.json/.parquet); beside it OUT.summary.json (counts, drops by reason) and "
    "OUT.mine.jsonl (the ledger a rerun resumes from)."))]
Commits = Annotated[list[str] | None, typer.Option("--commit", help="Mine this commit (repeatable) instead of a "
                                                   "range; each is diffed against its first parent.")]


def _model(url: str | None, name: str | None, api_key_env: str):
    if not url:
        return None
    from sweworld.models.base import ModelConfig
    from sweworld.models.openai import OpenAIChatModel

    return OpenAIChatModel(ModelConfig(url=url, model=name or "default", api_key_env=api_key_env, temperature=0.2,
                                       max_tokens=1024))


def _table(summary: dict) -> Table:
    table = Table("dropped because", "commits", title=f"mine {summary['repo']}")
    for reason, count in summary["dropped"].items():
        table.add_row(reason, str(count))
    return table


def mine(repo: Repo, out: Out = Path("tasks.jsonl"),
         since: Annotated[str | None, typer.Option(help="Only commits since this date (e.g. 2023-01-01).")] = None,
         until: Annotated[str | None, typer.Option(help="Only commits until this date.")] = None,
         max_: Annotated[int | None, typer.Option("--max", min=1, help="Stop at this many validated "
                                                  "instances.")] = None,
         max_candidates: Annotated[int | None, typer.Option(min=1, help="Validate at most this many candidates "
                                                            "(newest first).")] = None,
         rev: Annotated[str, typer.Option(help="Branch, tag or commit whose first-parent chain is mined.")] = "HEAD",
         commit: Commits = None,
         name: Annotated[str | None, typer.Option(help="The instances' `repo` (default: owner/name of the URL or "
                                                  "of the clone's origin).")] = None,
         workers: Workers = 2, repos_dir: ReposDir = None,
         timeout: Annotated[float, typer.Option(callback=params.positive, help="Wall limit of one test run, "
                                                "seconds.")] = 1800.0,
         max_patch_lines: Annotated[int, typer.Option(min=1, help="Skip fixes changing more lines.")] = MAX_PATCH_LINES,
         max_test_patch_lines: Annotated[int, typer.Option(min=1, help="Skip test patches changing more lines.")]
         = MAX_TEST_PATCH_LINES,
         model_url: Annotated[str | None, typer.Option(help="OpenAI-compatible URL of a model that writes the "
                                                       "problem statements (default: the commit message).")] = None,
         model: Annotated[str | None, typer.Option(help="Model name for --model-url.")] = None,
         api_key_env: Annotated[str, typer.Option(help="Env var holding the API key.")] = "OPENAI_API_KEY",
         runner: RunnerName = "local", ray_address: RayAddress = None) -> None:
    """Mine a repository's history: commits that fix source and change tests, validated by real runs
    (FAIL_TO_PASS / PASS_TO_PASS), written as SWE-bench rows."""
    from sweworld.backends.real import RealBackend
    from sweworld.envs import EnvBuilder
    from sweworld.mine.pipeline import MineOptions
    from sweworld.mine.rules import Limits
    from sweworld.mine.run import mine_repository, output_paths
    from sweworld.repos import RepoStore
    from sweworld.runlock import lock_for_command

    with common.reported():
        lock_for_command(out.parent, f"mining into {out}", name=f".{out.name}.lock")
        options = MineOptions(rev=rev, since=since, until=until, commits=commit, max_instances=max_,
                              max_candidates=max_candidates, workers=workers, timeout=timeout,
                              limits=Limits(max_patch_lines, max_test_patch_lines),
                              model=_model(model_url, model, api_key_env))
        where = runner_from_options(runner, ray_address)
        repos = RepoStore(repos_dir=repos_dir)
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TextColumn("validated {task.fields[validated]}"))
        with Progress(*columns, console=common.err) as progress:
            bar = progress.add_task("mine", total=None, validated=0)
            counts = {"validated": 0}

            def decided(entry: dict) -> None:
                counts["validated"] += bool(entry["kept"])
                progress.update(bar, advance=1, validated=counts["validated"])

            _result, summary = mine_repository(
                repo, out, options, backend=RealBackend(EnvBuilder(repos)), repos=repos, name=name, runner=where,
                on_stage=lambda what, n: progress.update(bar, description=what, total=n, completed=0),
                on_step=lambda: progress.advance(bar), on_entry=decided)
        common.out.print(_table(summary))
        common.out.print(f"{summary['validated']} instances of {summary['candidates']} candidates "
                         f"({summary['steps']} commits) -> {out}; summary: {output_paths(out)[0]}; "
                         f"{summary['validated_per_cpu_hour']} validated per CPU-hour")
