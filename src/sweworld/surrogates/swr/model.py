"""The classifier: L2-regularized logistic regression in pure Python, weights saved as JSON.

No dependency at inference or training (numpy is not a core dependency; the problem is a few dozen
features and a few thousand rows). ``fit`` standardizes every feature (mean, scale from the
training rows) and runs Newton's method (IRLS) to convergence. ``SWRClassifier.probability(f)``
takes a feature dict (``features.FEATURES``; a missing feature counts as 0) and returns
P(resolved). ``save``/``load`` write and read the JSON file (``FORMAT`` checked on load).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from sweworld.core.errors import ModelError

FORMAT = "sweworld-swr-logistic/1"


def _sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """x with a x = b (Gaussian elimination with partial pivoting; ``a`` positive definite)."""
    n = len(b)
    m = [[*row, b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(col + 1, n):
            f = m[r][col] / m[col][col]
            if f:
                m[r] = [x - f * y for x, y in zip(m[r], m[col], strict=True)]
    x = [0.0] * n
    for r in reversed(range(n)):
        x[r] = (m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))) / m[r][r]
    return x


class SWRClassifier(BaseModel):
    """A fitted logistic regression over named features (see the module docstring)."""

    format: str = FORMAT
    features: list[str] = Field(description="Feature names, in the order of the weights.")
    mean: list[float] = Field(description="Training mean of each feature.")
    scale: list[float] = Field(description="Training standard deviation of each feature (1 where constant).")
    weights: list[float] = Field(description="Coefficient of each standardized feature.")
    bias: float = 0.0
    threshold: float = Field(default=0.5, description="Resolved when P(resolved) >= threshold.")
    pass_rate: float = Field(default=1.0, description=(
        "Share of PASS_TO_PASS tests passing in the training runs that applied and parsed (the "
        "confidence of a predicted PASSED for a test the patch is not judged on)."))
    meta: dict[str, Any] = Field(default_factory=dict, description="What it was trained on, and its figures.")
    calibration: list[float] | None = Field(default=None, description=(
        "Platt scaling [a, b]: P = sigmoid(a * score + b), fitted on out-of-fold scores (None: the raw score)."))

    def score(self, values: Mapping[str, float]) -> float:
        """The linear score (log-odds of resolved)."""
        return self.bias + sum(w * (float(values.get(name, 0.0)) - m) / s
                               for name, w, m, s in zip(self.features, self.weights, self.mean, self.scale, strict=True))

    def probability(self, values: Mapping[str, float]) -> float:
        z = self.score(values)
        if self.calibration:
            z = self.calibration[0] * z + self.calibration[1]
        return _sigmoid(z)

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.model_dump(), indent=1) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path) -> SWRClassifier:
        try:
            raw = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ModelError(f"cannot read the SWR model {path}: {exc}",
                             hint="train one with `sweworld world train --traces T --out M.json`") from exc
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            raise ModelError(f"{path} is not an embedded SWR model (format {FORMAT!r})",
                             hint="train one with `sweworld world train --traces T --out M.json`")
        return cls.model_validate(raw)


def fit(rows: Sequence[Mapping[str, float]], labels: Sequence[bool], names: Sequence[str], *,
        l2: float = 1.0, iterations: int = 50, tolerance: float = 1e-8) -> SWRClassifier:
    """A logistic regression of ``labels`` on ``rows`` (Newton's method, penalty ``l2`` on the
    standardized weights, not on the bias)."""
    if not rows or len(set(labels)) < 2:
        raise ModelError(f"cannot train on {len(rows)} example(s) with {len(set(labels))} class(es)",
                         hint="collect traces with both resolved and unresolved patches (--policy perturb)")
    n, d = len(rows), len(names)
    raw = [[float(r.get(name, 0.0)) for name in names] for r in rows]
    mean = [sum(col) / n for col in zip(*raw, strict=True)]
    scale = [math.sqrt(sum((x - m) ** 2 for x in col) / n) or 1.0 for col, m in zip(zip(*raw, strict=True), mean, strict=True)]
    x = [[1.0, *((v - m) / s for v, m, s in zip(row, mean, scale, strict=True))] for row in raw]
    y = [1.0 if label else 0.0 for label in labels]
    w = [0.0] * (d + 1)
    for _ in range(iterations):
        p = [_sigmoid(sum(a * b for a, b in zip(w, xi, strict=True))) for xi in x]
        grad = [sum((pi - yi) * xi[j] for pi, yi, xi in zip(p, y, x, strict=True)) + (l2 * w[j] if j else 0.0)
                for j in range(d + 1)]
        hess = [[sum(pi * (1 - pi) * xi[j] * xi[k] for pi, xi in zip(p, x, strict=True)) + (l2 if j == k and j else 0.0)
                 for k in range(d + 1)] for j in range(d + 1)]
        hess[0][0] += 1e-9
        step = _solve(hess, grad)
        w = [a - b for a, b in zip(w, step, strict=True)]
        if max(abs(s) for s in step) < tolerance:
            break
    return SWRClassifier(features=list(names), mean=mean, scale=scale, weights=w[1:], bias=w[0])


def platt(scores: Sequence[float], labels: Sequence[bool]) -> list[float]:
    """[a, b] of the logistic P = sigmoid(a * score + b) fitted to ``labels`` (held-out scores: the
    raw model's on data it was not fitted on), so that P means what it says."""
    one = fit([{"score": s} for s in scores], labels, ["score"], l2=1e-3)
    a = one.weights[0] / one.scale[0]
    return [a, one.bias - a * one.mean[0]]


def fit_calibrated(rows: Sequence[Mapping[str, float]], labels: Sequence[bool], groups: Sequence[str],
                   names: Sequence[str], **options: Any) -> SWRClassifier:
    """``fit`` on every row, Platt-scaled on the out-of-fold scores of the models fitted without each
    group (leave one group out: a repository the model never saw); uncalibrated when fewer than two
    groups hold both outcomes on their complement."""
    model = fit(rows, labels, names, **options)
    scores, kept = [], []
    for group in sorted(set(groups)):
        inside = [i for i, g in enumerate(groups) if g != group]
        if len({labels[i] for i in inside}) < 2:
            continue
        fold = fit([rows[i] for i in inside], [labels[i] for i in inside], names, **options)
        for i, g in enumerate(groups):
            if g == group:
                scores.append(fold.score(rows[i]))
                kept.append(labels[i])
    if len(set(kept)) < 2:
        return model
    return model.model_copy(update={"calibration": platt(scores, kept)})
