"""``sweworld verifier train``: the embedded verifier from real-labelled rollouts. docs/data.md."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sweworld.cli import common, params
from sweworld.cli.export_cmd import MORE

app = typer.Typer(no_args_is_help=True, help="Verifiers for best-of-n: train the embedded one.")


@app.command("train", context_settings=MORE)
def train(ctx: typer.Context,
          runs: Annotated[list[Path], typer.Option("--runs", "-r", help=(
              "Rollout directory or its trajectories.jsonl, with both outcomes (e.g. `sweworld rollout --policy "
              "perturb` or explorer-perturb); several may follow."))],
          out: Annotated[Path, typer.Option("--out", "-o", callback=params.output_file, dir_okay=False,
                                            help="The model JSON to write (`sweworld select --verifier embedded "
                                            "--verifier-model`).")],
          features: Annotated[str, typer.Option("--features", callback=params.one_of("blind", "solo", "reference"), help=(
              "'blind': the trajectory and the diff alone, with the agreement among an instance's samples (a "
              "test-time verifier); 'solo': blind without the agreement (each sample alone); 'reference': also the diff "
              "against the gold patch, as SWE-World's SWR sees it (not a test-time verifier)."))] = "blind",
          dataset: common.Dataset = common.DEFAULT_DATASET, split: common.Split = None,
          repos_dir: common.ReposDir = None,
          l2: Annotated[float, typer.Option(min=0.0, help="L2 penalty on the standardized weights.")] = 1.0) -> None:
    """Train the embedded verifier (a CPU logistic regression) on rollouts labelled by the real harness."""
    from sweworld.cli.select_cmd import tasks_of
    from sweworld.data.sft import load_runs
    from sweworld.surrogates.swr.predict import repo_sources
    from sweworld.verify.embedded import train_verifier

    runs = common.existing_paths(runs, ctx, "--runs")
    with common.reported():
        found = load_runs(runs)
        model = train_verifier(found, tasks_of(found, dataset, split), feature_set=features, l2=l2,
                               sources=repo_sources(str(repos_dir) if repos_dir else None))
        model.save(out)
    meta = model.meta
    common.out.print(f"verifier ({features}): {meta['examples']} samples ({meta['resolved']} resolved) of "
                     f"{meta['instances']} instances, {len(meta['repos'])} repositories; training accuracy "
                     f"{meta['train_accuracy']:.3f} -> {out}", **common.PLAIN)
