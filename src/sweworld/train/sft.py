"""Supervised fine-tuning on exported chat rows with TRL's ``SFTTrainer``, LoRA optional (``peft``).

``train_sft(data, options)`` reads and checks the rows (``sweworld.train.rows``), loads the model's
tokenizer (its chat template renders ``messages`` and ``tools``; ``chat_template`` replaces it),
renders every row (a row the template cannot render is an error at its file:line) and drops the rows
over ``max_length`` tokens (TRL would cut them from the end, which loses the reply a row exists to
teach; ``too_long="cut"`` keeps TRL's cut instead), makes a ``datasets.Dataset`` of the two columns TRL reads (``messages`` and ``tools`` stored as JSON, so
tool-call arguments and schemas keep their shapes: Arrow would otherwise merge their keys into
structs full of nulls), trains, and writes the model (or the LoRA adapter), its tokenizer and
``train_summary.json`` to ``options.out``. Precision and gradient checkpointing follow the device:
bf16 and checkpointing on a GPU, float32 without them on CPU (TRL's defaults assume a GPU).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from sweworld.core.errors import ConfigError, DatasetError
from sweworld.data.formats import Arguments
from sweworld.train.deps import require
from sweworld.train.rows import TrainRow, kinds, load_rows

SUMMARY = "train_summary.json"


class SFTTrainOptions(BaseModel):
    """What ``train_sft`` trains and how."""

    model: str = Field(description="A Hugging Face model name or a local model directory.")
    out: Path = Field(description="Where the model (or adapter), tokenizer and summary are written.")
    lora: bool = Field(default=False, description="Train a LoRA adapter (peft) instead of every weight.")
    lora_r: int = Field(default=16, ge=1)
    lora_alpha: int = Field(default=32, ge=1)
    lora_dropout: float = Field(default=0.05, ge=0, lt=1)
    epochs: float = Field(default=1.0, gt=0)
    max_steps: int | None = Field(default=None, ge=1, description="Stop after N optimizer steps (overrides epochs).")
    learning_rate: float | None = Field(default=None, gt=0, description="Default: 2e-5, or 2e-4 with LoRA.")
    batch_size: int = Field(default=1, ge=1, description="Rows per device per step.")
    grad_accum: int = Field(default=1, ge=1, description="Gradient accumulation steps.")
    max_length: int | None = Field(default=8192, ge=1, description="Tokens per row at most (None: no limit).")
    too_long: Literal["drop", "cut"] = Field(default="drop", description=(
        "Rows over max_length: dropped (a cut row loses its last turns: the reply to learn), or cut."))
    assistant_only_loss: bool = Field(default=False, description="Loss on assistant turns only.")
    chat_template: Path | None = Field(default=None, description="A Jinja chat template replacing the model's.")
    arguments: Arguments = Field(default="object", description="Tool-call arguments as objects or JSON strings.")
    seed: int = 0
    logging_steps: int = Field(default=10, ge=1)


class SFTTrainSummary(BaseModel):
    """What a training run read, did and wrote (``train_summary.json``)."""

    data: list[str]
    rows: int
    kinds: dict[str, int]
    model: str
    lora: bool
    device: str
    steps: int = 0
    losses: list[float] = Field(default_factory=list, description="The training loss at each logging step.")
    mean_loss: float | None = Field(default=None, description="The training loss averaged over the run.")
    rows_trained: int = Field(default=0, description="Rows the trainer kept (TRL also drops rows left with no "
                              "token to learn, e.g. an assistant turn cut off).")
    too_long: int = Field(default=0, description="Rows over max_length: dropped, or cut with too_long='cut'.")
    tokens: int = Field(default=0, description="Tokens of one pass over the trained rows (after cutting).")
    seconds: float = 0.0
    out: str
    options: SFTTrainOptions


def load_tokenizer(model: str, chat_template: Path | None):
    """The model's tokenizer with a chat template and a pad token; ``ConfigError`` when either is missing."""
    from transformers import AutoTokenizer

    if model.startswith(("/", "./", "../", "~")) and not Path(model).expanduser().is_dir():
        raise ConfigError(f"no model directory at {model}", where="--model",
                          hint="give a directory written by save_pretrained, or a hub model name")
    try:
        tokenizer = AutoTokenizer.from_pretrained(model)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot load the tokenizer of {model!r}: {exc}", where="--model",
                          hint="give a local model directory or a model name the hub serves") from None
    if chat_template is not None:
        if not chat_template.is_file():
            raise ConfigError(f"no chat template file at {chat_template}", where="--chat-template",
                              hint="give a Jinja template file")
        tokenizer.chat_template = chat_template.read_text()
    if not tokenizer.chat_template:
        raise ConfigError(f"the tokenizer of {model!r} has no chat template to render messages and tools",
                          where="--model", hint="give one with --chat-template FILE (an instruct model has one)")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def to_dataset(rows: Sequence[TrainRow]):
    """The ``messages``/``tools`` columns as JSON features (shapes kept as written)."""
    from datasets import Dataset, Features, Json, List

    return Dataset.from_list([{"messages": r.messages, "tools": r.tools} for r in rows],
                             features=Features({"messages": List(Json()), "tools": List(Json())}))


def sft_config(options: SFTTrainOptions, gpu: bool):
    from trl import SFTConfig

    rate = options.learning_rate or (2e-4 if options.lora else 2e-5)
    return SFTConfig(output_dir=str(options.out), num_train_epochs=options.epochs, max_steps=options.max_steps or -1,
                     per_device_train_batch_size=options.batch_size, gradient_accumulation_steps=options.grad_accum,
                     learning_rate=rate, max_length=options.max_length if options.too_long == "cut" else None, assistant_only_loss=options.assistant_only_loss,
                     logging_steps=options.logging_steps, save_strategy="no", report_to="none", seed=options.seed,
                     bf16=gpu, activation_checkpointing=gpu, use_cpu=not gpu, disable_tqdm=True)


def lora_config(options: SFTTrainOptions):
    from peft import LoraConfig

    return LoraConfig(r=options.lora_r, lora_alpha=options.lora_alpha, lora_dropout=options.lora_dropout,
                      target_modules="all-linear", task_type="CAUSAL_LM")


def row_length(tokenizer, row: TrainRow) -> int:
    """Tokens of ``row`` as the chat template renders it (what TRL trains on); a row the template cannot
    render is a ``DatasetError`` at its file:line."""
    try:
        return len(tokenizer.apply_chat_template(row.messages, tools=row.tools, tokenize=True,
                                                 return_dict=True)["input_ids"])
    except Exception as exc:  # jinja2 raises its own errors, templates raise_exception() theirs
        raise DatasetError(f"the chat template cannot render this row: {type(exc).__name__}: {exc}", where=row.where,
                           hint="use --chat-template FILE with a template that renders tools and tool calls, or "
                                "--tool-arguments string") from None


def fit(rows: Sequence[TrainRow], lengths: Sequence[int], options: SFTTrainOptions) -> list[TrainRow]:
    """The rows to train on: with ``too_long="drop"``, those within ``max_length`` (``DatasetError`` when none is)."""
    if options.too_long == "cut" or options.max_length is None:
        return list(rows)
    kept = [row for row, n in zip(rows, lengths, strict=True) if n <= options.max_length]
    if not kept:
        raise DatasetError(f"every row is longer than --max-length {options.max_length} tokens (the shortest has "
                           f"{min(lengths)})", where=", ".join(dict.fromkeys(r.where.rsplit(":", 1)[0] for r in rows)),
                           hint="raise --max-length, give --too-long cut, or export shorter rows "
                                "(export sft --max-tokens)")
    return kept


def trainer_for(options: SFTTrainOptions, rows: Sequence[TrainRow], tokenizer):
    """TRL's ``SFTTrainer`` on ``rows`` (data prepared, nothing trained yet)."""
    import torch
    from trl import SFTTrainer

    gpu = torch.cuda.is_available()
    try:
        return SFTTrainer(model=options.model, args=sft_config(options, gpu), train_dataset=to_dataset(rows),
                          processing_class=tokenizer, peft_config=lora_config(options) if options.lora else None)
    except OSError as exc:
        raise ConfigError(f"cannot load the model {options.model!r}: {exc}", where="--model",
                          hint="give a local model directory or a model name the hub serves") from None
    except ValueError as exc:  # TRL's checks of the template and options, e.g. assistant-only masks
        raise ConfigError(str(exc), where="sweworld train sft",
                          hint="see the message; --chat-template FILE with {% generation %} markers allows "
                               "--assistant-only-loss") from None


def _losses(log_history: list[dict[str, Any]]) -> list[float]:
    return [float(entry["loss"]) for entry in log_history if "loss" in entry]


def train_sft(data: Sequence[str | Path], options: SFTTrainOptions) -> SFTTrainSummary:
    """Train on the rows of ``data`` and write the result (see the module docstring)."""
    rows = load_rows(data, options.arguments)
    require(lora=options.lora)
    tokenizer = load_tokenizer(options.model, options.chat_template)
    lengths = [row_length(tokenizer, row) for row in rows]
    trainer = trainer_for(options, fit(rows, lengths, options), tokenizer)
    trained = [len(ids) for ids in trainer.train_dataset["input_ids"]]
    start = time.monotonic()
    result = trainer.train()
    seconds = time.monotonic() - start
    trainer.save_model(str(options.out))  # every process takes part (sharded states); the main one writes
    summary = SFTTrainSummary(
        data=[str(p) for p in data], rows=len(rows), kinds=kinds(rows), rows_trained=len(trained),
        too_long=sum(n > (options.max_length or n) for n in lengths), model=options.model, lora=options.lora,
        device=str(trainer.args.device), steps=trainer.state.global_step, losses=_losses(trainer.state.log_history),
        mean_loss=result.training_loss, tokens=sum(trained), seconds=round(seconds, 3), out=str(options.out),
        options=options)
    if trainer.is_world_process_zero():
        options.out.mkdir(parents=True, exist_ok=True)
        tokenizer.save_pretrained(str(options.out))
        (options.out / SUMMARY).write_text(json.dumps(summary.model_dump(mode="json"), indent=2) + "\n")
    return summary
