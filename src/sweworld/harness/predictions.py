"""Predictions in SWE-bench's format: ``{instance_id, model_name_or_path, model_patch}``.

Accepted: a JSONL file, a JSON list, a JSON object keyed by instance id, or the word ``gold``
(the dataset's own patches, as SWE-bench allows).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ValidationError

from sweworld.core import names
from sweworld.core.errors import DatasetError
from sweworld.core.types import Task

GOLD = "gold"
LISTED = 10


class Prediction(BaseModel):
    """One model patch for one instance (``model_patch=None`` is SWE-bench's 'patch is None')."""

    instance_id: str
    model_name_or_path: str = "unknown"
    model_patch: str | None = None


def model_dir_name(model: str) -> str:
    """SWE-bench's directory name for a model (slashes become double underscores); DatasetError when
    the name cannot be a directory (see ``sweworld.core.names``)."""
    return names.model_dir(model)


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
    if isinstance(data, dict) and "instance_id" in data and "model_patch" in data:
        data = [data]  # one prediction: SWE-agent's per-instance <id>.pred
    elif isinstance(data, dict):
        data = [{"instance_id": key, **value} if isinstance(value, dict) else value
                for key, value in data.items()]
    if not isinstance(data, list):
        raise DatasetError("predictions must be a list, an object keyed by instance id, one prediction object "
                           "(SWE-agent's .pred), or JSONL", where=str(path))
    return [(f"{path}[{index}]", row) for index, row in enumerate(data)]


def load_predictions(source: str | Path, tasks: list[Task]) -> dict[str, Prediction]:
    """Every prediction keyed by instance id, for an instance of ``tasks`` or not: each counts as
    submitted (as in SWE-bench); ``unmatched`` names those whose instance is not in ``tasks``.

    Raises:
        DatasetError: the file is missing or malformed (located file:line), a model name cannot name a
            directory, an instance has two predictions, or no prediction is for an instance of ``tasks``.
    """
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
        names.model_dir(prediction.model_name_or_path, where=where)
        found[prediction.instance_id] = prediction
    if not found:
        raise DatasetError("no prediction in the file", where=str(path),
                           hint="a prediction is {instance_id, model_name_or_path, model_patch}")
    stray = unmatched(found, tasks)
    if len(stray) == len(found):
        raise DatasetError(f"none of the {len(found)} predictions is for an instance of the dataset: "
                           f"{listing(stray)}", where=str(path),
                           hint="check --dataset, --split and --instance-ids against the predictions' instance ids")
    return found


def unmatched(predictions: dict[str, Prediction], tasks: list[Task]) -> list[str]:
    """The predictions' instance ids that are not instances of ``tasks``, sorted."""
    wanted = {task.instance_id for task in tasks}
    return sorted(set(predictions) - wanted)


def listing(ids: list[str], limit: int = LISTED) -> str:
    """Up to ``limit`` ids, comma-separated, then how many more."""
    return ", ".join(ids[:limit]) + (f" ... ({len(ids) - limit} more)" if len(ids) > limit else "")


def model_name(predictions: dict[str, Prediction]) -> str:
    models = sorted({p.model_name_or_path for p in predictions.values()})
    if len(models) > 1:
        raise DatasetError(f"predictions of several models in one file: {', '.join(models)}",
                           hint="evaluate one model per run (split the file by model_name_or_path)")
    return models[0] if models else "unknown"
