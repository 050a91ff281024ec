"""Rows from Hugging Face ``datasets``: a ``save_to_disk`` directory or a hub dataset name.

``datasets`` is an optional dependency (extra ``hf``), imported only here, inside the functions.
Rows are located ``name[split][row N]`` (N counts from 0, as in ``dataset[N]``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sweworld.core.errors import DatasetError
from sweworld.tasks.rows import RawRow

DEFAULT_SPLIT = "test"
SAVED_MARKERS = ("dataset_dict.json", "state.json", "dataset_info.json")


def _datasets(where: str) -> Any:
    try:
        import datasets
    except ImportError:
        raise DatasetError("loading this dataset needs the 'datasets' package, which is not installed",
                           where=where, hint="pip install 'sweworld[hf]', or convert the dataset to "
                                             ".jsonl/.parquet and pass that file") from None
    return datasets


def is_saved_dataset(path: Path) -> bool:
    return path.is_dir() and any((path / marker).is_file() for marker in SAVED_MARKERS)


def choose_split(available: list[str], split: str | None, where: str) -> str:
    """``split`` if present; else ``test``; else the only split; else a DatasetError."""
    if split is not None:
        if split in available:
            return split
        raise DatasetError(f"no split '{split}'; available splits: {', '.join(available) or '(none)'}",
                           where=where, hint="pass one of the available splits")
    if DEFAULT_SPLIT in available:
        return DEFAULT_SPLIT
    if len(available) == 1:
        return available[0]
    raise DatasetError(f"several splits and none is '{DEFAULT_SPLIT}': {', '.join(available)}",
                       where=where, hint="choose one with split=... (CLI: --split)")


def _rows(dataset: Any, label: str) -> Iterator[RawRow]:
    for index, row in enumerate(dataset):
        yield RawRow(f"{label}[row {index}]", data=dict(row))


def read_saved_dataset(path: Path, split: str | None) -> tuple[Iterator[RawRow], str | None]:
    """Rows of a directory written by ``Dataset.save_to_disk`` or ``DatasetDict.save_to_disk``."""
    where = str(path)
    datasets = _datasets(where)
    try:
        loaded = datasets.load_from_disk(str(path))
    except (OSError, ValueError, KeyError) as exc:
        raise DatasetError(f"cannot load the saved dataset: {exc}", where=where,
                           hint="pass a directory written by datasets' save_to_disk") from None
    if isinstance(loaded, datasets.DatasetDict):
        chosen = choose_split(list(loaded.keys()), split, where)
        return _rows(loaded[chosen], f"{path}[{chosen}]"), chosen
    return _rows(loaded, str(path)), None


def _hub_error(name: str, split: str, exc: Exception) -> DatasetError:
    download = (f"download the dataset where the hub is reachable (e.g. datasets.load_dataset('{name}', "
                f"split='{split}').to_json('{name.split('/')[-1]}.jsonl')), then pass the file's path")
    if isinstance(exc, ConnectionError) or "offline" in str(exc).lower() or "reach" in str(exc).lower():
        return DatasetError(f"cannot reach the Hugging Face hub to load '{name}' (split '{split}'): {exc}",
                            where=name, hint=download)
    if isinstance(exc, ValueError) and "split" in str(exc).lower():
        return DatasetError(f"no split '{split}' in '{name}': {exc}", where=name,
                            hint="pass one of the dataset's splits with split=... (CLI: --split)")
    if type(exc).__name__ in ("DatasetNotFoundError", "FileNotFoundError"):
        return DatasetError(f"no dataset '{name}' on the Hugging Face hub, and no such local path: {exc}",
                            where=name, hint="check the name, or pass the path of a local .json, .jsonl "
                                             "or .parquet file or save_to_disk directory")
    return DatasetError(f"cannot load '{name}' (split '{split}') from the Hugging Face hub: "
                        f"{type(exc).__name__}: {exc}", where=name, hint=download)


def read_hub(name: str, split: str | None) -> tuple[Iterator[RawRow], str]:
    """Rows of split ``split`` (default ``test``) of hub dataset ``name``, via ``datasets.load_dataset``."""
    datasets = _datasets(name)
    chosen = split or DEFAULT_SPLIT
    try:
        dataset = datasets.load_dataset(name, split=chosen)
    except Exception as exc:  # datasets raises many unrelated types (network, hub, builder): all mean "cannot load"
        raise _hub_error(name, chosen, exc) from exc
    return _rows(dataset, f"{name}[{chosen}]"), chosen
