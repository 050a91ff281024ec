"""The episode core under every framework seam: one grade, one reward (``seam.reward``).

- ``grade(backend, task, patch, ...) -> Graded``: the only place a prediction is built, a log
  directory chosen and kept or removed, and a reward computed;
- ``prediction(task, patch, model)``: SWE-bench's prediction of a patch (the one builder);
- ``reward_of(report, binary=False)``: the one meaning of reward (see ``sweworld.seam.reward``);
- ``seam.tasks``: ``TaskIndex`` and ``index_of`` (tasks by id or image, a dataset read once per process);
- ``seam.prompt``: the one prompt builder (styles ``statement``, ``tools``, ``agent``);
- ``seam.session``: ``Session`` (open, call a tool, diff, close);
- ``seam.completions``: ``SWEReward`` and ``patch_of`` (trainers that score completions).
"""

from __future__ import annotations

from sweworld.seam.grade import Graded, grade, prediction
from sweworld.seam.reward import reward_of

__all__ = ["Graded", "grade", "prediction", "reward_of"]
