"""``sweworld select``: best-of-n with a verifier over rollouts: SWE-bench predictions (the picked
patch per instance) and the pass@k / best@k table. docs/data.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from sweworld.cli import common, options, params
from sweworld.core.config import CONFIG_FILE, SelectConfig
from sweworld.core.protocols import Closeable
from sweworld.verify.verifiers import HYBRID_BASES, VERIFIERS

VERIFIER_NAMES = tuple(VERIFIERS)
VerifierName = Annotated[str, typer.Option("--verifier", "-V", callback=params.one_of(*VERIFIER_NAMES), help=(
    "'swr' (the embedded reward model on the final diff), 'embedded' (a verifier trained by `sweworld verifier "
    "train`: --verifier-model), 'llm' (a judge model's P(YES): --verifier-url), 'tests' (the real regression "
    "tests, PASS_TO_PASS), 'hybrid' (R2E-Gym: the top max(3, half) by --hybrid-base, then most regression tests passed), "
    "'random' (seeded baseline) or 'oracle' (the real reward: the upper bound)."))]
VerifierModel = Annotated[Path | None, typer.Option("--verifier-model", exists=True, dir_okay=False, help=(
    "embedded: the model JSON `sweworld verifier train` wrote."))]
VerifierURL = Annotated[str | None, typer.Option("--verifier-url", help=(
    "llm: the judge's OpenAI-compatible base URL (up to /v1)."))]
VerifierModelName = Annotated[str, typer.Option("--verifier-model-name", help="llm: the judge's model name.")]
VerifierInput = Annotated[str, typer.Option("--verifier-input", callback=params.one_of("trajectory", "diff"), help=(
    "llm: what the judge reads, the whole trajectory or only the final diff."))]
Votes = Annotated[int, typer.Option("--votes", min=1, help="llm: samples of the vote when the endpoint gives no "
                                    "logprobs.")]
HybridBase = Annotated[str, typer.Option("--hybrid-base", callback=params.one_of(*HYBRID_BASES),
                                         help="hybrid: the verifier whose top max(3, half) is kept.")]


def verifier_options_of(verifier: str, given: dict, hybrid_base: str) -> dict:
    """The options of ``create_verifier(verifier, ...)`` from the command's values ``given``: those the
    verifier takes (``hybrid``: its base's, and ``base``)."""
    from sweworld.verify.verifiers import verifier_options
    if verifier == "hybrid":
        return {"base": hybrid_base, **verifier_options_of(hybrid_base, given, hybrid_base)}
    return {key: given[key] for key in verifier_options(verifier) if key in given}


def tasks_of(found, dataset: str, split: str | None) -> dict:
    """The tasks of the samples with an outcome, by instance id."""
    ids = sorted({t.instance_id for _, t in found if not t.failed})
    return {t.instance_id: t for t in common.load(dataset, split=split, instance_ids=ids)} if ids else {}


def _table(selection) -> Table:
    from sweworld.verify import curve_rows

    table = Table("k", "pass@k", f"best@k ({selection.verifier})", "gap",
                  title=f"best-of-n: {selection.instances} instances, {selection.samples} samples")
    for k, passed, best in curve_rows(selection):
        table.add_row(str(k), f"{passed:.1%}", f"{best:.1%}", f"{passed - best:.1%}")
    return table


def select(ctx: typer.Context,
           runs: Annotated[list[Path] | None, typer.Option("--runs", "-r", help=(
               "Rollout directory (`sweworld rollout --out`) or its trajectories.jsonl; several may follow "
               "(their samples are pooled per instance)."))] = None,
           verifier: VerifierName = "swr",
           dataset: common.Dataset = common.DEFAULT_DATASET, split: common.Split = None,
           repos_dir: common.ReposDir = None,
           seed: Annotated[int, typer.Option(help="Seed of the random verifier.")] = 0,
           out: Annotated[Path | None, typer.Option("--out", "-o", callback=params.output_file, dir_okay=False,
                                                    help="Predictions JSONL (SWE-bench format) to write.")] = None,
           json_out: Annotated[Path | None, typer.Option("--json", callback=params.output_file, dir_okay=False,
                                                         help="Write the curve and the picks as JSON.")] = None,
           report: Annotated[Path | None, typer.Option("--report", callback=params.output_dir, help=(
               "Write an HTML report (index.html, report.json) with the pass@k / best@k chart here."))] = None,
           model: Annotated[str | None, typer.Option(help="model_name_or_path of the predictions.")] = None,
           verifier_model: VerifierModel = None, verifier_url: VerifierURL = None,
           verifier_model_name: VerifierModelName = "verifier", verifier_input: VerifierInput = "trajectory",
           votes: Votes = 5, hybrid_base: HybridBase = "swr", config: options.ConfigFile = None) -> None:
    """Pick the best of n samples per instance with a verifier; pass@k and best@k for k = 1..n."""
    run = options.resolve(ctx, SelectConfig)
    run_select(run.model_copy(update={"runs": common.existing_paths(run.runs, ctx, "--runs")}))


def config_of(run: SelectConfig) -> Path | None:
    """Where ``select`` writes its resolved configuration: beside its first output (``--out``, ``--json``,
    else in ``--report``); nowhere when it writes none."""
    if run.out or run.json_out:
        return options.config_path(run.out or run.json_out)
    return run.report / CONFIG_FILE if run.report else None


def run_select(run: SelectConfig) -> None:
    """``sweworld select`` of a resolved configuration (its ``runs`` existing paths)."""
    from sweworld.data.sft import load_runs, write_jsonl
    from sweworld.verify import create_verifier, predictions
    from sweworld.verify import select as pick
    from sweworld.verify.verifiers import needs_tasks

    verifier, out, json_out, report = run.verifier, run.out, run.json_out, run.report
    with common.reported():
        found = load_runs(run.runs)
        tasks = tasks_of(found, run.dataset, run.split) if needs_tasks(verifier) else None
        given = {"seed": run.seed, "repos_dir": str(run.repos_dir) if run.repos_dir else None,
                 "model": run.verifier_model, "url": run.verifier_url, "model_name": run.verifier_model_name,
                 "input": run.verifier_input, "votes": run.votes}
        chosen = create_verifier(verifier, **verifier_options_of(verifier, given, run.hybrid_base))
        if (where := config_of(run)) is not None:
            options.save(run, where)
        try:
            selection = pick(found, chosen, tasks)
        finally:
            if isinstance(chosen, Closeable):
                chosen.close()
        if out:
            write_jsonl(out, predictions(selection, run.model))
        if json_out:
            data = selection.model_dump(mode="json", exclude={"picks"})
            data["picks"] = {iid: {"run": s.run, "sample": s.trajectory.sample, "score": s.score,
                                   "resolved": s.resolved} for iid, s in selection.picks.items()}
            json_out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        if report:
            from sweworld.htmlreport import Report, write_html
            from sweworld.verify import bestofn_section
            write_html(report, Report(title="sweworld best-of-n", meta={"runs": ", ".join(map(str, run.runs)),
                                                                          "verifier": verifier},
                                        sections=[bestofn_section(selection)]))
    common.out.print(_table(selection))
    common.out.print(f"select ({verifier}): {selection.instances} instances, {selection.samples} samples "
                     f"({selection.failed} failed left out); mean resolve {selection.mean_resolve:.1%}, picks "
                     f"resolve {selection.selected_resolve:.1%}" + (f"; predictions -> {out}" if out else ""), **common.PLAIN)
