"""Best-of-n selection with a verifier, and the best@k curve next to pass@k.

Per instance, among its n samples with an outcome (failed samples excluded): the pick is the
highest score; ties go to the fewest steps, then the lowest sample index (then run order).

best@k: the expected resolve rate when the verifier chooses among k of the n samples, averaged over
the C(n, k) subsets, computed exactly: the subset's best score falls in the score group g (a_g
samples score higher, m_g as high) with probability (C(n - a_g, k) - C(n - a_g - m_g, k)) / C(n, k),
and tied samples are exchangeable, so the pick then resolves with g's mean reward. It is never
above pass@k (``rollout.metrics.pass_at_k``, same k); a perfect verifier reaches it; a constant one
gives the mean resolve rate. Both are averaged over instances, k = 1 .. the smallest n, and rounded
to 4 decimals as ``rollout.metrics.summarize`` rounds pass@k.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from itertools import groupby
from math import comb

from pydantic import BaseModel, Field

from sweworld.core.protocols import Preparable
from sweworld.core.types import Task
from sweworld.runs.metrics import pass_at_k
from sweworld.trajectory import Trajectory
from sweworld.verify.verifiers import Verifier


class Scored(BaseModel):
    run: str = ""
    trajectory: Trajectory
    score: float

    @property
    def resolved(self) -> bool:
        return self.trajectory.reward == 1.0


class Selection(BaseModel):
    """The outcome of ``select``: the pick per instance and the curves."""

    verifier: str
    instances: int = 0
    samples: int = Field(default=0, description="Samples with an outcome (failed ones excluded).")
    failed: int = Field(default=0, description="Failed samples left out.")
    mean_resolve: float = 0.0
    selected_resolve: float = Field(default=0.0, description="Share of instances whose pick resolves.")
    pass_at: dict[int, float] = Field(default_factory=dict)
    best_at: dict[int, float] = Field(default_factory=dict)
    picks: dict[str, Scored] = Field(default_factory=dict)


def _rank(item: tuple[int, Scored]) -> tuple[float, int, int, int]:
    order, scored = item
    return -scored.score, len(scored.trajectory.steps), scored.trajectory.sample, order


def pick(group: Sequence[Scored]) -> Scored:
    """The highest score; ties: fewest steps, then sample index, then the earlier one."""
    return min(enumerate(group), key=_rank)[1]


def best_at_k(scores: Sequence[float], rewards: Sequence[float], k: int) -> float:
    """Expected reward of the verifier's pick among k of the n samples (module docstring)."""
    n = len(scores)
    if not 1 <= k <= n:
        raise ValueError(f"best@{k} needs at least {k} samples, got {n}")
    ordered = sorted(zip(scores, rewards, strict=True), key=lambda pair: -pair[0])
    total, above = 0.0, 0
    for _, tied in groupby(ordered, key=lambda pair: pair[0]):
        group = [reward for _, reward in tied]
        reach = comb(n - above, k) - comb(n - above - len(group), k)
        total += reach * sum(group) / len(group)
        above += len(group)
    return total / comb(n, k)


def score_all(found: Sequence[tuple[str, Trajectory]], verifier: Verifier,
              tasks: Mapping[str, Task] | None = None) -> list[Scored]:
    """Scores of every sample with an outcome, in the order given. A verifier that looks at the
    samples together (``prepare``: self-consistency, the hybrid rule) sees them all first."""
    tasks = tasks or {}
    kept = [(run, t) for run, t in found if not t.failed]
    if isinstance(verifier, Preparable):
        verifier.prepare([t for _, t in kept], tasks)
    return [Scored(run=run, trajectory=t, score=verifier.score(tasks.get(t.instance_id), t)) for run, t in kept]


def select(found: Sequence[tuple[str, Trajectory]], verifier: Verifier,
           tasks: Mapping[str, Task] | None = None) -> Selection:
    """Score, pick per instance, and compute pass@k and best@k (module docstring)."""
    scored = score_all(found, verifier, tasks)
    result = Selection(verifier=getattr(verifier, "name", type(verifier).__name__),
                       failed=sum(t.failed for _, t in found), samples=len(scored))
    by_instance: dict[str, list[Scored]] = defaultdict(list)
    for item in scored:
        by_instance[item.trajectory.instance_id].append(item)
    if not by_instance:
        return result
    result.instances = len(by_instance)
    result.picks = {iid: pick(group) for iid, group in sorted(by_instance.items())}
    result.mean_resolve = sum(s.resolved for s in scored) / len(scored)
    result.selected_resolve = sum(s.resolved for s in result.picks.values()) / len(by_instance)
    for k in range(1, min(len(g) for g in by_instance.values()) + 1):
        groups = list(by_instance.values())
        passed = sum(pass_at_k(len(g), sum(s.resolved for s in g), k) for g in groups)
        best = sum(best_at_k([s.score for s in g], [float(s.resolved) for s in g], k) for g in groups)
        result.pass_at[k], result.best_at[k] = round(passed / len(groups), 4), round(best / len(groups), 4)
    return result


def predictions(selection: Selection, model: str | None = None) -> list[dict[str, str]]:
    """SWE-bench predictions: the picked patch per instance."""
    name = model or f"best-of-n-{selection.verifier}"
    return [{"instance_id": iid, "model_name_or_path": name, "model_patch": s.trajectory.patch}
            for iid, s in selection.picks.items()]


def curve_rows(selection: Selection) -> list[tuple[int, float, float]]:
    """(k, pass@k, best@k) for k = 1 .. n."""
    return [(k, selection.pass_at[k], selection.best_at[k]) for k in selection.pass_at]
