"""How good the embedded SWT is on repositories it was not fitted on.

``score(swt, steps)``: on recorded code-execution steps (routed ``sim``), exit-code accuracy,
outcome accuracy (``metrics.same_outcome``: the exit code and a test run's final counts), mean
output similarity (``metrics.similarity``: paths, addresses and timings masked), mean confidence,
the same per prediction source and for confident predictions (>= ``confident``), milliseconds per
prediction (mean, p95), and the mean duration of the real commands they stand for.
``leave_one_repo_out(traces, tasks)``: for each repository, fitted on the others' traces (every
task row known, as the sim backend knows its dataset), scored on its steps; plus the pooled score
(``pooled``: weighted by each repository's steps, per prediction source too).
``held_out(traces, tasks, test_fraction)``: fitted on the train repositories of
``fidelity.split_of``, scored on the test ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from sweworld.core.types import Task
from sweworld.surrogates.swt.model import EmbeddedSWT
from sweworld.surrogates.swt.predictor import TestOutcomePredictor
from sweworld.world.fidelity import split_of
from sweworld.world.metrics import same_outcome, similarity, timing_ms
from sweworld.world.swt import to_result
from sweworld.world.traces import EvalTrace, StepTrace

Traces = Sequence[StepTrace | EvalTrace]


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _block(rows: Sequence[tuple[bool, float, float, bool]]) -> dict[str, Any]:
    return {"n": len(rows), "exit_code_accuracy": _mean([float(r[0]) for r in rows]),
            "outcome_accuracy": _mean([float(r[3]) for r in rows]),
            "output_similarity": _mean([r[1] for r in rows]), "confidence": _mean([r[2] for r in rows])}


def score(swt: EmbeddedSWT, steps: Iterable[StepTrace], *, confident: float = 0.9) -> dict[str, Any]:
    """See the module docstring."""
    steps = [s for s in steps if s.routed == "sim"]
    before = len(swt.timings)
    rows, sources = [], []
    for step in steps:
        got = swt.predict(step.context)
        text = to_result(got.output).output
        rows.append((got.output.exit_code == step.exit_code, similarity(text, step.output), got.confidence,
                     same_outcome(text, got.output.exit_code, step.output, step.exit_code)))
        sources.append(got.source)
    return {**_block(rows),
            "by_source": {src: _block([r for r, s in zip(rows, sources, strict=True) if s == src]) for src in sorted(set(sources))},
            "confident": {"threshold": confident, **_block([r for r in rows if r[2] >= confident])},
            **timing_ms(swt.timings[before:]), "real_seconds_mean": _mean([s.duration for s in steps])}


def fit_on(traces: Traces, tasks: Sequence[Task], keep: Callable[[str], bool],
         trees: Callable[[Task], Path | None] | None, predictor: TestOutcomePredictor | None = None) -> EmbeddedSWT:
    """Fitted on the kept repositories' traces; every task row known (the held-out ones' too, and
    their import graphs: the repository, not its traces); ``predictor``: the per-test predictor
    (default ``GoldTouchPredictor``)."""
    rows = [*tasks, *(Task.model_validate(t.task) for t in traces if isinstance(t, EvalTrace))]
    return EmbeddedSWT.fit([t for t in traces if keep(t.repo)], tasks=rows, trees=trees, predictor=predictor)


def pooled(blocks: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``score`` blocks (one per repository) pooled, each figure weighted by its ``n``, per
    prediction source too (``by_source``)."""
    def pool(parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
        n = sum(b["n"] for b in parts)
        return {"n": n, **{key: round(sum((b[key] or 0) * b["n"] for b in parts if b["n"]) / n, 4) if n else None
                           for key in ("exit_code_accuracy", "outcome_accuracy", "output_similarity", "confidence")}}

    sources = sorted({s for b in blocks for s in b.get("by_source", {})})
    return {**pool(blocks), "by_source": {s: pool([b["by_source"][s] for b in blocks if s in b.get("by_source", {})])
                                          for s in sources}}


def leave_one_repo_out(traces: Traces, tasks: Sequence[Task] = (), *,
                       trees: Callable[[Task], Path | None] | None = None,
                       predictor: TestOutcomePredictor | None = None,
                       repos: Sequence[str] | None = None) -> dict[str, Any]:
    """See the module docstring (``repos``: only these are left out and scored; default all)."""
    repos = sorted(repos or {t.repo for t in traces if isinstance(t, StepTrace)})
    out: dict[str, Any] = {}
    for repo in repos:
        swt = fit_on(traces, tasks, lambda r, repo=repo: r != repo, trees, predictor)
        out[repo] = score(swt, [t for t in traces if isinstance(t, StepTrace) and t.repo == repo])
    out["overall"] = pooled([out[repo] for repo in repos])
    return out


def held_out(traces: Traces, tasks: Sequence[Task] = (), *, test_fraction: float = 0.5,
             trees: Callable[[Task], Path | None] | None = None,
             predictor: TestOutcomePredictor | None = None) -> dict[str, Any]:
    """See the module docstring."""
    test = {t.repo for t in traces if split_of(t.repo, test_fraction) == "test"}
    swt = fit_on(traces, tasks, lambda r: r not in test, trees, predictor)
    return {"test_repos": sorted(test),
            **score(swt, [t for t in traces if isinstance(t, StepTrace) and t.repo in test])}
