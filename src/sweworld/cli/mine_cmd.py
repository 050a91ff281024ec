"""``sweworld mine``: validated SWE-bench instances from the history of a real repository."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from sweworld.cli import common, options, params
from sweworld.cli.common import ReposDir, Workers
from sweworld.cli.mine_view import Bars, mine_options, progress
from sweworld.cli.runner_opts import RayAddress, RunnerName
from sweworld.core.config import MineConfig, timeouts
from sweworld.core.errors import ConfigError
from sweworld.mine.rules import MAX_PATCH_LINES, MAX_TEST_PATCH_LINES

Repo = Annotated[str | None, typer.Option("--repo", help="A local clone, a bare mirror or a git URL.")]
Out = Annotated[Path, typer.Option("--out", "-o", callback=params.output_file, help=(
    "Instances to write (.jsonl/.json/.parquet); beside it OUT.summary.json (counts, drops by reason) and "
    "OUT.mine.jsonl (the ledger a rerun resumes from)."))]
Commits = Annotated[list[str] | None, typer.Option("--commit", help="Mine this commit (repeatable) instead of a "
                                                   "range; each is diffed against its first parent.")]
Exclude = Annotated[list[str] | None, typer.Option("--exclude", help=(
    "A dataset (shipped name, file, directory or hub name, e.g. princeton-nlp/SWE-bench_Verified) whose "
    "instances are not mined again: commits whose base commit, fix commit or instance id it holds are dropped "
    "(repeatable)."))]


def _table(summary: dict) -> Table:
    table = Table("stage", "dropped because", "count", title=f"mine {summary['repo']}")
    for line in summary["causes"]:
        table.add_row(line["stage"], line["cause"], str(line["count"]))
    return table


PATHS = {**options.BACKEND, **options.RUNNER, "timeout": ("timeouts", "evaluation"), "max_": ("max_instances",),
         "commit": ("commits",), "repos_file": ("repos",)}
ReposFile = Annotated[Path | None, typer.Option("--repos", help=(
    "Mine many repositories in one run: a text file with one a line (a git URL or a path, then optional "
    "name=owner/repo since= until= rev= max= max_candidates=), or a .jsonl/.json dataset with a repo or url "
    "field. Writes into --out-dir; a rerun resumes."))]
OutDir = Annotated[Path | None, typer.Option("--out-dir", callback=params.output_dir, help=(
    "With --repos: per repository OWNER__NAME.jsonl (+ summary, ledger), tasks.jsonl (all instances), "
    "report.json and report.md (yield per repository and per cause). Default: mined."))]


def mine(ctx: typer.Context, repo: Repo = None, repos_file: ReposFile = None, out_dir: OutDir = None,
         out: Out = Path("tasks.jsonl"),
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
                                                "seconds.")] = timeouts.EVALUATION,
         max_patch_lines: Annotated[int, typer.Option(min=1, help="Skip fixes changing more lines.")] = MAX_PATCH_LINES,
         max_test_patch_lines: Annotated[int, typer.Option(min=1, help="Skip test patches changing more lines.")]
         = MAX_TEST_PATCH_LINES,
         model_url: Annotated[str | None, typer.Option(help="OpenAI-compatible URL of a model that writes the "
                                                       "problem statements (default: the commit message).")] = None,
         model: Annotated[str | None, typer.Option(help="Model name for --model-url.")] = None,
         api_key_env: Annotated[str, typer.Option(help="Env var holding the API key.")] = "OPENAI_API_KEY",
         setup_model_url: Annotated[str | None, typer.Option(help=(
             "OpenAI-compatible URL of a set-up agent's model: where a release line's inferred recipe does not "
             "build or finds no tests, it explores the repository in an episode and proposes one (off by "
             "default)."))] = None,
         setup_model: Annotated[str | None, typer.Option(help="Model name for --setup-model-url.")] = None,
         setup_attempts: Annotated[int, typer.Option(min=1, help="Proposals the set-up agent may make for one "
                                                     "release line.")] = 3,
         exclude: Exclude = None,
         runner: RunnerName = "local", ray_address: RayAddress = None, config: options.ConfigFile = None) -> None:
    """Mine a repository's history (--repo), or many (--repos FILE): commits that fix source and
    change tests, validated by real runs (FAIL_TO_PASS / PASS_TO_PASS), written as SWE-bench rows."""
    config = options.resolve(ctx, MineConfig, PATHS)
    with common.reported():
        if bool(config.repo) == bool(config.repos):
            raise ConfigError("give one of --repo (a repository) and --repos (a file of them)",
                              hint="e.g. --repo https://github.com/owner/name, or --repos repos.txt --out-dir mined")
        if config.out_dir is not None and not config.repos:
            raise ConfigError("--out-dir goes with --repos", hint="with --repo, --out names the file to write")
    if config.repos:
        from sweworld.cli.mine_batch import run_batch
        run_batch(config)
    else:
        run_mine(config)


def run_mine(run: MineConfig) -> None:
    """``sweworld mine`` of a resolved configuration."""
    from sweworld.envs import EnvBuilder
    from sweworld.mine.run import mine_repository, output_paths
    from sweworld.parallel.runner import runner_of
    from sweworld.repos import RepoStore
    from sweworld.runlock import lock_for_command

    out = run.out
    with common.reported():
        lock_for_command(out.parent, f"mining into {out}", name=f".{out.name}.lock")
        settings, where = mine_options(run), runner_of(run.runner)
        options.save(run, options.config_path(out))
        repos = RepoStore(repos_dir=run.backend.repos_dir)
        with progress() as view:
            bars = Bars(view)
            _result, summary = mine_repository(
                run.repo, out, settings, backend=options.backend(run, EnvBuilder(repos, timeout=run.timeouts.build)),
                repos=repos, name=run.name, runner=where, on_stage=bars.stage, on_step=bars.step,
                on_entry=bars.entry)
        common.out.print(_table(summary))
        common.out.print(f"{summary['validated']} instances of {summary['candidates']} candidates "
                         f"({summary['steps']} commits) -> {out}; summary: {output_paths(out)[0]}; "
                         f"{summary['validated_per_cpu_hour']} validated per CPU-hour (the run's own CPU: "
                         f"{summary['cpu_seconds']}s)")
        if summary["validated_beyond_max"]:
            common.out.print(f"{summary['validated_beyond_max']} more validated while --max was reached "
                             f"({summary['kept_beyond_max']} kept): in the ledger, not in {out}")
        if summary["why"]:
            common.out.print(f"why none: {summary['why']}")
