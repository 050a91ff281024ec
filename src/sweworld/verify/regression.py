"""The ``tests`` verifier and R2E-Gym's hybrid rule.

``tests``: the final diff graded on the task's regression tests only (PASS_TO_PASS) through a
Backend (default: a real one, where the environment can be built): the task is evaluated with an
empty FAIL_TO_PASS (those tests are the label: a verifier never runs them) and the score is the
share of PASS_TO_PASS tests that pass (1.0 when there are none and the diff applies; 0 for an empty
diff, one that does not apply, or a run that could not be graded). Cached per (instance, patch).

``hybrid`` (R2E-Gym): per instance, keep the top max(3, half) of the samples by a base verifier's
score (all when there are 3 or fewer), then rank the kept ones by regression tests passed, ties by
the base score; the others rank below every kept one by their base score. Regression tests run for
the kept samples only. The ranking is computed over all n samples of an instance (``prepare``), so
its best@k for k < n is that ranking's, not the rule re-applied to each k-subset: exact at k = n.
"""

from __future__ import annotations

import math
import tempfile
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sweworld.core.config import timeouts
from sweworld.core.errors import ConfigError
from sweworld.core.protocols import Preparable
from sweworld.core.registry import refuse_unknown
from sweworld.core.types import Task
from sweworld.seam import grade
from sweworld.trajectory import Trajectory
from sweworld.verify.verifiers import HYBRID_BASES, PatchVerifier, create_verifier, verifier_options


class TestsVerifier(PatchVerifier):
    name = "tests"
    __test__ = False  # not a pytest class

    def __init__(self, backend: Any = None, *, log_dir: str | Path | None = None, timeout: float = timeouts.EVALUATION):
        super().__init__()
        if backend is None:
            from sweworld.backends import make_backend
            backend = make_backend("real")
        self.backend, self.timeout = backend, timeout
        self._tmp = None if log_dir else tempfile.TemporaryDirectory(prefix="sweworld-verify-")
        self.log_dir = Path(log_dir or self._tmp.name)
        self.runs = 0

    def score_patch(self, task: Task, patch: str) -> float:
        self.runs += 1
        regression = task.model_copy(update={"FAIL_TO_PASS": []})
        report = grade(self.backend, regression, patch, model="verifier-tests", logs=self.log_dir,
                       name=f"{task.instance_id}.{self.runs}", timeout=self.timeout).report
        if report is None or not report.patch_successfully_applied or report.tests_status is None:
            return 0.0
        status = report.tests_status.get("PASS_TO_PASS") or {}
        passed, failed = len(status.get("success", [])), len(status.get("failure", []))
        return passed / (passed + failed) if passed + failed else 1.0


class HybridVerifier:
    name = "hybrid"
    needs_tasks = True

    def __init__(self, base: Any, tests: Any, *, keep_at_least: int = 3):
        self.base, self.tests, self.keep_at_least = base, tests, keep_at_least
        self.name = f"hybrid-{getattr(base, 'name', 'base')}"
        self._scores: dict[tuple[str, int], float] = {}

    def prepare(self, samples: Sequence[Trajectory], tasks: Mapping[str, Task] | None = None) -> None:
        tasks = tasks or {}
        if isinstance(self.base, Preparable):
            self.base.prepare(samples, tasks)
        groups: dict[str, list[Trajectory]] = defaultdict(list)
        for t in samples:
            groups[t.instance_id].append(t)
        self._scores = {}
        for iid, group in groups.items():
            self._scores.update(self._ranking(tasks.get(iid), group))

    def _ranking(self, task: Task | None, group: list[Trajectory]) -> dict[tuple[str, int], float]:
        base = {t.key: self.base.score(task, t) for t in group}
        ranked = sorted(group, key=lambda t: -base[t.key])
        keep = ranked[:max(min(self.keep_at_least, len(group)), math.ceil(len(group) / 2))]
        scores = {t.key: base[t.key] * 1e-5 for t in group}
        for t in keep:  # kept: above every other; regression share first (4 decimals), then the base score
            scores[t.key] += 3.0 + round(self.tests.score(task, t), 4)
        return scores

    def score(self, task: Task | None, trajectory: Trajectory) -> float:
        if trajectory.key not in self._scores:  # not prepared: a group of one
            return self._ranking(task, [trajectory])[trajectory.key]
        return self._scores[trajectory.key]


def hybrid_verifier(base: str = "swr", **options: Any) -> HybridVerifier:
    """``create_verifier("hybrid", base=..., ...)``: ``options`` go to the base verifier and to
    ``tests``, each getting those it takes; one that neither takes is a ``ConfigError``."""
    if base not in HYBRID_BASES:
        raise ConfigError(f"the hybrid rule cannot rank by {base!r}", hint=f"give --hybrid-base {', '.join(HYBRID_BASES)}")
    base_takes, tests_takes = set(verifier_options(base)), set(verifier_options("tests"))
    refuse_unknown(f"the hybrid verifier (base {base})", options, ["base", *sorted(base_takes | tests_takes)])
    return HybridVerifier(create_verifier(base, **{k: v for k, v in options.items() if k in base_takes}),
                          create_verifier("tests", **{k: v for k, v in options.items() if k in tests_takes}))


hybrid_verifier.needs_tasks = True  # type: ignore[attr-defined]
