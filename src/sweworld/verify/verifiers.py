"""Verifiers: ``score(task, trajectory) -> float``, higher = more likely resolved.

- ``swr``: the world's reward model on the final diff (``EmbeddedSWR``'s ``sim_probability`` by
  default; any object with ``evaluate_context(task, patch)`` returning a report with
  ``sim_probability`` does). Scores are cached per (instance, patch): samples often repeat a diff.
- ``random``: a seeded baseline, a stable hash of (seed, instance, sample, patch).
- ``oracle``: the real reward (1.0 resolved, else 0.0): the upper bound, for tests and comparisons;
- ``embedded`` (``verify.embedded``): a CPU classifier of the trajectory and the diff, trained by
  ``sweworld verifier train``; ``llm`` (``verify.llm``): a judge model's P(YES); ``tests`` and
  ``hybrid`` (``verify.regression``): the real regression tests, R2E-Gym's rule.

A verifier may also have ``prepare(samples, tasks)`` (``protocols.Preparable``): ``select`` calls it
with every sample first. ``create_verifier(name, **options)`` builds one from ``VERIFIERS`` (a
``Registry`` of dotted targets: nothing here imports the verifier modules); an option the verifier
does not take is a ``ConfigError``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from sweworld.core.errors import ConfigError
from sweworld.core.protocols import Verifier
from sweworld.core.registry import Registry, keywords
from sweworld.core.types import Task
from sweworld.trajectory import Trajectory


def need_task(task: Task | None, trajectory: Trajectory, verifier: str) -> Task:
    """``task``, or the error a verifier that reads the task raises without it."""
    if task is None:
        raise ConfigError(f"the {verifier} verifier needs the task of {trajectory.instance_id}",
                          hint="give the dataset the rollouts ran on (--dataset)")
    return task


class OracleVerifier:
    name = "oracle"

    def score(self, task: Task | None, trajectory: Trajectory) -> float:
        return 1.0 if trajectory.reward == 1.0 else 0.0


class RandomVerifier:
    name = "random"

    def __init__(self, seed: int = 0):
        self.seed = seed

    def score(self, task: Task | None, trajectory: Trajectory) -> float:
        key = f"{self.seed}\0{trajectory.instance_id}\0{trajectory.sample}\0{trajectory.patch}"
        return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") / 2**64


class PatchVerifier:
    """A verifier of the final diff alone: 0 for an empty one, each (instance, diff) scored once
    (samples often repeat a diff) by ``score_patch``."""

    name = "patch"
    needs_tasks = True

    def __init__(self) -> None:
        self._cache: dict[tuple[str, str], float] = {}

    def score(self, task: Task | None, trajectory: Trajectory) -> float:
        task = need_task(task, trajectory, self.name)
        if not trajectory.patch.strip():
            return 0.0
        key = (trajectory.instance_id, trajectory.patch)
        if key not in self._cache:
            self._cache[key] = self.score_patch(task, trajectory.patch)
        return self._cache[key]

    def score_patch(self, task: Task, patch: str) -> float:
        raise NotImplementedError


class SWRVerifier(PatchVerifier):
    name = "swr"

    def __init__(self, swr: Any = None, *, repos_dir: str | None = None):
        super().__init__()
        if swr is None:
            from sweworld.surrogates.swr import EmbeddedSWR, EmbeddedSWRConfig
            swr = EmbeddedSWR(config=EmbeddedSWRConfig(repos_dir=repos_dir))
        self.swr = swr

    def score_patch(self, task: Task, patch: str) -> float:
        return float(self.swr.evaluate_context(task, patch).sim_probability or 0.0)


HYBRID_BASES = ("swr", "embedded", "llm", "random")
"""What the hybrid rule ranks by first (not the tests it ranks by next, nor the label)."""

VERIFIERS: Registry[Callable[..., Verifier]] = Registry("verifier", {
    "swr": "sweworld.verify.verifiers:SWRVerifier",
    "random": "sweworld.verify.verifiers:RandomVerifier",
    "oracle": "sweworld.verify.verifiers:OracleVerifier",
    "embedded": "sweworld.verify.embedded:EmbeddedVerifier",
    "llm": "sweworld.verify.llm:llm_verifier",
    "tests": "sweworld.verify.regression:TestsVerifier",
    "hybrid": "sweworld.verify.regression:hybrid_verifier",
}, group="sweworld.verifiers")
"""The verifiers by name (entry points ``sweworld.verifiers`` add more)."""


def verifier_options(name: str) -> tuple[str, ...]:
    """The options ``create_verifier(name, ...)`` takes (its factory's keywords; ``hybrid``: ``base``,
    the others go to its base and to ``tests``)."""
    return keywords(VERIFIERS.get(name)) or ()


def needs_tasks(name: str) -> bool:
    """Whether the verifier ``name`` reads the tasks (``select`` then loads the dataset)."""
    return bool(getattr(VERIFIERS.get(name), "needs_tasks", False))


def create_verifier(name: str, **options: Any) -> Verifier:
    """The verifier registered as ``name``; ``options`` go to its constructor (``seed`` for
    ``random``, ``swr``/``repos_dir`` for ``swr``, ``model`` (a ``VerifierModel`` or its JSON file)
    and ``repos_dir`` for ``embedded``, ``url``/``model_name``/``input``/``votes`` for ``llm``,
    ``backend``/``log_dir``/``timeout`` for ``tests``, ``base`` and the base's and tests' options for
    ``hybrid``). An option the verifier does not take is a ``ConfigError`` naming it."""
    return VERIFIERS.checked(name, **options)()
