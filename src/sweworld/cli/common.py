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

from sweworld.core.errors import SWEWorldError

console = Console(stderr=True)
out = Console(width=None if sys.stdout.isatty() else 120)
err = Console(stderr=True)

DEFAULT_DATASET = "default"

Dataset = Annotated[str, typer.Option("--dataset", "-d", help="Dataset: a shipped one by name ('default', "
                                      "'lite', 'demo', 'smoke': see `sweworld datasets ls`), a .json/.jsonl"
                                      "(.gz)/.parquet file, a save_to_disk directory, or a hub name.")]
Split = Annotated[str | None, typer.Option(help="Split of a hub or save_to_disk dataset; with the shipped "
                                           "'default', a shipped subset such as 'lite'.")]
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


def dataset_path(name: str, split: str | None = None) -> str:
    """What ``load_tasks`` should read for ``--dataset name [--split split]``.

    A shipped name (``default``, ``lite``, ``demo``, ``smoke``...) is its file; the shipped ``default``
    takes a shipped subset as its split (``--dataset default --split lite`` is the lite file). A bare
    shipped name wins over a file or directory of that name in the current directory (write ``./lite``
    for that one). Anything else is returned unchanged (a path or a hub name; ``split`` goes to the loader).

    Raises:
        DatasetError: a shipped name with a split that is not one of its subsets, or an unknown subset.
    """
    from sweworld import datasets
    if not datasets.is_shipped(name):
        return name
    if split is None or split == name:
        return str(datasets.path_of(name))
    if name == datasets.DEFAULT:
        return str(datasets.path_of(split))
    from sweworld.core.errors import DatasetError
    raise DatasetError(f"the shipped dataset {name!r} has no split {split!r}",
                       hint=f"drop --split, or use --dataset {split} / --dataset default --split {split}")


def load(dataset: str, *, split: str | None = None, instance_ids: list[str] | None = None,
         skip_invalid: bool = False):
    """The tasks of ``--dataset`` (invalid rows reported); every command that loads a dataset works on it,
    so the cache (``$SWEWORLD_HOME``) is checked first. Raises ConfigError, or DatasetError when no task
    is left (an empty dataset, or ``--instance-ids`` that selects none)."""
    from sweworld.core import paths
    from sweworld.datasets import is_shipped
    from sweworld.tasks import load_tasks
    paths.home()
    source = dataset_path(dataset, split)
    taskset = load_tasks(source, split=None if is_shipped(dataset) else split, skip_invalid=skip_invalid,
                         instance_ids=split_ids(instance_ids))
    for error in taskset.errors:
        console.print(f"[yellow]skipped[/yellow] {error}")
    if taskset.errors:
        console.print(f"[yellow]{len(taskset.errors)} invalid rows skipped[/yellow]")
    if not len(taskset):
        from sweworld.core.errors import DatasetError
        what = "the --instance-ids filter selects none" if instance_ids else "no valid instance in it"
        raise DatasetError(f"nothing to do: {what}", where=taskset.source or dataset,
                           hint="check --dataset and --instance-ids (see `sweworld datasets ls`)")
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


PLAIN = {"soft_wrap": True, "markup": False, "highlight": False}
"""Console output printed as is (paths and JSON: no wrapping, markup or highlighting)."""


def existing_paths(first: list[Path], ctx: typer.Context, option: str) -> list[Path]:
    """``--option A B C``: the first value and the extra words after it, each an existing path."""
    paths = [*first, *map(Path, ctx.args)]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise typer.BadParameter(f"no such file or directory: {', '.join(missing)}", param_hint=option)
    return paths
