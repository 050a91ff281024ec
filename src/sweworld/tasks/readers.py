"""Read raw rows, each with its location, from ``.json`` and ``.jsonl`` files.

``.jsonl``: one object per line, blank lines ignored; a line that is not valid JSON becomes a row with
an ``error`` (located ``file:line``) and reading goes on. ``.json``: a list of objects (each located
at the line where it starts), a single object, or ``{"instances": [...]}``. A ``.json`` file that is
not valid JSON has no row boundaries to recover from, so it raises at once.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path

from sweworld.core.errors import DatasetError
from sweworld.tasks.rows import RawRow, sniff_instance_id

_WS = re.compile(r"[ \t\n\r]*")


def data_suffix(path: Path) -> str:
    """The format suffix, lower-cased: ``.jsonl``, ``.json``, ``.parquet``, or with ``.gz`` appended."""
    suffixes = [s.lower() for s in path.suffixes[-2:]]
    if suffixes[-1:] == [".gz"] and len(suffixes) == 2:
        return "".join(suffixes)
    return path.suffix.lower()


def read_bytes(path: Path) -> bytes:
    """The file's bytes (decompressed when its name ends with ``.gz``)."""
    try:
        data = path.read_bytes()
        return gzip.decompress(data) if path.name.lower().endswith(".gz") else data
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise DatasetError(f"not a valid gzip file: {exc}", where=str(path),
                           hint="decompress it, or name it without .gz") from None
    except FileNotFoundError:
        raise DatasetError("file not found", where=str(path),
                           hint="check the path (relative paths are resolved from the current directory)") from None
    except OSError as exc:
        raise DatasetError(f"cannot read the file: {exc.strerror or exc}", where=str(path),
                           hint="check the path and its permissions") from None


def read_jsonl(path: Path) -> Iterator[RawRow]:
    """One ``RawRow`` per non-blank line, located ``file:line`` (1-based)."""
    data = read_bytes(path)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for lineno, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield RawRow(where, error=f"line is not valid UTF-8 ({exc.reason} at byte {exc.start})")
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            yield RawRow(where, error=f"invalid JSON: {exc.msg} (column {exc.colno})",
                         instance_id=sniff_instance_id(text))
            continue
        yield RawRow(where, data=obj)


class _Lines:
    """Character offset -> 1-based line number, for offsets visited in increasing order."""

    def __init__(self, text: str):
        self.text, self.pos, self.line = text, 0, 1

    def at(self, pos: int) -> int:
        self.line += self.text.count("\n", self.pos, pos)
        self.pos = pos
        return self.line


def _json_error(path: Path, exc: json.JSONDecodeError) -> DatasetError:
    return DatasetError(f"invalid JSON: {exc.msg} (column {exc.colno})", where=f"{path}:{exc.lineno}",
                        hint="fix the file; a .json dataset must be one valid JSON document "
                             "(a list of objects); for one object per line use .jsonl")


def read_json(path: Path) -> Iterator[RawRow]:
    """Rows of a ``.json`` file; list elements are located at the line where they start."""
    raw = read_bytes(path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"file is not valid UTF-8 ({exc.reason} at byte {exc.start})", where=str(path),
                           hint="save the file as UTF-8") from None
    start = _WS.match(text, 0).end()
    if start == len(text):
        raise DatasetError("empty file", where=str(path), hint="a .json dataset is a list of objects")
    if text[start] != "[":
        yield from _read_json_document(path, text)
        return
    yield from _read_json_array(path, text, start)


def _read_json_document(path: Path, text: str) -> Iterator[RawRow]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _json_error(path, exc) from None
    if isinstance(doc, dict) and isinstance(doc.get("instances"), list):
        for index, obj in enumerate(doc["instances"]):
            yield RawRow(f"{path}[instances][{index}]", data=obj)
    elif isinstance(doc, dict):
        yield RawRow(f"{path}:{_Lines(text).at(_WS.match(text, 0).end())}", data=doc)
    else:
        raise DatasetError(f"expected a list of objects, got {type(doc).__name__}", where=str(path),
                           hint="a .json dataset is a list of objects (or one object)")


def _read_json_array(path: Path, text: str, pos: int) -> Iterator[RawRow]:
    decoder = json.JSONDecoder()
    lines = _Lines(text)
    pos = _WS.match(text, pos + 1).end()
    if pos < len(text) and text[pos] == "]":
        pos += 1
    else:
        while True:
            try:
                obj, end = decoder.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                raise _json_error(path, exc) from None
            yield RawRow(f"{path}:{lines.at(pos)}", data=obj)
            pos = _WS.match(text, end).end()
            char = text[pos] if pos < len(text) else ""
            if char == ",":
                pos = _WS.match(text, pos + 1).end()
                continue
            if char == "]":
                pos += 1
                break
            exc = json.JSONDecodeError("Expecting ',' delimiter or ']'", text, pos)
            raise _json_error(path, exc)
    pos = _WS.match(text, pos).end()
    if pos != len(text):
        raise _json_error(path, json.JSONDecodeError("Extra data", text, pos))
