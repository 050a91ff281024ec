"""``sweworld eval``: grade predictions on any SWE-bench-format dataset, docker-free."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sweworld.cli import backend_opts as bo
from sweworld.cli import common, failures, options, params
from sweworld.cli.common import Dataset, InstanceIds, ReposDir, SkipInvalid, Split, Workers
from sweworld.cli.options import BACKEND, RUNNER, ConfigFile
from sweworld.cli.runner_opts import RayAddress, RunnerName
from sweworld.core.config import CONFIG_FILE, EvalConfig, timeouts

Predictions = Annotated[str, typer.Option("--predictions", "-p", help="Predictions (.json/.jsonl of "
                                          "{instance_id, model_name_or_path, model_patch}) or 'gold'.")]
RunId = Annotated[str, typer.Option("--run-id", callback=params.run_id,
                                    help="Name of this run (directory under logs/run_evaluation).")]
Timeout = Annotated[float, typer.Option("--timeout", callback=params.positive,
                                        help="Wall timeout of one instance's tests, seconds.")]
Force = Annotated[bool, typer.Option("--force", help="Evaluate again instances that already have a report.")]
LogsDir = Annotated[Path, typer.Option("--logs-dir", callback=params.output_dir,
                                       help="Where logs/run_evaluation/... goes.")]
Out = Annotated[Path, typer.Option("--out", callback=params.output_dir,
                                   help="Directory of the run summary <model>.<run_id>.json.")]
CompareTo = Annotated[str | None, typer.Option(
    "--compare-to", help="Reference verdicts (JSON {id: bool | {KEY: bool}} or a SWE-bench run summary; "
    "FILE:KEY picks the key, e.g. docker-verdicts.json:sweagent_resolved): prints the agreement.")]
Network = Annotated[bool, typer.Option("--network", help="Let the tests reach the network (SWE-bench's containers "
                                       "can; e.g. psf/requests tests call httpbin.org). Off by default.")]


PATHS = {**BACKEND, **RUNNER, "timeout": ("timeouts", "evaluation")}


def eval_(ctx: typer.Context, dataset: Dataset = common.DEFAULT_DATASET, predictions: Predictions = "gold",
          run_id: RunId = "sweworld", split: Split = None, repos_dir: ReposDir = None, instance_ids: InstanceIds = None,
          workers: Workers = 1, timeout: Timeout = timeouts.EVALUATION, force: Force = False,
          logs_dir: LogsDir = Path("logs"), out: Out = Path("."),
          skip_invalid: SkipInvalid = False, network: Network = False, compare_to: CompareTo = None,
          backend: bo.BackendName = "real", world_url: bo.WorldURL = None, world_model: bo.WorldModel = "world",
          prompt_style: bo.PromptStyle = "sweworld", audit_rate: bo.AuditRate = 0.1, traces: bo.Traces = None, env_source: bo.EnvSource = "auto",
          route_below: bo.RouteBelow = None,
          world: bo.WorldKind = None, world_traces: bo.WorldTraces = None, runner: RunnerName = "local",
          ray_address: RayAddress = None, world_max_tokens: bo.WorldMaxTokens = None, config: ConfigFile = None) -> None:
    """Evaluate predictions: apply each patch in a fresh isolated episode, run the tests, grade
    (``--backend sim``: SWR predicts the test run, graded by the same code)."""
    run_eval(options.resolve(ctx, EvalConfig, PATHS))


def _prepare(run: EvalConfig):
    """The tasks, predictions, model, stray predictions and reference verdicts of ``run``; the run
    directory locked, its config.yaml written."""
    from sweworld.harness.compare import load_verdicts, verdicts_from_tasks
    from sweworld.harness.predictions import listing, load_predictions, model_name, unmatched
    from sweworld.runlock import lock_for_command
    from sweworld.runs.eval import run_dir

    tasks = list(common.load(run.dataset, split=run.split, instance_ids=run.instance_ids,
                             skip_invalid=run.skip_invalid))
    preds = load_predictions(run.predictions, tasks)
    model = model_name(preds)
    stray = unmatched(preds, tasks)
    if stray:  # counted as submitted, never evaluated (not an instance of this run)
        common.console.print(f"[yellow]{len(stray)} prediction(s) for instances not in the dataset (or not "
                             f"selected):[/yellow] {listing(stray)}", highlight=False)
    gold = run.predictions == "gold"
    reference = (load_verdicts(run.compare_to, gold=gold) if run.compare_to
                 else verdicts_from_tasks(tasks, gold=gold))
    where = run_dir(run.logs_dir, run.run_id, model)
    lock_for_command(where, f"eval run {run.run_id!r} of {model}")
    options.save(run, where / CONFIG_FILE)
    return tasks, preds, model, stray, reference


def run_eval(run: EvalConfig) -> None:
    """``sweworld eval`` of a resolved configuration."""
    from sweworld.parallel.runner import runner_of

    with common.reported():
        tasks, preds, model, stray, reference = _prepare(run)
        chosen = options.backend(run)
        where = runner_of(run.runner)
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("resolved {task.fields[resolved]}  errors {task.fields[errors]}"))
    counts = {"resolved": 0, "errors": 0}
    reports: dict = {}
    with Progress(*columns, console=common.console) as progress:
        bar = progress.add_task(f"eval {model}", total=len(preds) - len(stray), resolved=0, errors=0)

        def done(report) -> None:
            reports[report.instance_id] = report
            counts["resolved"] += report.resolved
            counts["errors"] += report.is_infra_error  # as the summary counts them (a timeout is unresolved)
            progress.update(bar, advance=1, **counts)

        with common.reported():
            from sweworld.runs.eval import evaluate_run
            summary, path = evaluate_run(tasks, preds, run, model=model, backend=chosen, on_done=done, runner=where)
    _report(summary, path, reports, reference, summary.get("audits", {}))


def _report(summary: dict, path, reports: dict, reference, audits: dict) -> None:
    from sweworld.harness.compare import compare

    say = common.out.print
    say(f"total {summary['total_instances']}  submitted {summary['submitted_instances']}  "
        f"completed {summary['completed_instances']}  resolved {summary['resolved_instances']}  "
        f"unresolved {summary['unresolved_instances']}  empty patch {summary['empty_patch_instances']}  "
        f"errors {summary['error_instances']} (infrastructure {len(summary.get('infra_error_ids', []))})")
    missing = {i: r.tests_missing for i, r in sorted(reports.items()) if r.tests_missing}
    if missing:
        say(f"listed tests missing from the test output (graded as failed) in {len(missing)} instances: "
            + "; ".join(f"{i} ({len(t)}: {', '.join(t[:3])}{' ...' if len(t) > 3 else ''})" for i, t in missing.items()))
    if reference is not None:
        ours = {i: (None if r.error_kind == "infra" else r.resolved) for i, r in reports.items()}
        ours.update({i: False for i in summary["empty_patch_ids"]})
        say(compare(ours, reference).line())
    for kind, figures in audits.items():
        say(f"hybrid audits, {kind}: {figures['agreed']}/{figures['audited']} agree "
            f"(95% Wilson {figures['wilson95'][0]:.2f}-{figures['wilson95'][1]:.2f})")
    say(f"summary: {path}")
    infra = {i: reports[i].error or "" for i in summary["infra_error_ids"]}  # the summary's count, listed
    failures.report("infrastructure failures (not the model's; details in each run_instance.log)", infra)
    if infra and len(infra) == len(reports):
        raise typer.Exit(1)
