"""Agreement of a run's verdicts with reference verdicts (e.g. SWE-bench's Docker harness).

A reference file is JSON, one of:

- ``{instance_id: true|false}``;
- ``{instance_id: {KEY: true|false, ...}}`` where KEY is chosen with ``FILE:KEY``; without it,
  ``gold_resolved`` for the gold predictions, else ``resolved``, else the one ``*_resolved`` key
  other than ``gold_resolved`` (e.g. ``{"gold_resolved": .., "sweagent_resolved": ..}``);
- a SWE-bench run summary (``resolved_ids`` + ``submitted_ids``/``completed_ids``).

A dataset may carry them too: rows with ``gold_resolved`` / ``resolved`` / ``<name>_resolved``
fields (kept as extra fields of the task) give the reference of a run without ``--compare-to``
(``verdicts_from_tasks``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sweworld.core.errors import DatasetError


def split_spec(spec: str) -> tuple[Path, str | None]:
    """``FILE`` or ``FILE:KEY`` -> (path, key)."""
    path, _, key = spec.partition(":") if not Path(spec).is_file() and ":" in spec else (spec, "", "")
    return Path(path), key or None


def _pick(entry: dict[str, Any], key: str | None, gold: bool, where: str) -> bool:
    if key is None:
        if gold and "gold_resolved" in entry:
            key = "gold_resolved"
        elif "resolved" in entry:
            key = "resolved"
        else:
            others = [k for k in entry if k.endswith("_resolved") and k != "gold_resolved"]
            if len(others) != 1:
                raise DatasetError(f"{where}: cannot tell which verdict to compare with (keys {sorted(entry)})",
                                   hint="name it: --compare-to FILE:KEY")
            key = others[0]
    if key not in entry:
        raise DatasetError(f"{where}: no key {key!r} (keys {sorted(entry)})", hint="check --compare-to FILE:KEY")
    return bool(entry[key])


def load_verdicts(spec: str, *, gold: bool = False) -> dict[str, bool]:
    """instance id -> reference verdict (resolved or not) from ``FILE[:KEY]``."""
    path, key = split_spec(spec)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{path}: cannot read reference verdicts: {exc}",
                           hint="give a JSON file of {instance_id: bool | {KEY: bool}} or a SWE-bench run summary") from exc
    if isinstance(data, dict) and "resolved_ids" in data:
        ids = data.get("submitted_ids") or data.get("completed_ids") or []
        resolved = set(data["resolved_ids"])
        return {i: i in resolved for i in ids}
    if not isinstance(data, dict):
        raise DatasetError(f"{path}: reference verdicts must be a JSON object keyed by instance id")
    return {str(i): v if isinstance(v, bool) else _pick(v, key, gold, f"{path}: {i}") for i, v in data.items()}


def verdicts_from_tasks(tasks: list[Any], *, gold: bool) -> dict[str, bool] | None:
    """Reference verdicts carried by the dataset's rows (extra fields named like a verdicts file's
    keys); None when no row carries one or the key is ambiguous (several agents' verdicts)."""
    entries = {t.instance_id: {k: v for k, v in (t.model_extra or {}).items()
                               if (k == "resolved" or k.endswith("_resolved")) and isinstance(v, bool)}
               for t in tasks}
    entries = {i: e for i, e in entries.items() if e}
    if not entries:
        return None
    try:
        return {i: _pick(e, None, gold, f"dataset row {i}") for i, e in entries.items()}
    except DatasetError:
        return None


@dataclass
class Agreement:
    """How a run's verdicts compare with the reference on the instances both have."""

    agree: list[str] = field(default_factory=list)
    ours_only: list[str] = field(default_factory=list)
    """Resolved here, not in the reference."""
    reference_only: list[str] = field(default_factory=list)
    """Resolved in the reference, not here."""
    not_graded: list[str] = field(default_factory=list)
    """In the reference, but with no verdict here (infrastructure error, not evaluated)."""

    @property
    def compared(self) -> int:
        return len(self.agree) + len(self.ours_only) + len(self.reference_only)

    def line(self) -> str:
        text = f"agreement with the reference: {len(self.agree)}/{self.compared}"
        if self.ours_only:
            text += f"; resolved here only: {', '.join(self.ours_only)}"
        if self.reference_only:
            text += f"; resolved in the reference only: {', '.join(self.reference_only)}"
        if self.not_graded:
            text += f"; not graded here: {', '.join(self.not_graded)}"
        return text


def compare(ours: dict[str, bool | None], reference: dict[str, bool]) -> Agreement:
    """``ours``: instance id -> resolved (None: no verdict). Only ids of ``ours`` are compared."""
    result = Agreement()
    for instance_id in sorted(ours):
        if instance_id not in reference:
            continue
        mine, theirs = ours[instance_id], reference[instance_id]
        if mine is None:
            result.not_graded.append(instance_id)
        elif mine == theirs:
            result.agree.append(instance_id)
        else:
            (result.ours_only if mine else result.reference_only).append(instance_id)
    return result
