"""Fidelity measures: how far a prediction is from what really happened.

- ``normalize``: output with what legitimately differs between two runs of the same command masked
  (absolute temporary paths, memory addresses, timings, durations, pids, dates), so that similarity
  measures content, not noise;
- ``similarity``: difflib's ratio of the normalized texts (1.0 identical), of their characters, or
  of their lines when the two hold more than ``CHARS_AT_MOST`` characters together (the character
  ratio is quadratic: a long test log took minutes);
- ``final_counts``: a test run's closing counts (``2 failed, 3 passed in 0.1s`` -> {failed: 2, passed: 3});
- ``same_outcome``: two runs of a command agree on the exit code and on whether tests failed;
- ``timing_ms``: mean and 95th percentile of per-call seconds, in milliseconds;
- ``wilson``: the Wilson score interval of a proportion (agreement rates of hybrid audits);
- ``binary``: accuracy, precision, recall, F1 and the confusion matrix of predicted vs real verdicts;
- ``auc``: the area under the ROC curve of probabilities against real verdicts (ties count half);
- ``ece``: expected calibration error over equal-width probability bins (10 by default);
- ``scored``: ``binary`` of the verdicts at a threshold, with AUC, ECE and the majority-class
  baseline's accuracy beside them (accuracy alone hides a model that always says "unresolved").
"""

from __future__ import annotations

import difflib
import math
import re

_MASKS = (
    (re.compile(r"0x[0-9a-fA-F]{6,}"), "0xADDR"),
    (re.compile(r"/tmp/[\w./-]+"), "/tmp/PATH"),
    (re.compile(r"\b\d+(\.\d+)?\s?(s|ms|sec|seconds)\b"), "N s"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?\b"), "DATETIME"),
    (re.compile(r"\bpid[ =:]\s*\d+", re.IGNORECASE), "pid N"),
    (re.compile(r"[ \t]+\n"), "\n"),
)


_COUNT = re.compile(r"(\d+) (failed|passed|errors?)\b")


def final_counts(text: str) -> dict[str, int]:
    """The counts of the line that closes a test run, when the output ends with one (pytest's
    ``N failed, M passed in T``; a script that ran pytest inside and printed on is not one)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or " in " not in lines[-1] or not _COUNT.search(lines[-1]):
        return {}
    return {kind.rstrip("s") if kind.startswith("error") else kind: int(n) for n, kind in _COUNT.findall(lines[-1])}


def _failed(counts: dict[str, int]) -> bool:
    return counts.get("failed", 0) + counts.get("error", 0) > 0


def same_outcome(predicted: str, predicted_exit: int, real: str, real_exit: int) -> bool:
    """The exit codes agree and, where the real output ends a test run, so does whether tests
    failed (a test command piped through ``tail`` exits 0 whatever its tests do)."""
    counts = final_counts(real)
    return predicted_exit == real_exit and (not counts or _failed(final_counts(predicted)) == _failed(counts))


def timing_ms(seconds: list[float]) -> dict[str, float | None]:
    """``ms_per_prediction`` (mean) and ``ms_p95`` of per-call ``seconds`` (None when there are none)."""
    ordered = sorted(seconds)
    if not ordered:
        return {"ms_per_prediction": None, "ms_p95": None}
    return {"ms_per_prediction": round(1000 * sum(ordered) / len(ordered), 3),
            "ms_p95": round(1000 * ordered[int(0.95 * (len(ordered) - 1))], 3)}


def normalize(text: str) -> str:
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return text.strip()


CHARS_AT_MOST = 20_000


def similarity(predicted: str, real: str) -> float:
    a, b = normalize(predicted), normalize(real)
    if a == b:
        return 1.0
    if len(a) + len(b) > CHARS_AT_MOST:
        return difflib.SequenceMatcher(None, a.splitlines(), b.splitlines(), autojunk=False).ratio()
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % (z=1.96) Wilson score interval of ``successes``/``n``; (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)


def binary(pairs: list[tuple[bool, bool]]) -> dict:
    """(predicted, real) verdicts -> n, accuracy, precision, recall, f1 and the confusion matrix
    (tp, fp, fn, tn). Undefined ratios (no positive prediction, no real positive) are None."""
    tp = sum(p and r for p, r in pairs)
    fp = sum(p and not r for p, r in pairs)
    fn = sum(r and not p for p, r in pairs)
    tn = sum(not p and not r for p, r in pairs)
    n = len(pairs)
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = (2 * precision * recall / (precision + recall)) if precision and recall else (
        0.0 if precision is not None and recall is not None else None)
    return {"n": n, "accuracy": (tp + tn) / n if n else None, "precision": precision, "recall": recall, "f1": f1,
            "confusion": {"tp": tp, "fp": fp, "fn": fn, "tn": tn}}


def auc(scored: list[tuple[float, bool]]) -> float | None:
    """P(a random real positive scores above a random real negative), ties counting half (the
    Mann-Whitney form of the ROC area); None without both classes."""
    ranked = sorted(scored, key=lambda pair: pair[0])
    positives = sum(real for _, real in ranked)
    negatives = len(ranked) - positives
    if not positives or not negatives:
        return None
    rank_sum, i = 0.0, 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        mid = (i + j + 1) / 2  # the mean 1-based rank of the tied run
        rank_sum += mid * sum(real for _, real in ranked[i:j])
        i = j
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


def ece(scored: list[tuple[float, bool]], bins: int = 10) -> float | None:
    """Sum over equal-width bins of (share of predictions in the bin) x |mean probability - share
    really positive|; a probability of 1.0 falls in the last bin. None when there is nothing."""
    if not scored:
        return None
    groups: dict[int, list[tuple[float, bool]]] = {}
    for p, real in scored:
        groups.setdefault(min(int(p * bins), bins - 1), []).append((p, real))
    return sum(abs(sum(p for p, _ in g) - sum(r for _, r in g)) for g in groups.values()) / len(scored)


def scored(pairs: list[tuple[float, bool]], threshold: float = 0.5) -> dict:
    """``binary`` of (P >= threshold, real), with ``auc``, ``ece`` and ``majority_accuracy`` (the
    accuracy of always predicting the more common real verdict)."""
    out = binary([(p >= threshold, real) for p, real in pairs])
    positives = sum(real for _, real in pairs)
    return {**out, "auc": auc(pairs), "ece": ece(pairs),
            "majority_accuracy": max(positives, len(pairs) - positives) / len(pairs) if pairs else None}
