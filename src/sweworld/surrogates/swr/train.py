"""Training and measuring the embedded SWR on real evaluations (``EvalTrace``: labels always come
from the real harness).

``examples(traces, source)``: the features of every evaluation the classifier decides (an empty
patch, or one ``git apply --check`` refused, is unresolved without it, as ``EmbeddedSWR`` decides).
``train(traces, source)``: splits BY REPOSITORY (``fidelity.split_of``), fits on the train
repositories, measures on the held-out ones (every evaluation, decided as ``EmbeddedSWR.decide``
decides: accuracy, precision, recall, F1, AUC, ECE, the majority baseline, milliseconds per
prediction), or with ``by_repository`` predicts each repository with the model fitted on the
others, then refits on every repository for the model it returns (``fit_traces``: calibrated);
the figures go in ``model.meta`` (with nothing held out,
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

from sweworld.core.errors import ConfigError
from sweworld.core.types import Task
from sweworld.surrogates.swr.features import features, uses_behaviour
from sweworld.surrogates.swr.model import SWRClassifier, fit_calibrated
from sweworld.surrogates.swr.patched import FileSource
from sweworld.surrogates.swr.predict import decide
from sweworld.world.fidelity import split_of
from sweworld.world.metrics import binary, scored, timing_ms
from sweworld.world.traces import EvalTrace, StepTrace

MODEL_FEATURES = ("tokens_jaccard", "lines_jaccard", "files_jaccard", "funcs_jaccard", "modules_equal",
                  "gold_added_recall", "gold_removed_recall", "agent_added_precision", "gold_strings_recall",
                  "hunks", "lines_off_gold")
"""What the classifier weighs: the patch against the gold patch, symmetric and asymmetric, and its
size (``empty``/``parsed``/``syntax_ok``/``executable`` decide without it: ``predict.decide``).
Chosen leaving repositories out on 200 real agent patches (docs/benchmarks.md): every feature of
``FEATURES`` together overfits the 30 that resolve (AUC .71 against .80); the behaviour features
(``behaviour.FEATURES``) are known on 4 of the 200 and leave the figures as they are."""
L2 = 3.0
"""The penalty on the standardized weights (leave-repository-out on the real agent patches)."""
Sources = Callable[[Task], FileSource]
"""A task's base files (``predict.repo_sources()``: from the repository cache)."""
_STAMP = re.compile(r"^\[\s*([\d.]+)s\]", re.M)
_TEST_RUN = re.compile(r"eval script: exit \S+, ([\d.]+)s")


def decided_without_model(trace: EvalTrace) -> bool:
    return not trace.patch.strip() or trace.patch_applies is False


def examples(traces: Iterable[EvalTrace], source: Sources, *, probe: Sequence[str] | None = None,
             ) -> list[tuple[EvalTrace, dict[str, float]]]:
    """(trace, features) of the evaluations the classifier decides; the behaviour features (a
    sandboxed probe per evaluation with literal calls) only with a ``probe`` command
    (``features``), as ``MODEL_FEATURES`` does not weigh them."""
    out = []
    for trace in traces:
        if not decided_without_model(trace):
            task = Task.model_validate(trace.task)
            out.append((trace, features(task, trace.patch, source(task), probe=probe)))
    return out


def _pass_rate(traces: Sequence[EvalTrace]) -> float:
    """Share of PASS_TO_PASS tests that passed in the real runs of ``traces``."""
    passed = failed = 0
    for trace in traces:
        status = (trace.report.get("tests_status") or {}).get("PASS_TO_PASS") or {}
        passed, failed = passed + len(status.get("success", [])), failed + len(status.get("failure", []))
    return passed / (passed + failed) if passed + failed else 1.0


def fit_traces(pairs: Sequence[tuple[EvalTrace, dict[str, float]]], *, names: Sequence[str] = MODEL_FEATURES,
               **options: Any) -> SWRClassifier:
    """The calibrated classifier of ``pairs`` (``model.fit_calibrated``: Platt-scaled on
    leave-one-repository-out scores)."""
    model = fit_calibrated([f for _, f in pairs], [t.resolved for t, _ in pairs], [t.repo for t, _ in pairs],
                           names, **{"l2": L2, **options})
    return model.model_copy(update={"pass_rate": _pass_rate([t for t, _ in pairs])})


def _predictions(model: SWRClassifier, traces: Sequence[EvalTrace], source: Sources,
                 probe: Sequence[str] | None = None) -> tuple[list, list]:
    """(P, real verdict) of each of ``traces`` decided as ``EmbeddedSWR`` decides it, and the
    seconds of each prediction (features + classifier; reading the base files included; ``probe``:
    see ``features``)."""
    pairs, seconds = [], []
    for trace in traces:
        task = Task.model_validate(trace.task)
        start = time.perf_counter()
        probability = 0.0 if decided_without_model(trace) else decide(model, task, trace.patch, source(task), probe=probe)[0]
        seconds.append(time.perf_counter() - start)
        pairs.append((probability, trace.resolved))
    return pairs, seconds


def _figures(pairs: list, seconds: list, threshold: float) -> dict[str, Any]:
    return {**scored(pairs, threshold), **timing_ms(seconds)}


def measure(model: SWRClassifier, traces: Sequence[EvalTrace], source: Sources,
            probe: Sequence[str] | None = None) -> dict[str, Any]:
    """Figures of ``model`` on ``traces``: accuracy, precision, recall, F1, AUC, ECE, the majority
    baseline, milliseconds per prediction."""
    return _figures(*_predictions(model, traces, source, probe), model.threshold)


def leave_repo_out(evals: Sequence[EvalTrace], pairs: Sequence[tuple[EvalTrace, dict[str, float]]],
                   source: Sources, *, extra: Sequence[tuple[EvalTrace, dict[str, float]]] = (),
                   probe: Sequence[str] | None = None, **options: Any) -> dict[str, Any]:
    """Each repository predicted by the model fitted on the others' ``pairs`` (and ``extra``:
    training only): pooled figures, figures per repository, and each prediction as (trace, P,
    threshold) under ``predictions``; a repository whose complement lacks an outcome is left out."""
    predictions: list[tuple[EvalTrace, float, float]] = []
    seconds: list[float] = []
    per_repo: dict[str, Any] = {}
    for repo in sorted({t.repo for t in evals}):
        rest = [(t, f) for t, f in [*pairs, *extra] if t.repo != repo]
        if len({t.resolved for t, _ in rest}) < 2:
            continue
        model = fit_traces(rest, **options)
        held = [t for t in evals if t.repo == repo]
        got, took = _predictions(model, held, source, probe)
        per_repo[repo] = _figures(got, took, model.threshold)
        predictions += [(t, p, model.threshold) for t, (p, _) in zip(held, got, strict=True)]
        seconds += took
    figures = _figures([(p, t.resolved) for t, p, _ in predictions], seconds, 0.5)
    figures.update(binary([(p >= threshold, t.resolved) for t, p, threshold in predictions]))
    return {"pooled": figures, "repos": per_repo, "predictions": predictions}


def train(traces: Iterable[StepTrace | EvalTrace], source: Sources, *, test_fraction: float = 0.5,
          by_repository: bool = False, **options: Any) -> tuple[SWRClassifier, dict[str, Any]]:
    """The model fitted on every repository, and the figures of the one fitted on the train split,
    or (``by_repository``) of each repository predicted by the one fitted on the others (see the
    module docstring)."""
    evals = [t for t in traces if isinstance(t, EvalTrace)]
    probe = options.pop("probe", None)
    if uses_behaviour(options.get("names", MODEL_FEATURES)) and probe is None:
        raise ConfigError("the feature names weigh the behaviour features, whose calls need an isolated probe",
                          hint="pass probe=sweworld.sandbox.oneshot.probe_command()")
    pairs = examples(evals, source, probe=probe)
    split = {t.repo: split_of(t.repo, test_fraction) for t in evals}
    held_out = sorted(r for r, s in split.items() if s == "test")
    report: dict[str, Any] = {"evaluations": len(evals), "decided_by_classifier": len(pairs),
                              "resolved": sum(t.resolved for t in evals), "test_fraction": test_fraction,
                              "train_repos": sorted(r for r, s in split.items() if s == "train"),
                              "test_repos": held_out}
    train_pairs = [(t, f) for t, f in pairs if split[t.repo] == "train"]
    if by_repository:
        folds = leave_repo_out(evals, pairs, source, probe=probe, **options)
        report.update({"test_fraction": None, "train_repos": [], "test_repos": sorted(folds["repos"]),
                       "held_out": folds["pooled"], "held_out_repos": folds["repos"]})
    elif held_out and train_pairs and len({t.resolved for t, _ in train_pairs}) == 2:
        held = fit_traces(train_pairs, **options)
        report["held_out"] = measure(held, [t for t in evals if split[t.repo] == "test"], source, probe)
        report["train"] = measure(held, [t for t in evals if split[t.repo] == "train"], source, probe)
    model = fit_traces(pairs, **options)
    if "train" not in report:  # the figures of the final model on what it was fitted on
        report["train"] = measure(model, evals, source, probe)
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
    """(model, n, accuracy, majority accuracy, precision, recall, F1, AUC, ECE, ms per call) rows,
    SWE-World's SWR beside ours."""
    from sweworld.world.fidelity import REFERENCE

    r = lambda x: None if x is None else round(x, 3)  # noqa: E731
    held = "each repository left out" if report.get("test_fraction") is None else "held-out repos"
    fitted = "fitted on every repository (in-sample)" if report.get("test_fraction") is None else "train repos"
    out = [[f"embedded SWR, {scope}", block["n"], r(block["accuracy"]), r(block.get("majority_accuracy")),
            r(block["precision"]), r(block["recall"]), r(block["f1"]), r(block.get("auc")), r(block.get("ece")),
            r(block["ms_per_prediction"])]
           for scope, block in ((held, report.get("held_out")), (fitted, report.get("train"))) if block]
    return out + [[name, None, ref["accuracy"], None, ref["precision"], ref["recall"], ref["f1"], None, None, None]
                  for name, ref in REFERENCE.items()]
