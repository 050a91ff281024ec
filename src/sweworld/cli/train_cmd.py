"""``sweworld train``: fine-tune a model on exported rows with TRL (the ``train`` extra). docs/data.md."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from sweworld.cli import backend_opts as bo
from sweworld.cli import common, options, params
from sweworld.cli.export_cmd import MORE
from sweworld.core.config import CONFIG_FILE, TrainRLConfig, TrainSFTConfig

# `\\[`: typer renders help as rich markup, where a bare [train] is a style tag and vanishes
app = typer.Typer(no_args_is_help=True, help="Train on exported rows, or with RL on episodes (needs `pip install 'sweworld\\[train]'`).")


def _summary_table(summary) -> Table:
    table = Table("", "value", title=f"sft: {summary.model} -> {summary.out}")
    losses = summary.losses
    for name, value in (("rows", f"{summary.rows} ({', '.join(f'{k} {n}' for k, n in summary.kinds.items())})"),
                        ("device", summary.device), ("lora", "yes" if summary.lora else "no"),
                        ("rows trained", summary.rows_trained),
                        (f"rows over --max-length ({summary.options.too_long})", summary.too_long),
                        ("steps", summary.steps), ("tokens per pass", summary.tokens),
                        ("loss first -> last", f"{losses[0]:.4f} -> {losses[-1]:.4f}" if losses else "not logged"),
                        ("loss mean", f"{summary.mean_loss:.4f}" if summary.mean_loss is not None else "-"),
                        ("seconds", f"{summary.seconds:.1f}")):
        table.add_row(name, str(value))
    return table


@app.command("sft", context_settings=MORE)
def sft(ctx: typer.Context,
        data: Annotated[list[Path] | None, typer.Option("--data", "-d", help=(
            "JSONL of chat rows (`sweworld export sft` or `export world` output, verifier rows, any "
            "{\"messages\": [...]} rows); several may follow."))] = None,
        model: Annotated[str | None, typer.Option("--model", "-m", help=(
            "Hugging Face model name or local model directory."))] = None,
        out: Annotated[Path | None, typer.Option("--out", "-o", callback=params.output_dir, help=(
            "Where the model (or LoRA adapter), tokenizer and train_summary.json go "
            "(default: runs/train/<model name>-sft)."))] = None,
        lora: Annotated[bool, typer.Option("--lora", help="Train a LoRA adapter (peft) on every linear layer.")] = False,
        lora_r: Annotated[int, typer.Option(min=1, help="LoRA rank.")] = 16,
        lora_alpha: Annotated[int, typer.Option(min=1, help="LoRA alpha.")] = 32,
        epochs: Annotated[float, typer.Option(callback=params.positive, help="Passes over the rows.")] = 1.0,
        max_steps: Annotated[int | None, typer.Option(min=1, help="Stop after N optimizer steps (overrides --epochs).")]
        = None,
        lr: Annotated[float | None, typer.Option("--lr", callback=params.positive, help="Learning rate (default 2e-5; 2e-4 with --lora).")]
        = None,
        batch_size: Annotated[int, typer.Option(min=1, help="Rows per device per step.")] = 1,
        grad_accum: Annotated[int, typer.Option(min=1, help="Gradient accumulation steps.")] = 1,
        max_length: Annotated[int, typer.Option(min=1, help="Tokens per row at most (as the chat template renders it).")]
        = 8192,
        too_long: Annotated[str, typer.Option("--too-long", help=(
            "Rows over --max-length: 'drop' them (counted), or 'cut' them (a cut row loses its last turns)."))]
        = "drop",
        assistant_only_loss: Annotated[bool, typer.Option("--assistant-only-loss", help=(
            "Loss on assistant turns only (the template needs {% generation %} markers; TRL patches known ones)."))]
        = False,
        chat_template: Annotated[Path | None, typer.Option(exists=True, dir_okay=False, help=(
            "Jinja chat template replacing the model's (one that renders tools and tool calls)."))] = None,
        arguments: Annotated[str, typer.Option("--tool-arguments", help=(
            "Tool-call arguments as decoded 'object's (what Hugging Face templates expect) or JSON 'string's."))]
        = "object",
        seed: Annotated[int, typer.Option(help="Seed of initialisation and data order.")] = 0,
        logging_steps: Annotated[int, typer.Option(min=1, help="Log the loss every N steps.")] = 10,
        config: options.ConfigFile = None) -> None:
    """Supervised fine-tuning with TRL's SFTTrainer on policy, SWT, SWR or verifier rows."""
    for value, option, choices in ((arguments, "--tool-arguments", ("object", "string")),
                                   (too_long, "--too-long", ("drop", "cut"))):
        if value not in choices:
            raise typer.BadParameter(f"{value!r}: use one of {', '.join(choices)}", param_hint=option)
    run = options.resolve(ctx, TrainSFTConfig, {"arguments": ("tool_arguments",)})
    data = common.existing_paths(run.data, ctx, "--data")
    out = run.out or Path("runs/train") / f"{Path(run.model.rstrip('/')).name or 'model'}-sft"
    run_sft(run.model_copy(update={"data": data, "out": out}))


def run_sft(run: TrainSFTConfig) -> None:
    """``sweworld train sft`` of a resolved configuration (its ``out`` set)."""
    from sweworld.train.sft import SUMMARY, SFTTrainOptions, train_sft

    out = run.out
    with common.reported():
        options.save(run, out / CONFIG_FILE)
        train = SFTTrainOptions(model=run.model, out=out, lora=run.lora, lora_r=run.lora_r, lora_alpha=run.lora_alpha,
                                epochs=run.epochs, max_steps=run.max_steps, learning_rate=run.lr,
                                batch_size=run.batch_size, grad_accum=run.grad_accum, max_length=run.max_length,
                                too_long=run.too_long, assistant_only_loss=run.assistant_only_loss,
                                chat_template=run.chat_template, seed=run.seed, logging_steps=run.logging_steps,
                                arguments=run.tool_arguments)
        summary = train_sft(run.data, train)
    common.out.print(_summary_table(summary))
    common.out.print(f"sft: {'LoRA adapter' if run.lora else 'model'} and tokenizer -> {out}; summary: "
                     f"{out / SUMMARY}", **common.PLAIN)



@app.command("rl", context_settings=MORE)
def rl(ctx: typer.Context,
       model: Annotated[str | None, typer.Option("--model", "-m", help=(
           "Hugging Face model name or local model directory (the policy)."))] = None,
       dataset: common.Dataset = common.DEFAULT_DATASET, split: common.Split = None,
       instance_ids: common.InstanceIds = None, repos_dir: common.ReposDir = None,
       backend: bo.BackendName = "real", world: bo.WorldKind = None, world_url: bo.WorldURL = None,
       world_model: bo.WorldModel = "world", audit_rate: bo.AuditRate = 0.1,
       out: Annotated[Path | None, typer.Option("--out", "-o", callback=params.output_dir, help=(
           "Checkpoints, the model, metrics.jsonl, rollouts.jsonl, rl_summary.json "
           "(default: runs/train/<model name>-grpo)."))] = None,
       max_steps: Annotated[int, typer.Option(min=1, help="Optimizer steps.")] = 100,
       num_generations: Annotated[int, typer.Option(min=2, help="Rollouts per prompt (GRPO's group).")] = 4,
       batch_size: Annotated[int, typer.Option(min=1, help="Rollouts per device per step.")] = 4,
       lr: Annotated[float, typer.Option("--lr", callback=params.positive, help="Learning rate.")] = 1e-6,
       use_vllm: Annotated[bool, typer.Option("--use-vllm", help="Generate with vLLM (GPU).")] = False,
       seed: Annotated[int, typer.Option(help="Seed of initialisation, data order and sampling.")] = 0,
       config: options.ConfigFile = None) -> None:
    """GRPO with TRL on a dataset's episodes, the backend's verdict as the reward (SWE-World's RL recipe
    with --backend sim). The rest of the settings (group size, lengths, LoRA, vLLM server...) go in --config."""
    run = options.resolve(ctx, TrainRLConfig, options.BACKEND)
    out = run.out or Path("runs/train") / f"{Path(run.model.rstrip('/')).name or 'model'}-grpo"
    run_rl(run.model_copy(update={"out": out}))


def run_rl(run: TrainRLConfig) -> None:
    """``sweworld train rl`` of a resolved configuration (its ``out`` set)."""
    from sweworld.train.grpo import METRICS, SUMMARY, train_grpo

    out = run.out
    assert out is not None
    with common.reported():
        chosen = options.backend(run)
        options.save(run, out / CONFIG_FILE)
        summary = train_grpo(run, chosen)
    table = Table("", "value", title=f"grpo: {summary.model} on {summary.instances} instances ({summary.backend})")
    for name, value in (("device", summary.device), ("steps", summary.steps), ("rollouts", summary.rollouts),
                        ("resolved", summary.resolved), ("errors", summary.errors),
                        ("reward mean", f"{summary.reward_mean:.4f}" if summary.reward_mean is not None else "-"),
                        ("seconds", f"{summary.seconds:.1f}")):
        table.add_row(name, str(value))
    common.out.print(table)
    common.out.print(f"grpo: model and tokenizer -> {out}; metrics: {out / METRICS}; summary: {out / SUMMARY}",
                     **common.PLAIN)
