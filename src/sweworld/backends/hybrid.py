"""The hybrid backend: the sim backend, with a fraction of its work also run for real.

Every simulated step (a command SWT predicted) is audited with probability ``audit_rate``: a fresh
real episode of the task gets the sim episode's current diff, runs the same command in the same
directory, and the two results are compared (outcome: the exit code and, for a test run, its closing
counts, ``metrics.same_outcome``; normalized output similarity). Every
evaluation is audited with the same probability: the real harness grades the same prediction. The
agent always sees the simulated result (audits measure the world, they do not steer it). Each
episode and each evaluation carries its own counts (``backends.audits``: the trajectory's and the
report's ``audits``), which a run's summary adds up with a Wilson interval; with ``traces``, each
audit is also stored as one JSON line (disagreements included) in ``<traces>.audits.jsonl``.
Whether an item is audited is drawn from ``seed`` and the item itself (the instance and the
episode's label, or the evaluation's log directory name), not from the order items ran in, so the
same run audits the same items under any runner.

Confidence routing (``route_below=c``): a simulated step whose prediction carries a confidence under
``c`` (a simulation failure counts as 0; served models that give no confidence are never routed)
runs for real instead, in a fresh real episode given the sim episode's diff, and the agent sees the
real result (its file changes stay in that episode); an evaluation whose SWR probability is not
decisive (``max(p, 1 - p) < c``) is graded by the real harness. The summary counts the share of
simulated steps and of evaluations that ran for real; a routed item agrees by construction, so with
``audit_rate=1`` the summary's ``agreement_with_routing`` is the agreement the agent experienced.
"""

from __future__ import annotations

import copy
import hashlib
import random
from pathlib import Path

from sweworld.backends import audits
from sweworld.backends.real import RealBackend
from sweworld.backends.sim import SimBackend
from sweworld.core.config import HybridBackendConfig, Timeouts, timeouts
from sweworld.core.errors import InfraError
from sweworld.core.types import ExecResult, Task
from sweworld.envs import EnvBuilder
from sweworld.harness import patches
from sweworld.harness.predictions import Prediction
from sweworld.harness.report import InstanceReport, write_report
from sweworld.world.config import WorldConfig
from sweworld.world.metrics import same_outcome, similarity
from sweworld.world.router import RoutePlan
from sweworld.world.simexec import SimExecutor
from sweworld.world.swt import SimExecResult

AGREE_SIMILARITY = 0.9
"""A step agrees exactly when the outcomes match and the normalized outputs are at least this similar."""


class EpisodeHooks:
    """The ``StepHooks`` of one hybrid episode of ``task``: confidence routing (when the backend
    routes) and step audits, counted in ``audits`` (the episode's tally), drawn from ``rng``."""

    def __init__(self, backend: HybridBackend, task: Task, rng: random.Random):
        self.backend, self.task, self.rng = backend, task, rng
        self.audits = audits.new_tally()

    def fork(self) -> EpisodeHooks:
        """A forked episode's hooks: the tally so far and the draws go on apart (``ForkableHooks``)."""
        child = EpisodeHooks(self.backend, self.task, random.Random())
        child.rng.setstate(self.rng.getstate())
        child.audits = copy.deepcopy(self.audits)
        return child

    def decide(self, executor: SimExecutor, command: str, predictions: list[SimExecResult], cwd: str | None,
               timeout: float | None) -> ExecResult | None:
        hybrid = self.backend
        if hybrid.route_below is None:
            return None
        confidence = min((0.0 if p.sim_failure else (1.0 if p.confidence is None else p.confidence))
                         for p in predictions)
        real = hybrid._run_real(self.task, executor, command, cwd) if confidence < hybrid.route_below else None
        audits.routed(self.audits, "steps", real is not None)
        return real

    def after_step(self, executor: SimExecutor, command: str, plan: RoutePlan, predictions: list[SimExecResult],
                   result: ExecResult) -> None:
        hybrid = self.backend
        if predictions and not result.simulated and hybrid.route_below is not None:
            return  # routed to real execution: nothing to audit
        if predictions and self.rng.random() < hybrid.audit_rate:
            hybrid._audit_step(self.task, executor, command, result, self.audits)


class HybridBackend:
    """Sim episodes and evaluations, audited for real at ``audit_rate`` (see the module docstring)."""

    name = "hybrid"
    Config = HybridBackendConfig

    @classmethod
    def from_config(cls, config: HybridBackendConfig, *, timeouts: Timeouts, builder: EnvBuilder | None = None
                    ) -> HybridBackend:
        from sweworld.backends.build import builder_of, sandbox_of, world_config
        builder = builder_of(config, timeouts, builder)
        sim = SimBackend(world=world_config(config.world), builder=builder, sandbox_config=sandbox_of(config, timeouts),
                         command_timeout=timeouts.command, env_source=config.env_source)
        return cls(builder, audit_rate=config.audit_rate, traces=config.traces, route_below=config.route_below,
                   sim=sim, real=RealBackend(builder, command_timeout=timeouts.command, env_source=config.env_source))

    def __init__(self, builder: EnvBuilder | None = None, world: WorldConfig | None = None, *,
                 audit_rate: float = 0.1, traces: Path | None = None, seed: int = 0,
                 route_below: float | None = None, sim: SimBackend | None = None, real: RealBackend | None = None):
        if not 0.0 <= audit_rate <= 1.0:
            raise ValueError(f"audit_rate must be within [0, 1], got {audit_rate}")
        self.real = real or RealBackend(builder)
        self.sim = sim or SimBackend(world=world, builder=self.real.builder)
        self.audit_rate = audit_rate
        self.route_below = route_below
        self.records = audits.AuditRecords(Path(f"{traces}.audits.jsonl") if traces else None)
        self.seed = seed

    def _rng(self, *item: str) -> random.Random:
        """The draws of one item (an episode, an evaluation): from the seed and the item alone."""
        return random.Random(hashlib.sha256(":".join((str(self.seed), *item)).encode()).digest())

    def prepare(self, task: Task) -> None:
        self.real.prepare(task)  # audits run for real: the environment must exist

    def open(self, task: Task, *, timeout: float | None = None, label: str = "") -> SimExecutor:
        hooks = EpisodeHooks(self, task, self._rng(task.instance_id, "episode", label))
        return self.sim.open(task, timeout=timeout, label=label, hooks=hooks)

    def _run_real(self, task: Task, executor: SimExecutor, command: str, cwd: str | None = None) -> ExecResult | None:
        """``command`` in a fresh real episode given the sim episode's diff, in its directory; None
        when the workspace cannot be reproduced there or the real side fails."""
        cwd = cwd or executor.sandbox.run("pwd").output.strip() or executor.workdir
        diff = executor.diff()
        try:
            with self.real.open(task, label=f"{task.instance_id}-real") as real:
                if diff.strip() and not patches.apply_patch(real, diff, workdir=real.workdir, label="hybrid").applied:
                    return None
                return real.run(command, cwd=cwd)
        except InfraError:
            return None

    def _audit_step(self, task: Task, executor: SimExecutor, command: str, predicted: ExecResult,
                    tally: dict) -> None:
        actual = self._run_real(task, executor, command)
        if actual is None:
            audits.audited(tally, "steps", False)
            self.records.write("steps", False, {"instance_id": task.instance_id, "command": command,
                                                "error": "the step could not be run for real"})
            return
        score = similarity(predicted.output, actual.output)
        same = same_outcome(predicted.output, predicted.exit_code, actual.output, actual.exit_code)
        agreed = same and score >= AGREE_SIMILARITY
        audits.audited(tally, "steps", agreed, outcome_agreed=same)
        self.records.write("steps", agreed, {
            "instance_id": task.instance_id, "command": command, "similarity": round(score, 4),
            "predicted": {"exit_code": predicted.exit_code, "output": predicted.output[-4000:]},
            "real": {"exit_code": actual.exit_code, "output": actual.output[-4000:]}})

    def evaluate(self, task: Task, prediction: Prediction, log_dir: Path, *,
                 timeout: float = timeouts.EVALUATION) -> InstanceReport:
        """SWR's verdict, graded for real instead when routed, audited at ``audit_rate``; the
        report carries this evaluation's tally (``report.audits``) and is written into ``log_dir``
        once, with it (the sim's after the audit, the real harness's when routed)."""
        tally = audits.new_tally()
        report = self.sim.verdict(task, prediction, log_dir, timeout=timeout)  # not written yet
        probability = getattr(report, "sim_probability", None)
        if self.route_below is not None and report.error is None and report.patch_successfully_applied:
            routed = probability is not None and max(probability, 1 - probability) < self.route_below
            audits.routed(tally, "evaluations", routed)
            if routed:  # not decisive: the real harness grades it, in the same directory
                return self.real.evaluate(task, prediction, log_dir, timeout=timeout, audits=tally)
        if report.error is None and self._rng(task.instance_id, "evaluation", log_dir.name).random() < self.audit_rate:
            real = self.real.evaluate(task, prediction, log_dir / "audit", timeout=timeout)
            if real.error_kind != "infra":
                agreed = real.resolved == report.resolved
                audits.audited(tally, "evaluations", agreed)
                self.records.write("evaluations", agreed, {
                    "instance_id": task.instance_id, "predicted": report.resolved, "real": real.resolved,
                    "probability": probability})
        report.audits = tally
        write_report(log_dir, report)
        return report
