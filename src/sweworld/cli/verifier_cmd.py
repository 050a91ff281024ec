"""``sweworld verifier train``: the embedded verifier from real-labelled rollouts. docs/data.md."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sweworld.cli import common, options, params
from sweworld.cli.export_cmd import MORE
from sweworld.core.config import VerifierTrainConfig

app = typer.Typer(no_args_is_help=True, help="Verifiers for best-of-n: train the embedded one.")


@app.command("train", context_settings=MORE)
def train(ctx: typer.Context,
          runs: Annotated[list[Path] | None, typer.Option("--runs", "-r", help=(
              "Rollout directory or its trajectories.jsonl, with both outcomes (e.g. `sweworld rollout --policy "
              "perturb` or explorer-perturb); several may follow."))] = None,
          out: Annotated[Path | None, typer.Option("--out", "-o", callback=params.output_file, dir_okay=False,
                                                   help="The model JSON to write (`sweworld select --verifier "
                                                   "embedded --verifier-model`).")] = None,
          features: Annotated[str, typer.Option("--features", callback=params.one_of("blind", "solo", "reference"), help=(
              "'blind': the trajectory and the diff alone, with the agreement among an instance's samples (a "
              "test-time verifier); 'solo': blind without the agreement (each sample alone); 'reference': also the diff "
              "against the gold patch, as SWE-World's SWR sees it (not a test-time verifier)."))] = "blind",
          dataset: common.Dataset = common.DEFAULT_DATASET, split: common.Split = None,
          repos_dir: common.ReposDir = None,
          l2: Annotated[float, typer.Option(min=0.0, help="L2 penalty on the standardized weights.")] = 1.0,
          config: options.ConfigFile = None) -> None:
    """Train the embedded verifier (a CPU logistic regression) on rollouts labelled by the real harness."""
    run = options.resolve(ctx, VerifierTrainConfig)
    run_train(run.model_copy(update={"runs": common.existing_paths(run.runs, ctx, "--runs")}))


def run_train(run: VerifierTrainConfig) -> None:
    """``sweworld verifier train`` of a resolved configuration (its ``runs`` existing paths)."""
    from sweworld.cli.select_cmd import tasks_of
    from sweworld.data.sft import load_runs
    from sweworld.surrogates.swr.predict import repo_sources
    from sweworld.verify.embedded import train_verifier

    out = run.out
    with common.reported():
        found = load_runs(run.runs)
        options.save(run, options.config_path(out))
        model = train_verifier(found, tasks_of(found, run.dataset, run.split), feature_set=run.features, l2=run.l2,
                               sources=repo_sources(str(run.repos_dir) if run.repos_dir else None))
        model.save(out)
    meta = model.meta
    common.out.print(f"verifier ({run.features}): {meta['examples']} samples ({meta['resolved']} resolved) of "
                     f"{meta['instances']} instances, {len(meta['repos'])} repositories; training accuracy "
                     f"{meta['train_accuracy']:.3f} -> {out}", **common.PLAIN)
