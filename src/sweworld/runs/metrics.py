"""Run metrics: resolve rate, empty-patch rate, stuck-in-loop rate (SWE-Gym), steps, tokens, pass@k;
failed samples (model or infrastructure) apart."""

from __future__ import annotations

from collections import Counter, defaultdict
from math import comb

from sweworld.trajectory import Trajectory


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimator of pass@k from n samples with c correct (Chen et al., 2021)."""
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples, got {n}")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def summarize(trajectories: list[Trajectory]) -> dict:
    """Rates over trajectories; pass@k averaged over instances for k up to the smallest sample count.
    Failed samples (model or infrastructure, ``Trajectory.failed``) are no outcome: only counted, by kind."""
    failed = Counter(t.error_kind or "unknown" for t in trajectories if t.failed)
    errors = {"errors": sum(failed.values()), **({"error_kinds": dict(sorted(failed.items()))} if failed else {})}
    trajectories = [t for t in trajectories if not t.failed]
    total = len(trajectories)
    if not total:
        return {"trajectories": 0, **errors}
    by_instance: dict[str, list[Trajectory]] = defaultdict(list)
    for traj in trajectories:
        by_instance[traj.instance_id].append(traj)
    k_max = min(len(group) for group in by_instance.values())
    pass_k = {}
    for k in range(1, k_max + 1):
        scores = [pass_at_k(len(g), sum(t.reward == 1.0 for t in g), k) for g in by_instance.values()]
        pass_k[f"pass@{k}"] = round(sum(scores) / len(scores), 4)
    return {
        "trajectories": total,
        "instances": len(by_instance),
        "resolve_rate": round(sum(t.reward == 1.0 for t in trajectories) / total, 4),
        "empty_patch_rate": round(sum(not t.patch.strip() for t in trajectories) / total, 4),
        "stuck_rate": round(sum(t.exit_status == "stuck" for t in trajectories) / total, 4),
        "mean_steps": round(sum(len(t.steps) for t in trajectories) / total, 2),
        "mean_tokens": round(sum(t.usage.get("prompt_tokens", 0) + t.usage.get("completion_tokens", 0)
                                 for t in trajectories) / total, 1),
        "exit_status": dict(sorted(Counter(t.exit_status for t in trajectories).items())),
        **pass_k,
        **errors,
    }
