"""Names that become one path component: instance ids, run ids, model names, sample directories.

One rule for all of them (``problem``): a non-empty name of at most ``MAX_BYTES`` bytes (UTF-8) with
no ``/``, no ``\\``, no control character (NUL included), and not ``.`` or ``..``. Every caller that
joins such a name to a path checks it here first (``check``), so that a hostile dataset row,
prediction or option cannot write outside the directory it belongs in. A model name is first mapped
to a directory name as SWE-bench does (``org/model`` -> ``org__model``, ``model_dir``).
"""

from __future__ import annotations

import re

from sweworld.core.errors import DatasetError, SWEWorldError

#: Room for two names and a suffix in one file name (``<model>.<run_id>.json.tmp`` <= 255 bytes).
MAX_BYTES = 120
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_NOT_IN_DIR_NAMES = re.compile(r"[^A-Za-z0-9._-]")


def problem(name: str) -> str | None:
    """Why ``name`` cannot be one path component, or None when it can."""
    if not name:
        return "it is empty"
    if name in (".", ".."):
        return f"'{name}' names a directory, not an entry in it"
    for char, what in (("/", "a '/'"), ("\\", "a '\\'")):
        if char in name:
            return f"it contains {what} (it would be a path, not a name)"
    if _CONTROL.search(name):
        return "it contains a control character (NUL, newline...)"
    if len(name.encode("utf-8")) > MAX_BYTES:
        return f"it is longer than {MAX_BYTES} bytes"
    return None


def check(name: str, *, what: str, where: str | None = None, hint: str | None = None,
          error: type[SWEWorldError] = DatasetError) -> str:
    """``name`` when it is safe as one path component; else ``error`` saying why (``what``: e.g. 'instance_id')."""
    reason = problem(name)
    if reason is None:
        return name
    raise error(f"{what} {name!r} cannot name a file or directory: {reason}", where=where,
                hint=hint or f"use a {what} made of letters, digits, '.', '_' and '-' "
                f"(at most {MAX_BYTES} bytes), e.g. owner__repo-1234")


def model_dir(model: str, *, where: str | None = None) -> str:
    """SWE-bench's directory name for a model (``/`` -> ``__``; other characters outside
    ``[A-Za-z0-9._-]`` -> ``_``); DatasetError when even that is no name (``..``, too long)."""
    name = _NOT_IN_DIR_NAMES.sub("_", model.replace("/", "__")) or "unknown"
    reason = problem(name)
    if reason is None:
        return name
    raise DatasetError(f"model_name_or_path {model!r} cannot name a directory ({name!r}): {reason}", where=where,
                       hint="give model_name_or_path a name such as 'org/model-7b'")
