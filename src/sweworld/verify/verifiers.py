"""Verifiers: ``score(task, trajectory) -> float``, higher = more likely resolved.

- ``swr``: the world's reward model on the final diff (``EmbeddedSWR``'s ``sim_probability`` by
  default; any object with ``evaluate_context(task, patch)`` returning a report with
  ``sim_probability`` does). Scores are cached per (instance, patch): samples often repeat a diff.
- ``random``: a seeded baseline, a stable hash of (seed, instance, sample, patch).
- ``oracle``: the real reward (1.0 resolved, else 0.0): the upper bound, for tests and comparisons;
- ``embedded`` (``verify.embedded``): a CPU classifier of the trajectory and the diff, trained by
  ``sweworld verifier train``; ``llm`` (``verify.llm``): a judge model's P(YES); ``tests`` and
  ``hybrid`` (``verify.regression``): the real regression tests, R2E-Gym's rule.

A verifier may also have ``prepare(samples, tasks)``: ``select`` calls it with every sample first.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from sweworld.errors import ConfigError
from sweworld.protocols import Verifier
from sweworld.trajectory import Trajectory
from sweworld.types import Task


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


def _embedded(model: Any = None, repos_dir: str | None = None) -> Verifier:
    from sweworld.verify.embedded import EmbeddedVerifier
    return EmbeddedVerifier(model, repos_dir=repos_dir)


def _llm(url: str | None = None, model_name: str = "verifier", input: str = "trajectory", votes: int = 5) -> Verifier:
    from sweworld.verify.llm import LLMVerifier
    return LLMVerifier(url, model_name, input=input, votes=votes)  # type: ignore[arg-type]


def _tests(backend: Any = None, log_dir: str | None = None) -> Verifier:
    from sweworld.verify.regression import TestsVerifier
    return TestsVerifier(backend, log_dir=log_dir)


def _hybrid(base: str = "swr", **options: Any) -> Verifier:
    from sweworld.verify.regression import HybridVerifier
    if base not in HYBRID_BASES:
        raise ConfigError(f"the hybrid rule cannot rank by {base!r}", hint=f"give --hybrid-base {', '.join(HYBRID_BASES)}")
    return HybridVerifier(create_verifier(base, **options), create_verifier("tests", **options))


HYBRID_BASES = ("swr", "embedded", "llm", "random")
"""What the hybrid rule ranks by first (not the tests it ranks by next, nor the label)."""

_embedded.needs_tasks = _llm.needs_tasks = _tests.needs_tasks = _hybrid.needs_tasks = True  # type: ignore[attr-defined]
VERIFIERS: dict[str, Callable[..., Verifier]] = {
    "swr": SWRVerifier,
    "random": RandomVerifier,
    "oracle": OracleVerifier,
    "embedded": _embedded,
    "llm": _llm,
    "tests": _tests,
    "hybrid": _hybrid,
}


def create_verifier(name: str, **options: Any) -> Verifier:
    """The verifier registered as ``name``; ``options`` go to its constructor (``seed`` for
    ``random``, ``swr``/``repos_dir`` for ``swr``, ``model`` (a ``VerifierModel`` or its JSON file)
    for ``embedded``, ``url``/``model_name``/``input``/``votes`` for ``llm``, ``backend``/``log_dir``
    for ``tests``, ``base`` and the base's and tests' options for ``hybrid``; options a verifier
    does not take are ignored)."""
    import inspect

    if name not in VERIFIERS:
        raise ConfigError(f"no verifier named {name!r}", hint=f"verifiers: {', '.join(VERIFIERS)}")
    factory = VERIFIERS[name]
    parameters = inspect.signature(factory).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return factory(**options)
    return factory(**{k: v for k, v in options.items() if k in parameters})
