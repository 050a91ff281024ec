"""Rows <-> Parquet with pyarrow, keeping every value of every column, unknown ones included.

Writing: a column is stored natively when pyarrow's type inference gives back exactly the same
values (same Python types, same dict keys) and the column is present in every row. Otherwise —
types mixed across rows (a list here, a JSON string there), dicts with different keys, a field
missing from some rows — the column is stored as JSON text, one ``json.dumps`` per value (null for a
row that lacks the field), and its name is listed in the schema metadata key
``sweworld.json_columns``. Reading decodes those columns back, so values survive a round trip.
Parquet files from elsewhere (e.g. SWE-bench on the hub) have no such key and are read as they are.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from sweworld.core.errors import DatasetError
from sweworld.tasks.rows import RawRow

JSON_COLUMNS_KEY = b"sweworld.json_columns"
_MISSING = object()


def _same(a: Any, b: Any) -> bool:
    """Equal values of the same Python types, recursively (so 1 != 1.0 != True)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and a != a:
        return b != b
    return a == b


def _has_empty_struct(pa_type: Any) -> bool:
    import pyarrow as pa

    if pa.types.is_struct(pa_type):
        return pa_type.num_fields == 0 or any(
            _has_empty_struct(pa_type.field(i).type) for i in range(pa_type.num_fields))
    if pa.types.is_list(pa_type) or pa.types.is_large_list(pa_type):
        return _has_empty_struct(pa_type.value_type)
    return False


def _native(values: list[Any]) -> Any | None:
    """A pyarrow array holding exactly ``values``, or None when inference would change them."""
    import pyarrow as pa

    if any(value is _MISSING for value in values):
        return None
    try:
        array = pa.array(values)
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        return None
    if _has_empty_struct(array.type) or not _same(array.to_pylist(), values):
        return None
    return array


def write_parquet(rows: Sequence[dict[str, Any]], path: Path) -> None:
    """Write rows to ``path`` atomically (temporary file, then rename)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    arrays, json_columns = {}, []
    for name in columns:
        values = [row.get(name, _MISSING) for row in rows]
        array = _native(values)
        if array is None:
            json_columns.append(name)
            try:
                encoded = [None if v is _MISSING else json.dumps(v, ensure_ascii=False) for v in values]
            except (TypeError, ValueError) as exc:
                raise DatasetError(f"column '{name}' cannot be written: {exc}", where=str(path),
                                   hint="unknown fields must hold JSON-compatible values") from None
            array = pa.array(encoded, type=pa.string())
        arrays[name] = array
    metadata = {JSON_COLUMNS_KEY: json.dumps(json_columns).encode()}
    table = pa.table(arrays, metadata=metadata) if arrays else pa.table({}).replace_schema_metadata(metadata)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def read_parquet(path: Path) -> Iterator[RawRow]:
    """One ``RawRow`` per row, located ``file[row N]`` (N counts from 0)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not path.is_file():
        raise DatasetError("file not found", where=str(path), hint="check the path")
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise DatasetError(f"cannot read the Parquet file: {exc}", where=str(path),
                           hint="check that the file is a complete Parquet file") from None
    metadata = table.schema.metadata or {}
    try:
        json_columns = set(json.loads(metadata.get(JSON_COLUMNS_KEY, b"[]")))
    except ValueError:
        json_columns = set()
    for index, stored in enumerate(table.to_pylist()):
        row, error = {}, None
        for name, value in stored.items():
            if name not in json_columns:
                row[name] = value
            elif value is not None:  # null: the row lacked this field
                try:
                    row[name] = json.loads(value)
                except (TypeError, ValueError) as exc:
                    error = f"column '{name}' (stored as JSON text) holds invalid JSON: {exc}"
        instance_id = row.get("instance_id")
        yield RawRow(f"{path}[row {index}]", data=None if error else row, error=error,
                     instance_id=instance_id if isinstance(instance_id, str) and instance_id else None)
