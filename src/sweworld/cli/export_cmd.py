"""``sweworld export``: training data from rollouts (``sft``, ``verifier``) and from traces (``world``). docs/data.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from sweworld.cli import common, options, params
from sweworld.core.config import CONFIG_FILE, ExportSFTConfig, ExportVerifierConfig, ExportWorldConfig

app = typer.Typer(no_args_is_help=True, help="Export training data: SFT rows, verifier rows, SWT/SWR world-model rows.")
MORE = {"allow_extra_args": True}
"""``--runs A B`` and ``--traces A B``: the words after the first are more of them."""
Seed = Annotated[int, typer.Option(help="Seed of the deterministic choices (ties of the cap, steps kept).")]
Runs = Annotated[list[Path] | None, typer.Option("--runs", "-r", help=(
    "Rollout directory (`sweworld rollout --out`) or its trajectories.jsonl; several may follow."))]
RowsOut = Annotated[Path | None, typer.Option("--out", "-o", callback=params.output_file, dir_okay=False,
                                       help="The JSONL file to write (its summary: <name>.summary.json).")]


def _counts_table(title: str, rows: list[tuple[str, object, str]]) -> Table:
    table = Table("filter", "count", "meaning", title=title)
    for row in rows:
        table.add_row(row[0], str(row[1]), row[2])
    return table


@app.command("sft", context_settings=MORE)
def sft(ctx: typer.Context,
        runs: Runs = None, out: RowsOut = None,
        fmt: Annotated[str, typer.Option("--format", help="'openai' (messages + tools) or 'sharegpt'.")] = "openai",
        keep_all: Annotated[bool, typer.Option("--all", help=(
            "Keep unresolved trajectories too (every one with an outcome; failed samples never)."))] = False,
        cap: Annotated[int | None, typer.Option("--cap-per-instance", min=1, help=(
            "At most K trajectories per instance: resolved first, then the shortest, seeded ties."))] = None,
        seed: Seed = 0,
        max_tokens: Annotated[int | None, typer.Option("--max-tokens", min=1, help="Drop rows longer than N tokens.")]
        = None,
        tokenizer: Annotated[str | None, typer.Option(help=(
            "tokenizer.json (or a model directory holding one) counting the tokens; default: characters/4, "
            "an estimate the summary names as such."))] = None,
        arguments: Annotated[str, typer.Option("--tool-arguments", help=(
            "openai format: tool-call arguments as a JSON 'string' (OpenAI) or an 'object' (many HF chat "
            "templates)."))] = "string",
        config: options.ConfigFile = None) -> None:
    """SFT rows from rollouts, filtered as SWE-Gym and SWE-World filter them."""
    _choice(fmt, ("openai", "sharegpt"), "--format")
    _choice(arguments, ("string", "object"), "--tool-arguments")
    run = options.resolve(ctx, ExportSFTConfig, {"fmt": ("format",), "keep_all": ("all",),
                                                 "cap": ("cap_per_instance",), "arguments": ("tool_arguments",)})
    run_sft(run.model_copy(update={"runs": common.existing_paths(run.runs, ctx, "--runs")}))


def run_sft(run: ExportSFTConfig) -> None:
    """``sweworld export sft`` of a resolved configuration (its ``runs`` existing paths)."""
    from sweworld.data.sft import FILTERS, SFTOptions, summary_path, write_sft
    from sweworld.data.tokens import load_counter

    out = run.out
    with common.reported():
        chosen = SFTOptions(keep_unresolved=run.all, cap_per_instance=run.cap_per_instance, seed=run.seed,
                            max_tokens=run.max_tokens, format=run.format, arguments=run.tool_arguments)
        counter = load_counter(run.tokenizer)
        options.save(run, options.config_path(out))
        summary = write_sft(run.runs, out, chosen, counter)
    removed = [(name, summary.removed[name], FILTERS[name]) for name in FILTERS]
    common.out.print(_counts_table(f"sft: {summary.trajectories} trajectories read", removed))
    common.out.print(f"sft: {summary.rows} rows ({summary.resolved_rows} resolved) of {summary.instances} "
                     f"instances -> {out}; tokens ({summary.tokens['counter']}): total {summary.tokens['total']}, "
                     f"longest {summary.tokens['longest']}; summary: {summary_path(out)}", **common.PLAIN)


def _choice(value: str, choices: tuple[str, ...], option: str) -> str:
    if value not in choices:
        raise typer.BadParameter(f"{value!r}: use one of {', '.join(choices)}", param_hint=option)
    return value


@app.command("world", context_settings=MORE)
def world(ctx: typer.Context,
          traces: Annotated[list[Path] | None, typer.Option("--traces", "-t", help=(
              "Trace file (traces.jsonl) or a directory holding one; several may follow."))] = None,
          out: Annotated[Path | None, typer.Option("--out", "-o", callback=params.output_dir, help=(
              "Directory of swt.jsonl, swr.jsonl and summary.json."))] = None,
          style: Annotated[str, typer.Option("--style", help="Prompt style: 'sweworld' or 'swe-world'.")] = "sweworld",
          max_steps: Annotated[int, typer.Option("--max-steps-per-trajectory", min=1, help=(
              "SWT rows per episode at most (SWE-World: 6)."))] = 6,
          seed: Seed = 0,
          teacher_url: Annotated[str | None, typer.Option(help="Teacher endpoint (OpenAI-compatible base URL, "
                                                          "up to /v1): reverse-reasoning CoT.")] = None,
          teacher_model: Annotated[str, typer.Option(help="Teacher model name.")] = "teacher",
          judge_url: Annotated[str | None, typer.Option(help="Judge endpoint (default: the teacher's).")] = None,
          judge_model: Annotated[str | None, typer.Option(help="Judge model (default: the teacher's).")] = None,
          cot_swt: Annotated[bool, typer.Option("--cot-swt", help="With a teacher, SWT rows get CoT too.")] = False,
          workers: common.Workers = 4, config: options.ConfigFile = None) -> None:
    """SWT and SWR rows from traces, with the prompts the world models see at inference."""
    run = options.resolve(ctx, ExportWorldConfig, {"max_steps": ("max_steps_per_trajectory",)})
    run_world(run.model_copy(update={"traces": common.existing_paths(run.traces, ctx, "--traces")}))


def run_world(run: ExportWorldConfig) -> None:
    """``sweworld export world`` of a resolved configuration (its ``traces`` existing paths)."""
    from sweworld.data.cot import ReverseReasoner, TeacherConfig
    from sweworld.data.world import WorldOptions, write_world
    from sweworld.world.templates import styles

    out = run.out
    _choice(run.style, tuple(styles()), "--style")
    with common.reported():
        options.save(run, out / CONFIG_FILE)
    reasoner = None
    if run.teacher_url:
        reasoner = ReverseReasoner.from_config(TeacherConfig(teacher_url=run.teacher_url,
                                                             teacher_model=run.teacher_model,
                                                             judge_url=run.judge_url, judge_model=run.judge_model))
    try:
        with common.reported():
            counts = write_world(run.traces, out, WorldOptions(style=run.style,
                                                               max_steps_per_trajectory=run.max_steps_per_trajectory,
                                                               seed=run.seed, cot_swt=run.cot_swt,
                                                               workers=run.workers), reasoner)
    finally:
        if reasoner:
            reasoner.close()
    common.out.print(json.dumps({k: v for k, v in counts.items() if k != "traces_files"}), **common.PLAIN)
    common.out.print(f"world: {counts['swt']['rows']} SWT rows -> {out / 'swt.jsonl'}, {counts['swr']['rows']} "
                     f"SWR rows -> {out / 'swr.jsonl'}; summary: {out / 'summary.json'}", **common.PLAIN)


@app.command("verifier", context_settings=MORE)
def verifier(ctx: typer.Context,
             runs: Runs = None, out: RowsOut = None,
             dataset: common.Dataset = common.DEFAULT_DATASET, split: common.Split = None,
             input: Annotated[str, typer.Option("--input", help=(
                 "What the judge reads: 'trajectory' (SWE-Gym) or 'diff' (the final diff only)."))] = "trajectory",
             balance: Annotated[bool, typer.Option("--balance/--no-balance", help=(
                 "Cut the larger class (YES/NO) to the size of the smaller one."))] = True,
             fmt: Annotated[str, typer.Option("--format", help="'openai' (messages) or 'sharegpt'.")] = "openai",
             max_chars: Annotated[int, typer.Option("--max-chars", min=100, help=(
                 "Longest observation kept in a row (head and tail)."))] = 2000,
             seed: Seed = 0, config: options.ConfigFile = None) -> None:
    """Verifier rows (SWE-Gym): the issue and the trajectory -> YES/NO from the real verdict, balanced."""
    _choice(input, ("trajectory", "diff"), "--input")
    _choice(fmt, ("openai", "sharegpt"), "--format")
    run = options.resolve(ctx, ExportVerifierConfig, {"fmt": ("format",)})
    run_verifier(run.model_copy(update={"runs": common.existing_paths(run.runs, ctx, "--runs")}))


def run_verifier(run: ExportVerifierConfig) -> None:
    """``sweworld export verifier`` of a resolved configuration (its ``runs`` existing paths)."""
    from sweworld.cli.select_cmd import tasks_of
    from sweworld.data.sft import load_runs, summary_path
    from sweworld.data.verifier import VerifierOptions, write_verifier

    out = run.out
    with common.reported():
        chosen = VerifierOptions(input=run.input, balance=run.balance, seed=run.seed, max_chars=run.max_chars,
                                 format=run.format)
        samples = load_runs(run.runs)
        tasks = tasks_of(samples, run.dataset, run.split)
        options.save(run, options.config_path(out))
        summary = write_verifier(samples, tasks, out, chosen)
    common.out.print(f"verifier: {summary.trajectories} trajectories read ({summary.failed} failed, {summary.yes} "
                     f"resolved, {summary.no} not); {summary.balanced_out} removed to balance; {summary.rows} rows "
                     f"-> {out}; summary: {summary_path(out)}", **common.PLAIN)
