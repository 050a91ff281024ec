"""``sweworld world``: collect traces of real episodes, replay them as a served world model, measure
the world's fidelity against them, train the embedded SWR on them."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from sweworld.cli import common, options, params
from sweworld.cli.backend_opts import PromptStyle, WorldModel, WorldURL
from sweworld.cli.common import PLAIN, Dataset, InstanceIds, ReposDir, Split, Workers
from sweworld.cli.options import BACKEND, RUNNER, ConfigFile
from sweworld.cli.rollout_cmd import InputFile, ModelName, ModelUrl, Out, PolicyName, run_rollout
from sweworld.cli.runner_opts import RayAddress, RunnerName
from sweworld.core.config import FidelityConfig, WorldTrainConfig

"""Lines that tests and scripts read: never wrapped, no markup."""
app = typer.Typer(no_args_is_help=True, help="The simulated world: traces, replay server, fidelity, embedded models.")
TraceFiles = Annotated[list[Path], typer.Option("--traces", "-t", exists=True, readable=True, help=(
    "Trace file (traces.jsonl) or a directory holding one (`world collect --out`); repeat for several."))]


Verdicts = Annotated[list[Path] | None, typer.Option("--verdicts", exists=True, dir_okay=False, help=(
    "JSON lines of published verdicts (instance_id, model_patch, docker_resolved, model_name_or_path) "
    "of the --dataset's instances, used as real evaluations; repeat for several."))]
VerdictsDataset = Annotated[str | None, typer.Option(
    "--dataset", "-d", help="The instances --verdicts grade (a file or a shipped name).")]


@app.command("collect")
def collect(ctx: typer.Context, dataset: Dataset = common.DEFAULT_DATASET, policy: PolicyName = "oracle",
            model_url: ModelUrl = None, model: ModelName = None, out: Out = Path("runs/traces"), split: Split = None,
            repos_dir: ReposDir = None, instance_ids: InstanceIds = None, workers: Workers = 1,
            n_samples: Annotated[int, typer.Option("--n-samples", "-k", min=1, help="Samples per instance.")] = 1,
            replay: Annotated[Path | None, typer.Option(help="trajectories.jsonl to replay.", **InputFile)] = None,
            agent_config: Annotated[Path | None, typer.Option(help="Agent YAML (templates, limits).",
                                                              **InputFile)] = None,
            step_limit: Annotated[int | None, typer.Option(min=1, help="Override the step limit.")] = None,
            temperature: Annotated[float, typer.Option(min=0.0, help="Sampling temperature.")] = 0.0,
            runner: RunnerName = "local", ray_address: RayAddress = None, config: ConfigFile = None) -> None:
    """Roll out a policy with the real backend, recording every command and evaluation in OUT/traces.jsonl."""
    from sweworld.core.config import CollectConfig
    from sweworld.world.traces import TRACES_FILE, TraceStore

    run = options.resolve(ctx, CollectConfig, {**BACKEND, **RUNNER})
    traces = run.out / TRACES_FILE
    try:
        run_rollout(run.rollout(traces), record=run)
    finally:
        if traces.exists():
            store = TraceStore(traces)
            records = store.load()
            steps = sum(r.kind == "step" for r in records)
            sim = sum(r.kind == "step" and r.routed == "sim" for r in records)
            common.out.print(f"traces: {traces} ({steps} steps, {sim} of them code execution; "
                             f"{len(records) - steps} evaluations)", **PLAIN)


@app.command("serve")
def serve(traces: TraceFiles,
          host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
          port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: a free one).")] = 8000,
          model: Annotated[str, typer.Option(help="Model name listed at /v1/models (any name is answered).")]
          = "replay") -> None:
    """Serve recorded traces as an OpenAI-compatible SWT/SWR endpoint (exact replay, honest fallbacks)."""
    from sweworld.world.replay import ReplayServer, load_index

    with common.reported():
        index = load_index(traces)
        server = ReplayServer(index, host=host, port=port, model=model).bind()
    common.out.print(f"replaying {len(index.commands)} commands and {len(index.patches)} patches "
                     f"({len(index.exact)} contexts in {', '.join(index.styles)} prompts) at {server.url} "
                     f"(stats: {server.url.removesuffix('/v1')}/stats); Ctrl-C stops", **PLAIN)
    # A server started in the background (`&`, nohup) inherits an ignored SIGINT: stop on SIGINT and
    # SIGTERM alike, printing the stats, whatever the shell did.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.default_int_handler)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        common.out.print(json.dumps(index.summary()), **PLAIN)


@app.command("fidelity")
def fidelity(ctx: typer.Context,
             traces: Annotated[list[Path] | None, typer.Option("--traces", "-t", exists=True, readable=True, help=(
                 "Trace file (traces.jsonl) or a directory holding one (`world collect --out`); repeat."))] = None,
             verdicts: Verdicts = None, dataset: VerdictsDataset = None,
             world_url: WorldURL = None, world_model: WorldModel = "world",
             prompt_style: PromptStyle = "sweworld",
             test_fraction: Annotated[float, typer.Option(min=0.0, max=1.0, help=(
                 "Share of repositories (by a hash of the name) in the test split."))] = 0.5,
             swr_samples: Annotated[int, typer.Option("--swr-samples", min=1, help="SWR samples per evaluation.")] = 1,
             workers: Workers = 1,
             cache: Annotated[bool, typer.Option(help="Reuse cached replies of the same prompt and model name.")] = False,
             html: Annotated[Path | None, typer.Option(callback=params.output_file, dir_okay=False, help=(
                 "Write the fidelity table and chart as an HTML page."))] = None,
             json_out: Annotated[Path | None, typer.Option("--json", callback=params.output_file, dir_okay=False,
                                                           help="Write the figures as JSON.")] = None,
             config: ConfigFile = None) -> None:
    """Measure SWT and SWR against the real results recorded in traces (and published verdicts), per repository, agent and split."""
    run_fidelity(options.resolve(ctx, FidelityConfig))


def run_fidelity(run: FidelityConfig) -> None:
    """``sweworld world fidelity`` of a resolved configuration; its config.yaml
    beside its first output (``--json``, else ``--html``), none when it writes none."""
    from sweworld.cli.demo.world import print_fidelity
    from sweworld.world.config import WorldConfig
    from sweworld.world.fidelity import measure
    from sweworld.world.traces import load_traces

    traces, verdicts = run.traces or [], run.verdicts or []
    with common.reported():
        records = [*(load_traces(*traces) if traces else []), *published(verdicts, run.dataset)]
        if not records:
            raise typer.BadParameter("nothing to measure: pass --traces and/or --verdicts with --dataset")
        world = WorldConfig.from_options(urls=run.world_url, model=run.world_model, style=run.prompt_style,
                                         swr_samples=run.swr_samples, cache=run.cache)
        swt, swr = world.make_swt(), world.make_swr()
        if run.json_out or run.html:
            options.save(run, options.config_path(run.json_out or run.html))
    total = sum(r.kind == "eval" or r.routed == "sim" for r in records)
    with Progress(TextColumn("[bold]fidelity"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=common.console) as progress:
        bar = progress.add_task("fidelity", total=total)
        with common.reported():
            result = measure(records, swt, swr, test_fraction=run.test_fraction, workers=run.workers,
                             on_item=lambda: progress.advance(bar))
    result.update(traces=[str(t) for t in traces], verdicts=[str(v) for v in verdicts], world_url=run.world_url,
                  world_model=run.world_model)
    print_fidelity(result, f"world fidelity ({run.prompt_style} prompts, {run.world_model})")
    _write_fidelity(run, result)


def _write_fidelity(run: FidelityConfig, result: dict) -> None:
    """The ``--json`` and ``--html`` outputs of ``world fidelity``."""
    from sweworld.htmlreport import Report
    from sweworld.htmlreport.html import render_html
    from sweworld.world.fidelity import fidelity_section

    if run.json_out is not None:
        run.json_out.parent.mkdir(parents=True, exist_ok=True)
        run.json_out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        common.out.print(f"json: {run.json_out}")
    if run.html is not None:
        sources = [*(run.traces or []), *(run.verdicts or [])]
        report = Report(title="sweworld world fidelity", subtitle=", ".join(map(str, sources)),
                        meta={"world": f"{run.world_model} at {', '.join(run.world_url or [])}",
                              "prompt style": run.prompt_style},
                        sections=[fidelity_section(result)])
        run.html.parent.mkdir(parents=True, exist_ok=True)
        run.html.write_text(render_html(report), encoding="utf-8")
        common.out.print(f"html: {run.html}")


@app.command("train")
def train(ctx: typer.Context,
          traces: Annotated[list[Path] | None, typer.Option("--traces", "-t", exists=True, readable=True, help=(
              "Trace file (traces.jsonl) or a directory holding one (`world collect --out`); repeat."))] = None,
          verdicts: Verdicts = None, dataset: VerdictsDataset = None,
          out: Annotated[Path, typer.Option("--out", "-o", callback=params.output_file, dir_okay=False,
                                            help="Model JSON to write.")] = Path("swr.json"),
          test_fraction: Annotated[float, typer.Option(min=0.0, max=1.0, help=(
              "Share of repositories (by a hash of the name) held out to measure the model."))] = 0.5,
          by_repository: Annotated[bool, typer.Option("--leave-repo-out", help=(
              "Measure each repository with the model fitted on the others (instead of --test-fraction)."))] = False,
          repos_dir: ReposDir = None,
          json_out: Annotated[Path | None, typer.Option("--json", callback=params.output_file, dir_okay=False,
                                                        help="Write the figures as JSON.")] = None,
          config: ConfigFile = None) -> None:
    """Train the embedded SWR (a CPU classifier) on real evaluations (traces, published verdicts); measure it on held-out repositories."""
    run_train(options.resolve(ctx, WorldTrainConfig, {"by_repository": ("leave_repo_out",)}))


def run_train(run: WorldTrainConfig) -> None:
    """``sweworld world train`` of a resolved configuration."""
    from sweworld.surrogates.swr.predict import repo_sources
    from sweworld.surrogates.swr.train import rows, speed
    from sweworld.surrogates.swr.train import train as fit_traces
    from sweworld.world.traces import load_traces

    traces, out = run.traces or [], run.out
    with common.reported():
        records = [*load_traces(*traces)] if traces else []
        records += published(run.verdicts or [], run.dataset)
        if not records:
            raise typer.BadParameter("nothing to train on: pass --traces and/or --verdicts with --dataset")
        options.save(run, options.config_path(out))
        model, report = fit_traces(records, repo_sources(run.repos_dir), test_fraction=run.test_fraction,
                                   by_repository=run.leave_repo_out)
        report["speed"] = speed(report, traces)
        model.model_copy(update={"meta": {**model.meta, "speed": report["speed"]}}).save(out)
    table = Table("model", "n", "accuracy", "majority", "precision", "recall", "F1", "AUC", "ECE", "ms/call",
                  title=f"embedded SWR: {report['evaluations']} real evaluations, held out: "
                        f"{', '.join(report['test_repos']) or 'none'} (SWE-World: other data)")
    for row in rows(report):
        table.add_row(*("—" if cell is None else str(cell) for cell in row))
    common.out.print(table)
    fast = report["speed"]
    if fast.get("speedup"):
        common.out.print(f"speed: {fast['speedup']:.0f}x faster than the real evaluation it replaces "
                         f"({fast['mean_seconds']:.2f} s mean over {fast['real_evaluations']})", **PLAIN)
    common.out.print(f"model: {out}", **PLAIN)
    if run.json_out is not None:
        run.json_out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        common.out.print(f"json: {run.json_out}", **PLAIN)


def published(files: list[Path], dataset: str | None) -> list:
    """The ``--verdicts`` files as evaluations of the ``--dataset``'s instances."""
    if not files:
        return []
    if dataset is None:
        raise typer.BadParameter("--verdicts needs --dataset: the instances the verdicts grade")
    from sweworld.tasks import load_tasks
    from sweworld.world.verdicts import verdict_traces

    tasks = load_tasks(dataset)
    return [trace for path in files for trace in verdict_traces(path, tasks)]
