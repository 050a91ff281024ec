"""Published verdicts as evaluations: rows of (instance_id, patch, real verdict) from another harness
(SWE-bench's Docker runs of published agents) read as ``EvalTrace`` records, so the embedded SWR
trains and is measured on them as on ``sweworld world collect``'s own evaluations.

A row (JSON lines) holds ``instance_id``, the patch as ``model_patch`` (or ``patch``), the verdict as
``docker_resolved`` (or ``resolved``), and who wrote it as ``model_name_or_path`` (optional). Its
task comes from the dataset rows given; a row naming an unknown instance, or lacking the verdict,
is one ``DatasetError`` naming the file and line. The SWR context holds no test files (the rows do
not carry them; a served SWR judged on these sees the patch, the gold patch and the test names).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from sweworld.core.errors import DatasetError
from sweworld.core.types import Task
from sweworld.world.context import ContextLimits, SWRContext, task_info
from sweworld.world.traces import EvalTrace


def _verdict(raw: dict) -> bool | None:
    for key in ("docker_resolved", "resolved"):
        if isinstance(raw.get(key), bool):
            return raw[key]
    return None


def verdict_traces(path: str | Path, tasks: Iterable[Task]) -> list[EvalTrace]:
    """The rows of ``path`` as evaluations of ``tasks`` (see the module docstring)."""
    by_id = {t.instance_id: t for t in tasks}
    out = []
    limits = ContextLimits()
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            raw = json.loads(line)
        except ValueError as exc:
            raise DatasetError(f"{where}: not JSON ({exc})", hint="one JSON object per line") from exc
        task, resolved = by_id.get(raw.get("instance_id", "")), _verdict(raw)
        if task is None:
            raise DatasetError(f"{where}: instance {raw.get('instance_id')!r} is not in the dataset",
                               hint="pass the dataset the verdicts were graded on (--dataset)")
        if resolved is None:
            raise DatasetError(f"{where}: no verdict ('docker_resolved' or 'resolved', true/false)",
                               hint="each row needs the real harness's verdict")
        patch = raw.get("model_patch") or raw.get("patch") or ""
        context = SWRContext(task=task_info(task, limits), test_command="", patch=patch, gold_patch=task.patch,
                             fail_to_pass=list(task.FAIL_TO_PASS), pass_to_pass=list(task.PASS_TO_PASS))
        out.append(EvalTrace(task=task.model_dump(), patch=patch, context=context, resolved=resolved,
                             report={}, backend="published", agent=str(raw.get("model_name_or_path") or "")))
    return out
