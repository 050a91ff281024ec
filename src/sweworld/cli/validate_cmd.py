"""``sweworld validate``: keep the instances whose tests really go fail -> pass with the gold patch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from sweworld.cli import common, options, params
from sweworld.cli.common import Dataset, InstanceIds, ReposDir, SkipInvalid, Split, Workers
from sweworld.cli.runner_opts import RayAddress, RunnerName
from sweworld.core.config import ValidateConfig, timeouts

Out = Annotated[Path, typer.Option("--out", "-o", callback=params.output_file, help="Validated dataset to write "
                                   "(.jsonl/.json/.parquet); the table of dropped instances goes next to it as "
                                   "<out>.drops.json.")]
Timeout = Annotated[float, typer.Option("--timeout", callback=params.positive,
                                        help="Wall timeout of one test run, seconds.")]


PATHS = {**options.BACKEND, **options.RUNNER, "timeout": ("timeouts", "evaluation")}


def validate(ctx: typer.Context, dataset: Dataset = common.DEFAULT_DATASET, out: Out = Path("validated.jsonl"),
             split: Split = None, repos_dir: ReposDir = None, instance_ids: InstanceIds = None, workers: Workers = 1,
             timeout: Timeout = timeouts.EVALUATION, skip_invalid: SkipInvalid = False, runner: RunnerName = "local",
             ray_address: RayAddress = None, config: options.ConfigFile = None) -> None:
    """Run each instance's tests without and with the gold patch (twice each); keep the valid ones."""
    run_validate(options.resolve(ctx, ValidateConfig, PATHS))


def run_validate(run: ValidateConfig) -> None:
    """``sweworld validate`` of a resolved configuration."""
    from sweworld.parallel.runner import runner_of
    from sweworld.runlock import lock_for_command
    from sweworld.runs.validate import validate_tasks

    out = run.out
    with common.reported():
        tasks = list(common.load(run.dataset, split=run.split, instance_ids=run.instance_ids,
                                 skip_invalid=run.skip_invalid))
        lock_for_command(out.parent, f"validation into {out}", name=f".{out.name}.lock")
        where = runner_of(run.runner)
        options.save(run, options.config_path(out))
    with Progress(TextColumn("[bold]validate"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=common.console) as progress:
        bar = progress.add_task("validate", total=len(tasks))
        verdicts = validate_tasks(tasks, run, backend=options.backend(run), on_done=lambda _v: progress.advance(bar),
                                  runner=where)
    _write(verdicts, tasks, out)


def _write(verdicts, tasks, out: Path) -> None:
    from sweworld.tasks import save_tasks

    kept = [v.task for v in verdicts if v.kept and v.task is not None]
    save_tasks(kept, out)
    drops = [{"instance_id": v.instance_id, "reason": v.reason, "flaky": v.flaky,
              "pass_to_fail": v.pass_to_fail, "disagreements": v.disagreements} for v in verdicts if not v.kept]
    notes = [{"instance_id": v.instance_id, "flaky": v.flaky, "disagreements": v.disagreements}
             for v in verdicts if v.kept and (v.flaky or v.disagreements)]
    drops_path = out.with_name(out.name + ".drops.json")
    drops_path.write_text(json.dumps({"dropped": drops, "kept_with_notes": notes}, indent=2) + "\n")
    table = Table("instance", "verdict", "F2P", "P2P", "flaky", "reason")
    for v in verdicts:
        table.add_row(v.instance_id, "kept" if v.kept else "dropped", str(len(v.fail_to_pass)),
                      str(len(v.pass_to_pass)), str(len(v.flaky)), v.reason)
    common.out.print(table)
    common.out.print(f"{len(kept)}/{len(tasks)} instances kept -> {out}; drops: {drops_path}")
    if not kept and tasks:
        raise typer.Exit(1)
