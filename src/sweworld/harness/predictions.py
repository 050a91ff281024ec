"""Predictions in SWE-bench's format: ``{instance_id, model_name_or_path, model_patch}``.

Accepted: a JSONL file, a JSON list, a JSON object keyed by instance id, or the word ``gold``
(the dataset's own patches, as SWE-bench allows).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel, ValidationError

from sweworld.errors import DatasetError
from sweworld.types import Task

GOLD = "gold"


class Prediction(BaseModel):
    """One model patch for one instance (``model_patch=None`` is SWE-bench's 'patch is None')."""

    instance_id: str
    model_name_or_path: str = "unknown"
    model_patch: str | None = None


def model_dir_name(model: str) -> str:
    """SWE-bench's directory name for a model (slashes become double underscores)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", model.replace("/", "__")) or "unknown"


def _rows(path: Path) -> list[tuple[str, dict]]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        rows = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rows.append((f"{path}:{number}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise DatasetError(f"invalid JSON: {exc.msg}", where=f"{path}:{number}",
                                   hint="each line must be one prediction object") from exc
        return rows
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"invalid JSON: {exc.msg}", where=f"{path}:{exc.lineno}",
                           hint="give a JSON list of predictions, or a .jsonl file") from exc
    if isinstance(data, dict):
        data = [{"instance_id": key, **value} if isinstance(value, dict) else value
                for key, value in data.items()]
    if not isinstance(data, list):
        raise DatasetError("predictions must be a list, an object keyed by instance id, or JSONL", where=str(path))
    return [(f"{path}[{index}]", row) for index, row in enumerate(data)]


def load_predictions(source: str | Path, tasks: list[Task]) -> dict[str, Prediction]:
    """Predictions keyed by instance id; only instances of ``tasks`` are kept."""
    wanted = {task.instance_id for task in tasks}
    if str(source) == GOLD:
        return {t.instance_id: Prediction(instance_id=t.instance_id, model_name_or_path=GOLD, model_patch=t.patch)
                for t in tasks}
    path = Path(source)
    if not path.is_file():
        raise DatasetError(f"predictions file not found: {path}",
                           hint="pass a .json/.jsonl file of {instance_id, model_name_or_path, model_patch}, "
                           "or 'gold'")
    found: dict[str, Prediction] = {}
    for where, row in _rows(path):
        try:
            prediction = Prediction.model_validate(row)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "row"
            raise DatasetError(f"bad prediction: field '{field}': {first['msg']}", where=where,
                               hint="a prediction is {instance_id, model_name_or_path, model_patch}") from exc
        if prediction.instance_id in found:
            raise DatasetError(f"duplicate prediction for {prediction.instance_id}", where=where,
                               hint="keep one prediction per instance")
        if prediction.instance_id in wanted:
            found[prediction.instance_id] = prediction
    return found


def model_name(predictions: dict[str, Prediction]) -> str:
    names = sorted({p.model_name_or_path for p in predictions.values()})
    if len(names) > 1:
        raise DatasetError(f"predictions of several models in one file: {', '.join(names)}",
                           hint="evaluate one model per run (split the file by model_name_or_path)")
    return names[0] if names else "unknown"
