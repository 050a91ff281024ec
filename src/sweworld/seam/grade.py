"""``grade``: the one place a patch of an episode becomes a verdict and a reward.

Every seam (gymnasium, inspect, Harbor, OpenHands, OpenEnv, TRL, verl, SkyRL), the rollout runner,
the trainers' reward functions and the regression verifier call it: it builds the ``Prediction``,
chooses the log directory (under ``logs``, kept; or a temporary one, removed once graded), asks the
backend, and computes the reward (``seam.reward``: one meaning for all).
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from uuid import uuid4

from sweworld.core import names
from sweworld.core.errors import InfraError, ModelError, WorldError
from sweworld.harness.predictions import Prediction
from sweworld.harness.report import REPORT_FILE, InstanceReport
from sweworld.parallel import shipping
from sweworld.seam.reward import reward_of

if TYPE_CHECKING:
    from sweworld.core.protocols import Backend
    from sweworld.core.types import Task


@dataclass(frozen=True)
class Graded:
    """A graded patch: ``reward`` (0.0 when there is no outcome), ``resolved`` (None without a
    verdict), the backend's ``report`` (None when the evaluation raised), ``error`` (why there is no
    outcome: an infrastructure failure, not the policy's doing) and ``log_dir`` (where the logs
    stay; None when they were removed)."""

    reward: float
    resolved: bool | None
    report: InstanceReport | None
    error: str | None = None
    log_dir: Path | None = None

    @property
    def failed(self) -> bool:
        """No outcome: the evaluation failed for a reason that is not the patch's."""
        return self.error is not None

    @property
    def outcome(self) -> str:
        """What ``reward`` is: ``"infra"`` (an infrastructure 0: the world, the sandbox or the world
        model failed, not a verdict on the patch) or ``"verdict"`` (the patch's own reward)."""
        return "infra" if self.failed else "verdict"


def prediction(task: Task, patch: str | None, model: str = "sweworld") -> Prediction:
    """SWE-bench's prediction of ``patch`` for ``task``, in the name of ``model``."""
    return Prediction(instance_id=task.instance_id, model_name_or_path=model, model_patch=patch)


def grade(backend: Backend, task: Task, patch: str | None, *, model: str = "sweworld", logs: Path | str | None = None,
          name: str | None = None, timeout: float | None = None, binary: bool = False,
          staged: bool = False) -> Graded:
    """Grade ``patch`` for ``task`` with ``backend``.

    Logs go to ``logs/<name>`` (``name`` defaults to ``<instance_id>.<8 hex digits>``, unique across
    processes sharing ``logs``) and stay; without ``logs`` they go to a temporary directory removed
    once graded. ``staged``: the directory is one a run item's files are shipped from
    (``shipping.stage``, ``report.json`` written last). ``binary``: the reward is 1.0 resolved / 0.0
    not, on every backend. An evaluation that raises an infrastructure, world or world-model error,
    or reports one (a world that cannot run: ``harness.worldcheck``), has no outcome: reward 0.0,
    ``error`` set, ``outcome == "infra"``.
    """
    predicted = prediction(task, patch, model)
    root = Path(logs) if logs is not None else Path(tempfile.mkdtemp(prefix="sweworld-grade-"))
    log_dir = root / names.check(name or f"{task.instance_id}.{uuid4().hex[:8]}", what="instance_id")
    if staged:
        log_dir = shipping.stage(log_dir, last=REPORT_FILE)
    try:
        report = backend.evaluate(task, predicted, log_dir, **({} if timeout is None else {"timeout": timeout}))
    except (InfraError, WorldError, ModelError) as exc:
        return Graded(reward=0.0, resolved=None, report=None, error=f"evaluation: {type(exc).__name__}: {exc}",
                      log_dir=log_dir if logs is not None else None)
    finally:
        if logs is None:
            shutil.rmtree(root, ignore_errors=True)
    reward = reward_of(report, binary=binary)
    error = None if reward is not None else f"evaluation: {report.error or 'infrastructure failure'}"
    return Graded(reward=reward or 0.0, resolved=bool(report.resolved), report=report, error=error,
                  log_dir=log_dir if logs is not None else None)
