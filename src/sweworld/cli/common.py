"""Options shared by every command, dataset loading and error reporting."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from sweworld.errors import SWEWorldError

console = Console(stderr=True)
out = Console(width=None if sys.stdout.isatty() else 120)
err = Console(stderr=True)

DEFAULT_DATASET = "default"

Dataset = Annotated[str, typer.Option("--dataset", "-d", help="Dataset: a .json/.jsonl/.parquet file, a "
                                      "save_to_disk directory, a hub name, or 'default' (the embedded one).")]
Split = Annotated[str | None, typer.Option(help="Split of a hub or save_to_disk dataset.")]
ReposDir = Annotated[Path | None, typer.Option("--repos-dir", help="Directory of existing clones "
                                               "(DIR/owner__name or DIR/owner/name); no network needed.")]
InstanceIds = Annotated[list[str] | None, typer.Option("--instance-ids", "-i",
                                                       help="Only these instances (repeat or comma-separate).")]
Workers = Annotated[int, typer.Option("--workers", "-w", min=1, help="Parallel workers.")]
SkipInvalid = Annotated[bool, typer.Option("--skip-invalid", help="Skip invalid rows and report how many.")]
Isolation = Annotated[str, typer.Option("--isolation", help="'bwrap' (default) or 'none' (no isolation: "
                                        "explicit opt-in, prints a warning).")]


def split_ids(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def dataset_path(name: str) -> str:
    if name == DEFAULT_DATASET:
        from sweworld.datasets import default_path
        return str(default_path())
    return name


def load(dataset: str, *, split: str | None = None, instance_ids: list[str] | None = None,
         skip_invalid: bool = False):
    from sweworld.tasks import load_tasks
    taskset = load_tasks(dataset_path(dataset), split=split, skip_invalid=skip_invalid,
                         instance_ids=split_ids(instance_ids))
    for error in taskset.errors:
        console.print(f"[yellow]skipped[/yellow] {error}")
    if taskset.errors:
        console.print(f"[yellow]{len(taskset.errors)} invalid rows skipped[/yellow]")
    return taskset


@contextmanager
def reported() -> Iterator[None]:
    """Turn sweworld's errors into one clear message and exit status 2 (no traceback)."""
    try:
        yield
    except SWEWorldError as exc:
        print(f"error: {exc}", file=sys.stderr)  # never wrapped: file:line must stay on one line
        raise typer.Exit(2) from None


def setup_logging(verbose: bool) -> None:
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
