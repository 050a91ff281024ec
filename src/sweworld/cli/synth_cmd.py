"""``sweworld synth``: synthesize validated SWE-bench instances from a real repository."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from sweworld.cli import common, options, params
from sweworld.cli.common import Workers
from sweworld.cli.runner_opts import RayAddress, RunnerName
from sweworld.core.config import SynthConfig

Methods = Annotated[str | None, typer.Option(help="Comma-separated mutation kinds and/or 'combine' "
                                             "(default: all); an unknown name is refused with the list of known ones.")]


def _options(max_: int | None, methods: str | None, seed: int, workers: int, max_candidates: int | None,
             max_per_kind: int | None, combine_share: float, naive: bool, timeout: float | None,
             issue_model_url: str | None, issue_model: str | None, api_key_env: str):
    from sweworld.synth.pipeline import SynthOptions

    statement = None
    if issue_model_url:
        from sweworld.models.base import ModelConfig
        from sweworld.models.openai import OpenAIChatModel
        from sweworld.synth.instance import model_statement_writer

        config = ModelConfig(url=issue_model_url, model=issue_model or "default", api_key_env=api_key_env,
                             temperature=0.7, max_tokens=1024)
        statement = model_statement_writer(OpenAIChatModel(config))
    chosen = tuple(m.strip() for m in methods.split(",") if m.strip()) if methods else None
    return SynthOptions(max_instances=max_, methods=chosen, seed=seed, workers=workers,
                        max_candidates=max_candidates, max_per_kind=max_per_kind, combine_share=combine_share,
                        naive=naive, timeout=timeout, statement=statement)


PATHS = {**options.RUNNER, "max_": ("max_instances",), "pip_package": ("pip_packages",)}


def synth(ctx: typer.Context,
          repo: Annotated[str | None, typer.Option(help="pypi:NAME==VER, a git URL, or a local git directory.")]
          = None,
          out: Annotated[Path | None, typer.Option("--out", "-o", callback=params.output_file,
                                                   help="Output dataset (.jsonl, .json or .parquet).")] = None,
          max_: Annotated[int | None, typer.Option("--max", min=1, help="Stop at this many instances.")] = None,
          methods: Methods = None,
          seed: Annotated[int, typer.Option(help="Seed of the candidate sampling.")] = 0,
          workers: Workers = 2,
          commit: Annotated[str, typer.Option(help="Commit of a git source.")] = "HEAD",
          name: Annotated[str | None, typer.Option(help="The instances' `repo` (default pypi/NAME or "
                                                   "owner/name).")] = None,
          python: Annotated[str | None, typer.Option(help="Python version (default: from requires-python).")] = None,
          pip_package: Annotated[list[str] | None, typer.Option(help="Extra test requirement (repeatable).")] = None,
          test_cmd: Annotated[str, typer.Option(help="pytest command of the repository.")] = "pytest -rA",
          max_candidates: Annotated[int | None, typer.Option(min=1, help="Check at most this many candidates.")]
          = None,
          max_per_kind: Annotated[int | None, typer.Option(min=1, help="Sample at most this many sites per kind.")]
          = None,
          combine_share: Annotated[float, typer.Option(min=0.0, max=1.0, help="Share of --max made of combined "
                                                       "bugs.")] = 0.1,
          naive: Annotated[bool, typer.Option(help="No test selection: every candidate on the whole suite.")]
          = False,
          timeout: Annotated[float | None, typer.Option(
              callback=params.positive,
              help="Per-run timeout of a candidate, seconds (default: max(5, 4 x the suite's time)).")] = None,
          issue_model_url: Annotated[str | None, typer.Option(help="OpenAI-compatible URL of a model that "
                                                              "writes the problem statements.")] = None,
          issue_model: Annotated[str | None, typer.Option(help="Model name for --issue-model-url.")] = None,
          api_key_env: Annotated[str, typer.Option(help="Env var holding the API key.")] = "OPENAI_API_KEY",
          work: Annotated[Path | None, typer.Option(callback=params.output_dir, help="Work directory (resumable "
                                                    "outcomes; default OUT.work).")] = None,
          runner: RunnerName = "local", ray_address: RayAddress = None, config: options.ConfigFile = None) -> None:
    """Inject bugs into a real repository, keep those its own tests catch, write SWE-bench instances
    (``patch`` = the fix) with FAIL_TO_PASS / PASS_TO_PASS and problem statements."""
    run_synth(options.resolve(ctx, SynthConfig, PATHS))


def run_synth(run: SynthConfig) -> None:
    """``sweworld synth`` of a resolved configuration."""
    from sweworld.parallel.runner import runner_of
    from sweworld.synth.pipeline import synthesize
    from sweworld.synth.release import DEFAULT_PACKAGES, ReleaseSpec
    from sweworld.tasks import save_tasks

    repo, out, max_ = run.repo, run.out, run.max_instances
    with common.reported():
        options_ = _options(max_, run.methods, run.seed, run.runner.workers, run.max_candidates, run.max_per_kind,
                            run.combine_share, run.naive, run.timeout, run.issue_model_url, run.issue_model,
                            run.api_key_env)
        spec = ReleaseSpec(repo=repo, commit=run.commit, python=run.python, packages=DEFAULT_PACKAGES,
                           pip_packages=tuple(run.pip_packages or ()), test_cmd=run.test_cmd, name=run.name)
        where = runner_of(run.runner)
        options.save(run, options.config_path(out))
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TextColumn("validated {task.fields[validated]}"))
        with Progress(*columns, console=common.err, transient=False) as progress:
            bar = progress.add_task(f"preparing {repo}", total=None, validated=0)
            counts = {"validated": 0}

            def stage(what: str, total: int) -> None:
                progress.update(bar, description=f"{what} of {repo}", total=max_ or total, completed=0)

            def outcome(result) -> None:
                counts["validated"] += result.status == "validated"
                done = counts["validated"] if max_ else None
                progress.update(bar, advance=0 if max_ else 1, validated=counts["validated"],
                                **({"completed": done} if done is not None else {}))

            result = synthesize(spec, options_, work=run.work or out.with_name(out.name + ".work"),
                                on_outcome=outcome, on_stage=stage, runner=where)
        save_tasks(result.instances, out)
        _report(result, repo, out)


def _report(result, repo: str, out: Path) -> None:
    stats = result.stats.to_dict()
    stats_path = out.with_name(out.name.split(".")[0] + ".stats.json")
    stats_path.write_text(json.dumps(stats, indent=1) + "\n", encoding="utf-8")
    table = Table("method", "candidates", "validated", "yield", "uncovered", "passes", "timeout", "broken",
                  "flaky", title=f"synthesis of {repo}")
    for method, row in stats["yields"].items():
        table.add_row(method, *(str(row.get(k, 0)) for k in ("candidates", "validated", "yield", "uncovered",
                                                               "passes", "timeout", "broken", "flaky")))
    common.out.print(table)
    common.out.print(f"{len(result.instances)} instances -> {out}  (stats: {stats_path}); "
                     f"{stats['validated_per_core_hour']} validated per core-hour")
