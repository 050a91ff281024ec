"""``load_tasks``: any supported source -> a validated ``TaskSet``; ``validate_rows`` for in-memory rows.

Sources: a ``.json`` / ``.jsonl`` / ``.parquet`` file, a ``save_to_disk`` directory, or a Hugging
Face hub dataset name (``owner/name``) when no such local path exists.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from sweworld.core.errors import DatasetError
from sweworld.tasks import hf, parquet_io, readers
from sweworld.tasks.rows import RawRow, locate, row_to_task
from sweworld.tasks.taskset import TaskSet

FILE_SUFFIXES = (".json", ".jsonl", ".parquet", ".json.gz", ".jsonl.gz")
_HUB_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_MAX_LISTED = 20


def _raw_rows(source: str | Path, split: str | None) -> tuple[Iterator[RawRow], str, str | None]:
    """(rows, printable source, split used) for any supported source."""
    text = str(source)
    path = Path(text).expanduser()
    suffix = readers.data_suffix(path)
    if path.is_dir():
        if not hf.is_saved_dataset(path):
            raise DatasetError("directory is not a dataset written by save_to_disk (no dataset_dict.json "
                               "or state.json in it)", where=text,
                               hint="pass a .json, .jsonl or .parquet file, or a save_to_disk directory")
        rows, chosen = hf.read_saved_dataset(path, split)
        return rows, text, chosen
    if path.exists() or suffix in FILE_SUFFIXES or isinstance(source, Path) or not _HUB_NAME.match(text):
        if suffix in (".jsonl", ".jsonl.gz"):
            return readers.read_jsonl(path), text, None
        if suffix in (".json", ".json.gz"):
            return readers.read_json(path), text, None
        if suffix == ".parquet":
            return parquet_io.read_parquet(path), text, None
        if not path.exists():
            raise DatasetError("no such file or directory", where=text,
                               hint="check the path, or pass a hub dataset name such as "
                                    "'princeton-nlp/SWE-bench_Lite'")
        raise DatasetError(f"unsupported dataset format '{suffix or path.name}'", where=text,
                           hint="use .json, .jsonl (optionally .gz), .parquet, or a save_to_disk directory")
    rows, chosen = hf.read_hub(text, split)
    return rows, text, chosen


def _listing(items: Sequence[str]) -> str:
    shown = ", ".join(items[:_MAX_LISTED])
    return shown + (f", ... ({len(items) - _MAX_LISTED} more)" if len(items) > _MAX_LISTED else "")


def collect(rows: Iterable[RawRow], *, source: str, split: str | None = None, skip_invalid: bool = False,
            instance_ids: Sequence[str] | None = None) -> TaskSet:
    """Validate raw rows into a ``TaskSet``: one error per bad row, duplicates, the id filter.

    Rows whose instance id is known and not in ``instance_ids`` are not validated at all. Without
    ``skip_invalid`` the first bad row raises, its message saying how many other rows are bad.
    """
    wanted = set(instance_ids) if instance_ids is not None else None
    result = TaskSet(source=source, split=split)
    first_seen: dict[str, str] = {}
    for raw in rows:
        if wanted is not None and raw.instance_id is not None and raw.instance_id not in wanted:
            continue
        try:
            task = row_to_task(raw)
        except DatasetError as exc:
            result.errors.append(exc)
            continue
        iid = task.instance_id
        if wanted is not None and iid not in wanted:
            continue
        if iid in first_seen:
            result.errors.append(DatasetError(
                f"duplicate instance_id '{iid}': already at {first_seen[iid]}, again at {raw.where}",
                where=locate(raw.where, iid),
                hint="instance ids must be unique: remove or rename one of the two rows "
                     "(with skip_invalid=True the first one is kept)"))
            continue
        first_seen[iid] = raw.where
        result.tasks.append(task)
    if result.errors and not skip_invalid:
        first, others = result.errors[0], len(result.errors) - 1
        message = first.message + (f" (and {others} more invalid rows in {source})" if others else "")
        error = DatasetError(message, where=first.where, hint=first.hint)
        error.errors = list(result.errors)  # every row error, for callers that want to list them
        raise error
    if instance_ids is not None:
        missing = [iid for iid in dict.fromkeys(instance_ids) if iid not in first_seen]
        if missing:
            hint = "check the ids (they are case-sensitive)"
            if result.errors:
                hint += f"; {len(result.errors)} invalid rows were skipped and may hold some of them"
            raise DatasetError(f"{len(missing)} instance ids not found: {_listing(missing)}",
                               where=source + (f" [{split}]" if split else ""), hint=hint)
    return result


def load_tasks(source: str | Path, *, split: str | None = None, skip_invalid: bool = False,
               instance_ids: Sequence[str] | None = None) -> TaskSet:
    """Load SWE-bench-format instances from a file, a ``save_to_disk`` directory or the hub.

    Args:
        source: a ``.json`` (list of objects), ``.jsonl`` or ``.parquet`` file; a directory written
            by ``datasets``' ``save_to_disk``; or a hub dataset name such as
            ``princeton-nlp/SWE-bench_Lite`` (tried only when no such local path exists).
        split: split of a ``save_to_disk`` DatasetDict or of a hub dataset (default ``test``, else
            the only split); ignored for plain files.
        skip_invalid: skip bad rows (invalid JSON, invalid fields, duplicate ids) and list them in
            ``TaskSet.errors`` instead of raising on the first one.
        instance_ids: keep only these instances (in source order); ids not found raise.

    Raises:
        DatasetError: located ``file:line`` (``.jsonl``, ``.json``), ``file[row N]`` (Parquet,
            ``datasets``), plus the instance id when known, with what to do.
    """
    rows, printable, chosen = _raw_rows(source, split)
    return collect(rows, source=printable, split=chosen, skip_invalid=skip_invalid,
                   instance_ids=instance_ids)


def validate_rows(rows: Iterable[Mapping[str, Any]], *, source: str = "<rows>", skip_invalid: bool = False,
                  instance_ids: Sequence[str] | None = None) -> TaskSet:
    """Validate in-memory rows (dicts) like ``load_tasks`` does; rows are located ``source[index]``."""
    raw = (RawRow(f"{source}[{index}]", data=row) for index, row in enumerate(rows))
    return collect(raw, source=source, skip_invalid=skip_invalid, instance_ids=instance_ids)
