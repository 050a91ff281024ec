"""``save_tasks``: write tasks as SWE-bench rows to ``.json``, ``.jsonl`` or ``.parquet`` (by extension)."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sweworld.core.errors import DatasetError
from sweworld.core.types import Task
from sweworld.tasks.readers import data_suffix
from sweworld.tasks.rows import dump_row


def _encode(row: dict[str, Any], path: Path, **kwargs: Any) -> str:
    try:
        return json.dumps(row, ensure_ascii=False, **kwargs)
    except (TypeError, ValueError) as exc:
        raise DatasetError(f"instance {row.get('instance_id')!r} cannot be written as JSON: {exc}",
                           where=str(path), hint="unknown fields must hold JSON-compatible values") from None


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    data = text.encode("utf-8")
    if path.name.lower().endswith(".gz"):
        data = gzip.compress(data, compresslevel=9, mtime=0)  # same rows, same bytes
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def save_tasks(tasks: Iterable[Task], path: str | Path) -> Path:
    """Write ``tasks`` (a list or a ``TaskSet``) to ``path``; the format follows the extension.

    Rows come from ``dump_row``: unknown fields are kept, list fields that were loaded as
    JSON-encoded strings are written encoded again. The file is replaced atomically. Returns the path.
    """
    path = Path(path).expanduser()
    suffix = data_suffix(path).removesuffix(".gz")
    if data_suffix(path) not in (".json", ".jsonl", ".parquet", ".json.gz", ".jsonl.gz"):
        raise DatasetError(f"unsupported output format '{data_suffix(path) or path.name}'", where=str(path),
                           hint="use a .json, .jsonl (optionally .gz) or .parquet file name")
    rows = [dump_row(task) for task in tasks]
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".parquet":
        from sweworld.tasks.parquet_io import write_parquet

        write_parquet(rows, path)
    elif suffix == ".jsonl":
        _write_text(path, "".join(_encode(row, path) + "\n" for row in rows))
    else:
        body = ",\n".join("  " + _encode(row, path) for row in rows)
        _write_text(path, f"[\n{body}\n]\n" if rows else "[]\n")
    return path
