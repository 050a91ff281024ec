"""Confidence that means "the exit code is right": calibrated on the training traces.

The embedded SWT's raw confidences measure how exactly the output can be rebuilt, not whether the
exit code (what hybrid routing cares about) is right: test-command predictions, right almost
always, carried about 0.63; nearest-neighbour ones, right two times in three, about 0.7. So
confidences are replaced by what leave-one-repository-out predictions on the training traces
achieved: for each prediction path (``tests``, ``script``, ``neighbour``, ...; split by whether the
per-test predictor decided a test, ``path_of``) and band of raw confidence, the share of exit codes
that were right (Laplace-smoothed; a path or band with fewer than ``MIN_BAND`` predictions falls
back to the coarser key). Exact replays keep 1.0.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from sweworld.core.protocols import HoldsOut
from sweworld.core.types import Task
from sweworld.surrogates.swt.bands import BANDS, band, calibrated, path_of
from sweworld.surrogates.swt.predictor import TestOutcomePredictor
from sweworld.world.traces import EvalTrace, StepTrace

MIN_BAND = 5


def calibration(traces: Sequence[StepTrace | EvalTrace], tasks: Sequence[Task] = (), *,
                trees: Callable[[Task], Path | None] | None = None,
                predictor: TestOutcomePredictor | None = None) -> dict[str, float]:
    """``"source"``, ``"path"`` (``path_of``) and each with ``":band"`` -> smoothed exit-code
    accuracy; {} with fewer than two repositories (nothing can be held out). ``predictor``: the
    per-test predictor the model uses (its confidences are what the bands calibrate)."""
    from sweworld.surrogates.swt.evaluate import fit_on

    steps = [t for t in traces if isinstance(t, StepTrace) and t.routed == "sim"]
    repos = sorted({s.repo for s in steps})
    if len(repos) < 2:
        return {}
    hits: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for repo in repos:
        fold = predictor.without(traces, repo) if isinstance(predictor, HoldsOut) else predictor
        swt = fit_on(traces, tasks, lambda r, repo=repo: r != repo, trees, fold)
        for step in (s for s in steps if s.repo == repo):
            got = swt.predict(step.context)
            right = int(got.output.exit_code == step.exit_code)
            for name in dict.fromkeys((got.source, path_of(got))):
                for key in (name, f"{name}:{band(got.confidence)}"):
                    hits[key][0] += right
                    hits[key][1] += 1
    return {key: round((right + 1) / (n + 2), 4) for key, (right, n) in hits.items() if n >= MIN_BAND
            or key in {k.split(":")[0] for k in hits if "+" not in k}}


__all__ = ["BANDS", "MIN_BAND", "band", "calibrated", "calibration", "path_of"]
