"""Rewards of completions, for trainers that score text rather than run episodes.

``SWEReward`` gives ``seam.grade``'s reward to trainers that score completions: TRL's ``reward_funcs``
signature (``(prompts, completions, instance_id=[...], **columns) -> list[float]``) and verl's
``compute_score(data_source, solution_str, ground_truth, extra_info)``. A completion is a patch,
or text holding one (a fenced ``diff`` block or a ``diff --git`` section).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sweworld.core.config import timeouts
from sweworld.seam.grade import grade
from sweworld.seam.tasks import TaskIndex

if TYPE_CHECKING:
    from sweworld.core.protocols import Backend
    from sweworld.core.types import Task

_FENCED = re.compile(r"```(?:diff|patch)?[ \t]*\n(.*?)```", re.DOTALL)


def patch_of(completion: str | list[dict[str, Any]]) -> str:
    """The patch in a completion: the text itself when it is a diff, else its first fenced diff block
    or ``diff --git`` section; "" when none (an empty patch: reward 0)."""
    if isinstance(completion, list):  # chat messages: the last one's content
        completion = str(completion[-1].get("content", "")) if completion else ""
    text = completion.strip("\n")
    if text.startswith(("diff --git", "--- ")):
        return text + "\n"
    fenced = _FENCED.search(completion)
    if fenced and ("\n+++ " in fenced.group(1) or fenced.group(1).startswith(("diff --git", "--- "))):
        return fenced.group(1)
    start = completion.find("diff --git")
    return completion[start:].rstrip("\n") + "\n" if start >= 0 else ""


class SWEReward:
    """Grades completions of ``tasks`` with ``backend``; evaluation logs go to ``log_dir`` (default a
    temporary directory)."""

    __name__ = "sweworld_reward"  # TRL names a reward function's column after it

    def __init__(self, backend: Backend, tasks: list[Task], *, log_dir: str | Path | None = None,
                 timeout: float = timeouts.EVALUATION):
        self.backend = backend
        self.tasks = TaskIndex(tasks)
        self.log_dir = Path(log_dir or tempfile.mkdtemp(prefix="sweworld-reward-"))
        self.timeout = timeout
        self._calls = 0

    def score(self, instance_id: str, completion: str | list[dict[str, Any]]) -> float:
        """The reward of one completion for ``instance_id`` (0.0 when it cannot be graded)."""
        task = self.tasks.get(instance_id)
        if task is None:
            raise KeyError(f"{instance_id!r} is not one of the reward's tasks")
        self._calls += 1
        return grade(self.backend, task, patch_of(completion), model="sweworld-reward", logs=self.log_dir,
                     name=f"{instance_id}.{self._calls}", timeout=self.timeout).reward

    def __call__(self, prompts: list[Any], completions: list[Any], instance_id: list[str] | None = None,
                 **columns: Any) -> list[float]:
        """TRL's reward function: one reward per completion; ``instance_id`` is the dataset's column."""
        if instance_id is None:
            raise ValueError("the dataset needs an 'instance_id' column (TRL passes it to reward functions)")
        return [self.score(i, c) for i, c in zip(instance_id, completions, strict=True)]

    def compute_score(self, data_source: str, solution_str: str, ground_truth: str,
                      extra_info: dict[str, Any] | None = None) -> float:
        """verl's custom reward function: ``ground_truth`` (or ``extra_info["instance_id"]``) names the task."""
        return self.score((extra_info or {}).get("instance_id", ground_truth), solution_str)


__all__ = ["SWEReward", "patch_of"]
