"""Training and measuring the embedded SWR on real evaluations (``EvalTrace``: labels always come
from the real harness).

``examples(traces, source)``: the features of every evaluation the classifier decides (an empty
patch, or one ``git apply --check`` refused, is unresolved without it, as ``EmbeddedSWR`` decides).
``train(traces, source)``: splits BY REPOSITORY (``fidelity.split_of``), fits on the train
repositories, measures on the held-out ones (every evaluation, decided as ``EmbeddedSWR.decide``
decides: accuracy, precision, recall, F1, milliseconds per prediction), then refits on every
repository for the model it returns; the figures go in ``model.meta`` (with nothing held out,
``train`` holds the final model's figures on its own training evaluations).
``real_seconds(run_dir)``: seconds of each real evaluation of a collect run (its
``eval/*/run_instance.log``), what one embedded prediction replaces.
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from sweworld.types import Task
from sweworld.world.embedded_swr.features import FEATURES, features
from sweworld.world.embedded_swr.model import SWRClassifier, fit
from sweworld.world.embedded_swr.patched import FileSource
from sweworld.world.embedded_swr.predict import decide
from sweworld.world.fidelity import split_of
from sweworld.world.metrics import binary, timing_ms
from sweworld.world.traces import EvalTrace, StepTrace

Sources = Callable[[Task], FileSource]
"""A task's base files (``predict.repo_sources()``: from the repository cache)."""
_STAMP = re.compile(r"^\[\s*([\d.]+)s\]", re.M)
_TEST_RUN = re.compile(r"eval script: exit \S+, ([\d.]+)s")


def decided_without_model(trace: EvalTrace) -> bool:
    return not trace.patch.strip() or trace.patch_applies is False


def examples(traces: Iterable[EvalTrace], source: Sources) -> list[tuple[EvalTrace, dict[str, float]]]:
    """(trace, features) of the evaluations the classifier decides."""
    out = []
    for trace in traces:
        if not decided_without_model(trace):
            task = Task.model_validate(trace.task)
            out.append((trace, features(task, trace.patch, source(task))))
    return out


def _pass_rate(traces: Sequence[EvalTrace]) -> float:
    """Share of PASS_TO_PASS tests that passed in the real runs of ``traces``."""
    passed = failed = 0
    for trace in traces:
        status = (trace.report.get("tests_status") or {}).get("PASS_TO_PASS") or {}
        passed, failed = passed + len(status.get("success", [])), failed + len(status.get("failure", []))
    return passed / (passed + failed) if passed + failed else 1.0


def fit_traces(pairs: Sequence[tuple[EvalTrace, dict[str, float]]], **options: Any) -> SWRClassifier:
    model = fit([f for _, f in pairs], [t.resolved for t, _ in pairs], FEATURES, **options)
    return model.model_copy(update={"pass_rate": _pass_rate([t for t, _ in pairs])})


def fit_rows(rows: Sequence[dict], **options: Any) -> SWRClassifier:
    """A model of rows holding ``features`` and ``label`` (the real verdict)."""
    return fit([r["features"] for r in rows], [r["label"] for r in rows], FEATURES, **options)


def measure(model: SWRClassifier, traces: Sequence[EvalTrace], source: Sources) -> dict[str, Any]:
    """Figures of ``model`` on ``traces``: every evaluation decided as ``EmbeddedSWR`` decides it,
    with the time of each prediction (features + classifier; reading the base files included)."""
    verdicts, seconds = [], []
    for trace in traces:
        task = Task.model_validate(trace.task)
        start = time.perf_counter()
        probability = 0.0 if decided_without_model(trace) else decide(model, task, trace.patch, source(task))[0]
        seconds.append(time.perf_counter() - start)
        verdicts.append((probability >= model.threshold, trace.resolved))
    return {**binary(verdicts), **timing_ms(seconds)}


def train(traces: Iterable[StepTrace | EvalTrace], source: Sources, *, test_fraction: float = 0.5,
          **options: Any) -> tuple[SWRClassifier, dict[str, Any]]:
    """The model fitted on every repository, and the figures of the one fitted on the train split
    (see the module docstring)."""
    evals = [t for t in traces if isinstance(t, EvalTrace)]
    pairs = examples(evals, source)
    split = {t.repo: split_of(t.repo, test_fraction) for t in evals}
    held_out = sorted(r for r, s in split.items() if s == "test")
    report: dict[str, Any] = {"evaluations": len(evals), "decided_by_classifier": len(pairs),
                              "resolved": sum(t.resolved for t in evals), "test_fraction": test_fraction,
                              "train_repos": sorted(r for r, s in split.items() if s == "train"),
                              "test_repos": held_out}
    train_pairs = [(t, f) for t, f in pairs if split[t.repo] == "train"]
    if held_out and train_pairs and len({t.resolved for t, _ in train_pairs}) == 2:
        held = fit_traces(train_pairs, **options)
        report["held_out"] = measure(held, [t for t in evals if split[t.repo] == "test"], source)
        report["train"] = measure(held, [t for t in evals if split[t.repo] == "train"], source)
    model = fit_traces(pairs, **options)
    if "train" not in report:  # nothing held out: the figures of the model on what it was fitted on
        report["train"] = measure(model, evals, source)
    return model.model_copy(update={"meta": {**model.meta, **report}}), report


def real_seconds(run_dir: str | Path) -> dict[str, Any]:
    """Wall seconds of each real evaluation under ``run_dir/eval`` (the last stamp of its
    ``run_instance.log``: workspace, patch, test run, grading) and of its test run alone."""
    total, tests = [], []
    for log in sorted(Path(run_dir).glob("eval/*/run_instance.log")):
        text = log.read_text(encoding="utf-8", errors="replace")
        stamps = _STAMP.findall(text)
        if stamps:
            total.append(float(stamps[-1]))
        tests += [float(s) for s in _TEST_RUN.findall(text)]
    mean = lambda xs: statistics.mean(xs) if xs else None  # noqa: E731
    return {"evaluations": len(total), "mean_seconds": mean(total), "mean_test_run_seconds": mean(tests)}


def speed(report: dict[str, Any], runs: Iterable[str | Path]) -> dict[str, Any]:
    """The real evaluations' seconds (collect runs ``runs``) against the embedded prediction's."""
    timings = [real_seconds(run) for run in runs if Path(run).is_dir()]
    n = sum(t["evaluations"] for t in timings)
    out: dict[str, Any] = {"real_evaluations": n}
    ms = (report.get("held_out") or report.get("train") or {}).get("ms_per_prediction")
    for key in ("mean_seconds", "mean_test_run_seconds"):
        values = [(t[key], t["evaluations"]) for t in timings if t[key] is not None]
        out[key] = sum(v * w for v, w in values) / sum(w for _, w in values) if values else None
    out["speedup"] = out["mean_seconds"] * 1000 / ms if ms and out["mean_seconds"] else None
    out["speedup_vs_test_run"] = out["mean_test_run_seconds"] * 1000 / ms if ms and out["mean_test_run_seconds"] else None
    return out


def rows(report: dict[str, Any]) -> list[list[Any]]:
    """(model, n, accuracy, precision, recall, F1, ms per call) rows, SWE-World's SWR beside ours."""
    from sweworld.world.fidelity import REFERENCE

    r = lambda x: None if x is None else round(x, 3)  # noqa: E731
    out = [[f"embedded SWR, {scope} repos", block["n"], r(block["accuracy"]), r(block["precision"]),
            r(block["recall"]), r(block["f1"]), r(block["ms_per_prediction"])]
           for scope, block in (("held-out", report.get("held_out")), ("train", report.get("train"))) if block]
    return out + [[name, None, ref["accuracy"], ref["precision"], ref["recall"], ref["f1"], None]
                  for name, ref in REFERENCE.items()]
