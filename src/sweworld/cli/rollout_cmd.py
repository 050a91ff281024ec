"""``sweworld rollout``: run a policy on a dataset, K samples per instance, evaluate, summarize."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import BaseModel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from sweworld.cli import backend_opts as bo
from sweworld.cli import common, failures, options, params
from sweworld.cli.common import Dataset, InstanceIds, ReposDir, SkipInvalid, Split, Workers
from sweworld.cli.options import BACKEND, RUNNER, ConfigFile
from sweworld.cli.runner_opts import RayAddress, RunnerName
from sweworld.core.config import CONFIG_FILE, RolloutConfig, timeouts

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
    from sweworld.core.errors import DatasetError

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


BranchAt = Annotated[int | None, typer.Option("--branch-at", min=0, help=(
    "Branched rollouts (with --branches): run each prefix episode this many steps, snapshot it, and continue "
    "it --branches times in forks, each its own sample (docs/branching_rollouts.md)."))]
Branches = Annotated[int | None, typer.Option("--branches", min=1, help=(
    "Branched rollouts (with --branch-at): continuations per prefix; --n-samples prefixes per instance, so "
    "n-samples x branches samples. Needs a backend whose episodes fork (real, sim, hybrid)."))]
CommandTimeout = Annotated[float, typer.Option("--timeout", callback=params.positive, help=(
    "Wall limit of one command of an episode, seconds (the evaluation's is the config's timeouts.evaluation)."))]
PATHS = {**BACKEND, **RUNNER, "timeout": ("timeouts", "command"), "no_eval": ("evaluate",)}


def rollout(ctx: typer.Context, dataset: Dataset = common.DEFAULT_DATASET, policy: PolicyName = "oracle",
            model_url: ModelUrl = None, model: ModelName = None, out: Out = Path("runs/rollout"), split: Split = None,
            repos_dir: ReposDir = None, instance_ids: InstanceIds = None, workers: Workers = 1,
            n_samples: Annotated[int, typer.Option("--n-samples", "-k", min=1, help="Samples per instance.")] = 1,
            api_key_env: Annotated[str, typer.Option(help="Env var holding the API key.")] = "OPENAI_API_KEY",
            replay: Annotated[Path | None, typer.Option(help="trajectories.jsonl to replay.", **InputFile)] = None,
            agent_config: Annotated[Path | None, typer.Option(help="Agent YAML (templates, limits).",
                                                              **InputFile)] = None,
            step_limit: Annotated[int | None, typer.Option(min=1, help="Override the step limit.")] = None,
            temperature: Annotated[float, typer.Option(min=0.0, help="Sampling temperature.")] = 0.0,
            max_tokens: Annotated[int | None, typer.Option(min=1, help="Max completion tokens per reply.")] = None,
            model_retries: Annotated[int, typer.Option(min=0, help="Retries of a failed model request (429, 5xx, "
                                                       "connection refused), backoff 1 s doubling, 60 s at most; "
                                                       "then the sample fails and a rerun tries it again.")] = 5,
            text_actions: Annotated[bool, typer.Option(help="XML text actions instead of function calling.")] = False,
            no_eval: Annotated[bool, typer.Option("--no-eval", help="Skip the harness evaluation.")] = False,
            skip_invalid: SkipInvalid = False, backend: bo.BackendName = "real", world_url: bo.WorldURL = None,
            world_model: bo.WorldModel = "world", prompt_style: bo.PromptStyle = "sweworld", audit_rate: bo.AuditRate = 0.1,
            traces: bo.Traces = None, env_source: bo.EnvSource = "auto", perturb_p: PerturbP = 0.5, seed: Seed = 0, route_below: bo.RouteBelow = None,
            world: bo.WorldKind = None, world_traces: bo.WorldTraces = None, runner: RunnerName = "local",
            ray_address: RayAddress = None, world_max_tokens: bo.WorldMaxTokens = None,
            timeout: CommandTimeout = timeouts.COMMAND, branch_at: BranchAt = None, branches: Branches = None,
            config: ConfigFile = None) -> None:
    """Roll out a policy: trajectories appended one by one (resumable), predictions, metrics."""
    run_rollout(options.resolve(ctx, RolloutConfig, PATHS, negated=("no_eval",)))


def run_rollout(run: RolloutConfig, *, record: BaseModel | None = None) -> None:
    """``sweworld rollout`` of a resolved configuration (``record``: the one to write as config.yaml,
    default ``run``)."""
    from sweworld.agents.config import load_agent_config
    from sweworld.parallel.runner import runner_of
    from sweworld.runlock import lock_for_command

    with common.reported():
        tasks = list(common.load(run.dataset, split=run.split, instance_ids=run.instance_ids,
                                 skip_invalid=run.skip_invalid))
        factory = _policy_factory(run.policy, run.model_url, run.model, run.api_key_env, run.replay, run.temperature,
                                  run.text_actions, run.max_tokens, run.model_retries, run.perturb_p, run.seed)
        agent = load_agent_config(run.agent_config, step_limit=run.step_limit, text_actions=run.text_actions or None)
        lock_for_command(run.out, f"rollout into {run.out}")
        chosen = options.backend(run)
        where = runner_of(run.runner)
        options.save(record or run, run.out / CONFIG_FILE)
    summary, finished, failed = _run(run, tasks, factory, agent, chosen, where)
    table = Table("metric", "value", title=f"rollout: {run.policy}")
    for key, value in summary.items():
        table.add_row(key, str(value))
    common.out.print(table)
    common.out.print(f"outputs: {run.out}")
    failures.report("episodes that failed before a verdict", failed)
    if finished and all(finished):
        raise typer.Exit(1)


def _run(run: RolloutConfig, tasks, factory, agent, chosen, where):
    from sweworld.runs.rollout import run_rollouts

    with Progress(TextColumn(f"[bold]{run.policy}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=common.console) as progress:
        bar = progress.add_task("rollout", total=len(tasks) * run.samples_per_instance)
        finished: list[str | None] = []  # this run's episodes: why each has no verdict, or None
        failed: dict[str, str] = {}

        def done(traj) -> None:
            progress.advance(bar, run.branches if traj.prefix_ended else 1)  # ended in its prefix: no branches
            finished.append(failures.of_trajectory(traj))
            if finished[-1]:
                failed[traj.instance_id] = finished[-1]

        with common.reported():
            summary = run_rollouts(tasks, factory, run, agent=agent, backend=chosen, on_done=done, runner=where)
    return summary, finished, failed
