"""The ``embedded`` verifier: a CPU logistic regression over what a sample shows without an
environment (``verify.features``), trained on real-labelled rollouts (``sweworld verifier train``).

Feature sets (``FEATURE_SETS``):

- ``blind``: the trajectory (``TRAJECTORY_FEATURES``, self-consistency ``agreement`` included) and
  the diff's gold-free features (``DIFF_FEATURES``): what SWE-Gym's verifier may see;
- ``solo``: ``blind`` without ``agreement``: each sample judged alone, as SWE-Gym's verifier does;
- ``reference``: ``blind`` plus the diff against the gold patch (``REFERENCE_FEATURES``), as
  SWE-World's SWR is shown it. Only where the gold patch may be used (synthesized tasks, training
  data filtering): on a benchmark it is not a test-time verifier.

``train_verifier(samples, tasks)`` fits ``surrogates.swr.model.fit`` (pure Python) on every sample
with an outcome (label: the real reward) and returns a ``VerifierModel`` (saved as JSON, ``FORMAT``
checked on load) with its training figures in ``meta``. ``EmbeddedVerifier.score`` is P(resolved);
an empty diff scores 0. ``prepare`` computes ``agreement`` over the samples being selected (over
all n of an instance, so best@k for k < n uses what the other samples agree on: exact at k = n).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from sweworld.core.errors import ConfigError, ModelError
from sweworld.core.types import Task
from sweworld.surrogates.swr.features import features as diff_features
from sweworld.surrogates.swr.model import SWRClassifier, fit
from sweworld.surrogates.swr.patched import FileSource
from sweworld.surrogates.swr.predict import repo_sources
from sweworld.trajectory import Trajectory
from sweworld.verify.features import (
    DIFF_FEATURES,
    REFERENCE_FEATURES,
    TRAJECTORY_FEATURES,
    agreement,
    trajectory_features,
)
from sweworld.verify.verifiers import need_task

FORMAT = "sweworld-verifier-logistic/1"
FeatureSet = Literal["blind", "solo", "reference"]
FEATURE_SETS: dict[str, tuple[str, ...]] = {
    "blind": (*TRAJECTORY_FEATURES, *DIFF_FEATURES),
    "solo": tuple(f for f in (*TRAJECTORY_FEATURES, *DIFF_FEATURES) if f != "agreement"),
    "reference": (*TRAJECTORY_FEATURES, *DIFF_FEATURES, *REFERENCE_FEATURES),
}
Sources = Callable[[Task], FileSource]
HINT = "train one with `sweworld verifier train --runs R --out M.json`"


class VerifierModel(BaseModel):
    format: str = FORMAT
    feature_set: FeatureSet = "blind"
    classifier: SWRClassifier
    meta: dict[str, Any] = Field(default_factory=dict, description="What it was trained on, and its figures.")

    def save(self, path: str | Path) -> Path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(self.model_dump_json(indent=1) + "\n", encoding="utf-8")
        return Path(path)

    @classmethod
    def load(cls, path: str | Path) -> VerifierModel:
        """The model in ``path`` (``ModelError`` when it cannot be read or is not one)."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ModelError(f"cannot read the verifier model {path}: {exc}", hint=HINT) from exc
        if not re.search(rf'"format"\s*:\s*"{re.escape(FORMAT)}"', text):
            raise ModelError(f"{path} is not an embedded verifier model (format {FORMAT!r})", hint=HINT)
        try:
            return cls.model_validate_json(text)
        except ValueError as exc:
            raise ModelError(f"the verifier model {path} is damaged: {exc}", hint=HINT) from exc



def sample_features(task: Task, trajectory: Trajectory, read: FileSource, feature_set: str,
                    agreed: float = 0.0) -> dict[str, float]:
    """The values of ``FEATURE_SETS[feature_set]`` for one sample."""
    diff = diff_features(task, trajectory.patch, read)  # no feature set weighs the behaviour features
    values = {**trajectory_features(trajectory), "agreement": agreed, **diff}
    return {name: values[name] for name in FEATURE_SETS[feature_set]}


def _task_of(tasks: Mapping[str, Task], trajectory: Trajectory) -> Task:
    task = tasks.get(trajectory.instance_id)
    if task is None:
        raise ConfigError(f"no task {trajectory.instance_id} in the dataset given",
                          hint="give the dataset the rollouts ran on (--dataset)")
    return task


def train_verifier(samples: Sequence[tuple[str, Trajectory]], tasks: Mapping[str, Task], *,
                   feature_set: str = "blind", sources: Sources | None = None, l2: float = 1.0) -> VerifierModel:
    """Fit on every sample with an outcome (see the module docstring)."""
    if feature_set not in FEATURE_SETS:
        raise ConfigError(f"no feature set {feature_set!r}", hint=f"use one of {', '.join(FEATURE_SETS)}")
    sources = sources or repo_sources()
    kept = [t for _, t in samples if not t.failed]
    agreed = agreement(kept)
    rows = [sample_features(_task_of(tasks, t), t, sources(_task_of(tasks, t)), feature_set, agreed[t.key])
            for t in kept]
    labels = [t.reward == 1.0 for t in kept]
    classifier = fit(rows, labels, FEATURE_SETS[feature_set], l2=l2)
    right = sum((classifier.probability(r) >= 0.5) == y for r, y in zip(rows, labels, strict=True))
    meta = {"examples": len(kept), "resolved": sum(labels), "instances": len({t.instance_id for t in kept}),
            "repos": sorted({_task_of(tasks, t).repo for t in kept}), "runs": sorted({r for r, _ in samples}),
            "train_accuracy": right / len(kept), "l2": l2}
    return VerifierModel(feature_set=feature_set, classifier=classifier, meta=meta)


class EmbeddedVerifier:
    name = "embedded"
    needs_tasks = True

    def __init__(self, model: VerifierModel | str | Path | None = None, *, repos_dir: str | None = None,
                 sources: Sources | None = None):
        if model is None:
            raise ConfigError("the embedded verifier needs a trained model", hint=HINT + ", then --verifier-model M.json")
        self.model = model if isinstance(model, VerifierModel) else VerifierModel.load(model)
        self.sources = sources or repo_sources(repos_dir)
        self._agreement: dict[tuple[str, int], float] = {}

    def prepare(self, samples: Sequence[Trajectory], tasks: Mapping[str, Task] | None = None) -> None:
        self._agreement = agreement(samples)

    def score(self, task: Task | None, trajectory: Trajectory) -> float:
        task = need_task(task, trajectory, self.name)
        if not trajectory.patch.strip():
            return 0.0
        values = sample_features(task, trajectory, self.sources(task), self.model.feature_set,
                                 self._agreement.get(trajectory.key, 0.0))
        return self.model.classifier.probability(values)
