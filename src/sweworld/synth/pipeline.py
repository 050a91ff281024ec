"""``synthesize``: release -> candidate bugs -> screened -> validated -> SWE-bench instances.

1. ``release.prepare``: environment, stable baseline (two runs), per-test coverage (one run).
2. Candidates: ``sample_mutations`` over the library files (deterministic for the seed).
3. Each candidate in a fresh episode (``check.check_candidate``), in parallel, decided in order
   (``runs.parallel.map_ordered``) until ``max_instances`` are validated.
4. Combinations: 2-3 validated bugs of one file at once, checked the same way.
5. Instances: the buggy commit derived from the release and the fix (``repos.derive``), the fix as
   ``patch``, FAIL_TO_PASS / PASS_TO_PASS, the problem statement, the method.

Every outcome is appended to ``<work>/outcomes.jsonl`` as it arrives: an interrupted run resumes
without checking a candidate twice (same release, options and seed).
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sweworld.core.errors import SWEWorldError
from sweworld.core.types import Task
from sweworld.envs import EnvBuilder
from sweworld.parallel.map import map_ordered
from sweworld.parallel.runner import SYNTH_CHECK, LocalRunner, Runner
from sweworld.synth import KINDS, Mutation, combine, sample_mutations
from sweworld.synth.check import Outcome, StatementWriter
from sweworld.synth.checker import Checker, close_episodes
from sweworld.synth.instance import make_instance, template_statement
from sweworld.synth.release import Release, ReleaseSpec, prepare
from sweworld.synth.stats import SynthStats

COMBINE = "combine"
METHODS = (*KINDS, COMBINE)


@dataclass
class SynthOptions:
    max_instances: int | None = None
    methods: tuple[str, ...] | None = None
    """Mutation kinds and/or ``combine`` (default: all)."""
    seed: int = 0
    workers: int = 2
    max_candidates: int | None = None
    max_per_kind: int | None = None
    combine_share: float = 0.1
    """Share of ``max_instances`` made of combined bugs (when ``combine`` is a method)."""
    naive: bool = False
    """Validate every candidate on the whole suite (no test selection): the P6 baseline."""
    timeout: float | None = None
    """Per-run timeout of a candidate (default: max(5 s, 4 x the suite's time))."""
    statement: StatementWriter | None = None
    fork_server: bool = True
    """Run pytest through a fork server in each worker's episode (False: a fresh interpreter per run)."""


@dataclass
class SynthResult:
    release: Release
    instances: list[Task]
    outcomes: list[Outcome]
    stats: SynthStats
    mutations: dict[str, Mutation] = field(default_factory=dict)


class OutcomeCache:
    """``outcomes.jsonl`` of a work directory, keyed by the run's fingerprint and the mutation key."""

    def __init__(self, work: Path | None, fingerprint: str):
        self.path = work / "outcomes.jsonl" if work else None
        self.fingerprint = fingerprint
        self.known: dict[str, Outcome] = {}
        self._lock = threading.Lock()
        if self.path and self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut by a kill
                if row.get("fingerprint") == fingerprint:
                    self.known[row["outcome"]["key"]] = Outcome.model_validate(row["outcome"])

    def add(self, outcome: Outcome) -> None:
        if self.path is None or outcome.status == "error" or outcome.key in self.known:
            return
        with self._lock:
            self.known[outcome.key] = outcome
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps({"fingerprint": self.fingerprint, "outcome": outcome.model_dump()}) + "\n")


def _methods(options: SynthOptions) -> tuple[list[str], bool]:
    chosen = list(options.methods or METHODS)
    unknown = [m for m in chosen if m not in METHODS]
    if unknown:
        raise SWEWorldError(f"unknown method(s) {unknown}", hint=f"methods: {', '.join(METHODS)}")
    return [m for m in chosen if m != COMBINE], COMBINE in chosen


def _fingerprint(release: Release, options: SynthOptions) -> str:
    payload = {"v": 1, "task": release.task.model_dump(include={"repo", "base_commit", "python", "packages",
                                                               "pip_packages", "test_cmd"}),
               "naive": options.naive, "timeout": options.timeout, "baseline": sorted(release.baseline)}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def combinations(validated: list[Mutation], *, seed: int, limit: int) -> list[Mutation]:
    """Up to ``limit`` combined mutations of 2-3 validated bugs of one file, deterministic for the seed."""
    by_file: dict[str, list[Mutation]] = {}
    for mutation in validated:
        by_file.setdefault(mutation.path, []).append(mutation)
    pools = [ms for _, ms in sorted(by_file.items()) if len(ms) >= 2]
    rng = random.Random(seed)
    out: dict[str, Mutation] = {}
    attempts = 0
    while pools and len(out) < limit and attempts < 20 * limit:
        attempts += 1
        pool = pools[attempts % len(pools)]
        k = min(len(pool), rng.choice((2, 2, 3)))
        try:
            combined = combine(rng.sample(pool, len(pool)), k)
        except ValueError:
            continue
        out.setdefault(combined.key, combined)
    return list(out.values())


def check_item(item: tuple[int, Mutation], checker: Checker) -> Outcome:
    """One item of a run, (index, candidate), checked by the shared ``checker``."""
    return checker(*item)


class _Synthesis:
    """One run: the release, its candidates, the checker the runner's workers call, the cache and the
    counts. Only this process writes the cache (outcomes come back to it in order)."""

    def __init__(self, release: Release, options: SynthOptions, stats: SynthStats, cache: OutcomeCache,
                 on_outcome: Callable[[Outcome], None] | None, runner: Runner | None = None):
        self.release, self.options, self.stats, self.cache, self.on_outcome = release, options, stats, cache, on_outcome
        self.timeout = options.timeout or max(5.0, 4 * release.suite_seconds)
        self.runner = runner or LocalRunner()
        self.checker = Checker(release, self.timeout, naive=options.naive,
                               statement=options.statement or template_statement, fork_server=options.fork_server,
                               known=dict(cache.known))

    def report(self, outcome: Outcome) -> None:
        self.cache.add(outcome)
        self.stats.add(outcome)
        if self.on_outcome:
            self.on_outcome(outcome)

    def run(self, mutations: list[Mutation], limit: int | None, offset: int = 0) -> list[Outcome]:
        """Check ``mutations`` in order until ``limit`` are validated (all of them when None)."""
        def enough(done: list[Outcome]) -> bool:
            return limit is not None and sum(o.status == "validated" for o in done) >= limit

        return map_ordered(list(enumerate(mutations, offset)), check_item, runner=self.runner,
                           workers=self.options.workers, hints=SYNTH_CHECK, group=lambda _: self.release.slug,
                           share=self.checker, enough=enough, on_result=lambda _, outcome: self.report(outcome),
                           on_extra=lambda _, outcome: self.cache.add(outcome))

    def close(self) -> None:
        close_episodes(self.checker.token)


def synthesize(spec: ReleaseSpec, options: SynthOptions, *, builder: EnvBuilder | None = None,
               work: Path | None = None, on_outcome: Callable[[Outcome], None] | None = None,
               on_stage: Callable[[str, int], None] | None = None, runner: Runner | None = None) -> SynthResult:
    """Synthesize validated instances from one release (see the module docstring); the candidate
    checks run on ``runner`` (default: threads here)."""
    builder = builder or EnvBuilder()
    kinds, with_combine = _methods(options)
    stats = SynthStats(repo=spec.repo, naive=options.naive, workers=options.workers, seed=options.seed)
    stats.start()
    release = prepare(spec, builder)
    stats.prepared(release)
    candidates = sample_mutations(release.files, seed=options.seed, max_per_kind=options.max_per_kind,
                                  kinds=kinds) if kinds else []
    candidates = candidates[: options.max_candidates] if options.max_candidates else candidates
    total = options.max_instances
    want_combined = round(total * options.combine_share) if (total and with_combine) else 0
    run = _Synthesis(release, options, stats, OutcomeCache(work, _fingerprint(release, options)), on_outcome,
                     runner)
    try:
        if on_stage:
            on_stage("candidates", len(candidates))
        outcomes = run.run(candidates, total - want_combined if total else None)
        by_key = {m.key: m for m in candidates}
        if with_combine and (want_combined or total is None):
            validated = [by_key[o.key] for o in outcomes if o.status == "validated"]
            limit = want_combined or max(1, len(validated) // 10)
            combos = combinations(validated, seed=options.seed, limit=2 * limit)
            if on_stage:
                on_stage("combinations", len(combos))
            outcomes = [*outcomes, *run.run(combos, limit, offset=len(candidates))]
            by_key.update({m.key: m for m in combos})
    finally:
        run.close()
    stats.finish()
    instances = [make_instance(release, by_key[o.key], o, builder) for o in outcomes if o.status == "validated"]
    return SynthResult(release=release, instances=instances, outcomes=outcomes, stats=stats, mutations=by_key)
