"""``sweworld rollout``: run a policy on a dataset, K samples per instance, evaluate, summarize."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from sweworld.cli import common, failures, params
from sweworld.cli.backend_opts import (
    AuditRate,
    BackendName,
    PromptStyle,
    RouteBelow,
    Traces,
    WorldKind,
    WorldMaxTokens,
    WorldModel,
    WorldTraces,
    WorldURL,
    backend_from_options,
)
from sweworld.cli.common import Dataset, InstanceIds, ReposDir, SkipInvalid, Split, Workers
from sweworld.cli.runner_opts import RayAddress, RunnerName, runner_from_options

PolicyName = Annotated[str, typer.Option("--policy", help=(
    "oracle | oracle-tests | noop | replay | openai | perturb (the gold patch with probability --perturb-p, "
    "else a plausible wrong or partial edit) | explorer (runs what agents run: views, grep, find, the "
    "failing tests, a reproduction script; no edit) | explorer-oracle | explorer-perturb"))]
PerturbP = Annotated[float, typer.Option("--perturb-p", min=0.0, max=1.0, help=(
    "perturb, explorer-perturb: probability of the gold patch per sample."))]
Seed = Annotated[int, typer.Option("--seed", help=(
    "perturb, explorer*: seed of the per-sample draws (the same seed, instance and sample give the same "
    "actions, also on a resumed run)."))]
PLAN_POLICIES = ("perturb", "explorer", "explorer-oracle", "explorer-perturb")
ModelUrl = Annotated[str | None, typer.Option("--model-url", help="OpenAI-compatible base URL, e.g. "
                                              "http://host:8000/v1 (policy openai).")]
ModelName = Annotated[str | None, typer.Option("--model", help="Model name sent to the endpoint.")]
Out = Annotated[Path, typer.Option("--out", "-o", callback=params.output_dir,
                                   help="Output directory (trajectories, predictions, summary).")]
InputFile = {"exists": True, "dir_okay": False, "readable": True}


def _policy_factory(policy: str, model_url: str | None, model: str | None, api_key_env: str,
                    replay: Path | None, temperature: float, text_actions: bool, max_tokens: int | None = None,
                    max_retries: int = 5, perturb_p: float = 0.5, seed: int = 0):
    """What makes the policy of each sample (``agents.policies.POLICIES``), given the options it takes;
    perturb / explorer*: the runner binds each policy it makes to its (instance, sample)."""
    from sweworld.agents.policies import POLICIES, policy_factory
    from sweworld.errors import DatasetError

    if policy not in POLICIES:
        raise DatasetError(f"unknown policy {policy!r}", hint=f"use {', '.join(POLICIES.names())}")
    options: dict = {}
    if policy in PLAN_POLICIES:
        from sweworld.synth import mutations_for_file
        options = {"p": perturb_p, "seed": seed, "mutate": mutations_for_file}
        if policy != "perturb":
            options["fix"] = policy.partition("-")[2] or "none"
    elif policy == "replay":
        if replay is None:
            raise DatasetError("--policy replay needs --replay FILE (a trajectories.jsonl)")
        from sweworld.runs.store import TrajectoryStore
        options = {"trajectories": {t.instance_id: t for t in sorted(TrajectoryStore(replay).load(),
                                                                      key=lambda t: -t.sample)}}
    elif policy == "openai":
        if not (model_url and model):
            raise DatasetError("--policy openai needs --model-url and --model")
        options = {"url": model_url, "model": model, "api_key_env": api_key_env, "temperature": temperature,
                   "max_tokens": max_tokens, "text_actions": text_actions, "max_retries": max_retries}
    return policy_factory(policy, **options)


def rollout(dataset: Dataset = common.DEFAULT_DATASET, policy: PolicyName = "oracle", model_url: ModelUrl = None,
            model: ModelName = None, out: Out = Path("runs/rollout"), split: Split = None,
            repos_dir: ReposDir = None, instance_ids: InstanceIds = None, workers: Workers = 1,
            n_samples: Annotated[int, typer.Option("--n-samples", "-k", min=1, help="Samples per instance.")] = 1,
            api_key_env: Annotated[str, typer.Option(help="Env var holding the API key.")] = "OPENAI_API_KEY",
            replay: Annotated[Path | None, typer.Option(help="trajectories.jsonl to replay.", **InputFile)] = None,
            server_config: Annotated[Path | None, typer.Option(help="Agent YAML (templates, limits).",
                                                              **InputFile)] = None,
            step_limit: Annotated[int | None, typer.Option(min=1, help="Override the step limit.")] = None,
            temperature: Annotated[float, typer.Option(min=0.0, help="Sampling temperature.")] = 0.0,
            max_tokens: Annotated[int | None, typer.Option(min=1, help="Max completion tokens per reply.")] = None,
            model_retries: Annotated[int, typer.Option(min=0, help="Retries of a failed model request (429, 5xx, "
                                                       "connection refused), backoff 1 s doubling, 60 s at most; "
                                                       "then the sample fails and a rerun tries it again.")] = 5,
            text_actions: Annotated[bool, typer.Option(help="XML text actions instead of function calling.")] = False,
            no_eval: Annotated[bool, typer.Option("--no-eval", help="Skip the harness evaluation.")] = False,
            skip_invalid: SkipInvalid = False, backend: BackendName = "real", world_url: WorldURL = None,
            world_model: WorldModel = "world", prompt_style: PromptStyle = "sweworld", audit_rate: AuditRate = 0.1,
            traces: Traces = None, perturb_p: PerturbP = 0.5, seed: Seed = 0, route_below: RouteBelow = None,
            world: WorldKind = None, world_traces: WorldTraces = None, runner: RunnerName = "local",
            ray_address: RayAddress = None, world_max_tokens: WorldMaxTokens = None) -> None:
    """Roll out a policy: trajectories appended one by one (resumable), predictions, metrics."""
    from sweworld.agents.config import load_server_config
    from sweworld.runlock import lock_for_command
    from sweworld.runs.rollout import run_rollouts

    with common.reported():
        tasks = list(common.load(dataset, split=split, instance_ids=instance_ids, skip_invalid=skip_invalid))
        factory = _policy_factory(policy, model_url, model, api_key_env, replay, temperature, text_actions,
                                  max_tokens, model_retries, perturb_p, seed)
        config = load_server_config(server_config, step_limit=step_limit, text_actions=text_actions or None)
        lock_for_command(out, f"rollout into {out}")
        chosen = backend_from_options(backend, repos_dir=repos_dir, world_url=world_url, world_model=world_model,
                                      prompt_style=prompt_style, audit_rate=audit_rate, traces=traces,
                                      route_below=route_below, world=world, world_traces=world_traces,
                                      dataset=dataset, world_max_tokens=world_max_tokens)
        where = runner_from_options(runner, ray_address)
    with Progress(TextColumn(f"[bold]{policy}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=common.console) as progress:
        bar = progress.add_task("rollout", total=len(tasks) * n_samples)
        finished: list[str | None] = []  # this run's episodes: why each has no verdict, or None
        failed: dict[str, str] = {}

        def done(traj) -> None:
            progress.advance(bar)
            finished.append(failures.of_trajectory(traj))
            if finished[-1]:
                failed[traj.instance_id] = finished[-1]

        with common.reported():
            summary = run_rollouts(tasks, factory, config, out, n_samples=n_samples, workers=workers,
                                   backend=chosen, evaluate=not no_eval, on_done=done, runner=where)
    table = Table("metric", "value", title=f"rollout: {policy}")
    for key, value in summary.items():
        table.add_row(key, str(value))
    common.out.print(table)
    common.out.print(f"outputs: {out}")
    failures.report("episodes that failed before a verdict", failed)
    if finished and all(finished):
        raise typer.Exit(1)
