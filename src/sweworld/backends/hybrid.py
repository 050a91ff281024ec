"""The hybrid backend: the sim backend, with a fraction of its work also run for real.

Every simulated step (a command SWT predicted) is audited with probability ``audit_rate``: a fresh
real episode of the task gets the sim episode's current diff, runs the same command in the same
directory, and the two results are compared (outcome: the exit code and, for a test run, its closing
counts, ``metrics.same_outcome``; normalized output similarity). Every
evaluation is audited with the same probability: the real harness grades the same prediction. The
agent always sees the simulated result (audits measure the world, they do not steer it). Audits are
counted per run with a Wilson interval (``audit_summary``) and, with ``traces``, stored one JSON line
each (disagreements included) in ``<traces>.audits.jsonl``.

Confidence routing (``route_below=c``): a simulated step whose prediction carries a confidence under
``c`` (a simulation failure counts as 0; served models that give no confidence are never routed)
runs for real instead, in a fresh real episode given the sim episode's diff, and the agent sees the
real result (its file changes stay in that episode); an evaluation whose SWR probability is not
decisive (``max(p, 1 - p) < c``) is graded by the real harness. The summary counts the share of
simulated steps and of evaluations that ran for real; a routed item agrees by construction, so with
``audit_rate=1`` the summary's ``agreement_with_routing`` is the agreement the agent experienced.
"""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path

from sweworld.backends.real import RealBackend
from sweworld.backends.sim import SimBackend
from sweworld.config import timeouts
from sweworld.envs import EnvBuilder
from sweworld.errors import InfraError
from sweworld.harness import patches
from sweworld.harness.predictions import Prediction
from sweworld.harness.report import InstanceReport
from sweworld.types import ExecResult, Task
from sweworld.world.config import WorldConfig
from sweworld.world.metrics import same_outcome, similarity, wilson
from sweworld.world.router import RoutePlan
from sweworld.world.simexec import SimExecutor
from sweworld.world.swt import SimExecResult

AGREE_SIMILARITY = 0.9
"""A step agrees exactly when the outcomes match and the normalized outputs are at least this similar."""


class AuditLog:
    """Thread-safe audit counts, and the records appended to a JSONL file when one is given."""

    def __init__(self, path: Path | None):
        self.path = path
        self.counts = {"steps": [0, 0, 0], "evaluations": [0, 0, 0]}  # [audited, agreed, same outcome/verdict]
        self.routing = {"steps": [0, 0], "evaluations": [0, 0]}  # [simulated items, ran for real]
        self._lock = threading.Lock()

    def routed(self, kind: str, real: bool) -> None:
        """One simulated step or evaluation, ``real`` when it was routed to real execution."""
        with self._lock:
            self.routing[kind][0] += 1
            self.routing[kind][1] += real

    def add(self, kind: str, agreed: bool, record: dict, *, outcome_agreed: bool | None = None) -> None:
        """One audit; ``outcome_agreed``: the outcome (steps) or verdict agrees, whatever the output."""
        with self._lock:
            self.counts[kind][0] += 1
            self.counts[kind][1] += agreed
            self.counts[kind][2] += agreed if outcome_agreed is None else outcome_agreed
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with open(self.path, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps({"kind": kind, "agreed": agreed, **record}) + "\n")

    def summary(self) -> dict:
        with self._lock:
            out = {}
            for kind, (n, k, same) in self.counts.items():
                total, real = self.routing[kind]
                out[kind] = {"audited": n, "agreed": k, "agreement": round(k / n, 4) if n else None,
                             "wilson95": list(wilson(k, n)), "outcome_agreement": round(same / n, 4) if n else None,
                             "simulated": total, "ran_real": real, "share_real": round(real / total, 4) if total else None}
                if total and n == total - real:  # every non-routed item audited: what the agent experienced
                    out[kind]["agreement_with_routing"] = round((k + real) / total, 4)
                    out[kind]["wilson95_with_routing"] = list(wilson(k + real, total))
                    out[kind]["outcome_agreement_with_routing"] = round((same + real) / total, 4)
            return out


class EpisodeHooks:
    """The ``StepHooks`` of one hybrid episode of ``task``: confidence routing (when the backend
    routes) and step audits."""

    def __init__(self, backend: HybridBackend, task: Task):
        self.backend, self.task = backend, task

    def decide(self, executor: SimExecutor, command: str, predictions: list[SimExecResult], cwd: str | None,
               timeout: float | None) -> ExecResult | None:
        hybrid = self.backend
        if hybrid.route_below is None:
            return None
        confidence = min((0.0 if p.sim_failure else (1.0 if p.confidence is None else p.confidence))
                         for p in predictions)
        real = hybrid._run_real(self.task, executor, command, cwd) if confidence < hybrid.route_below else None
        hybrid.audits.routed("steps", real is not None)
        return real

    def after_step(self, executor: SimExecutor, command: str, plan: RoutePlan, predictions: list[SimExecResult],
                   result: ExecResult) -> None:
        hybrid = self.backend
        if predictions and not result.simulated and hybrid.route_below is not None:
            return  # routed to real execution: nothing to audit
        if predictions and hybrid._draw():
            hybrid._audit_step(self.task, executor, command, result)


class HybridBackend:
    """Sim episodes and evaluations, audited for real at ``audit_rate`` (see the module docstring)."""

    name = "hybrid"

    def __init__(self, builder: EnvBuilder | None = None, world: WorldConfig | None = None, *,
                 audit_rate: float = 0.1, traces: Path | None = None, seed: int = 0,
                 route_below: float | None = None, sim: SimBackend | None = None, real: RealBackend | None = None):
        if not 0.0 <= audit_rate <= 1.0:
            raise ValueError(f"audit_rate must be within [0, 1], got {audit_rate}")
        self.real = real or RealBackend(builder)
        self.sim = sim or SimBackend(world=world, builder=self.real.builder)
        self.audit_rate = audit_rate
        self.route_below = route_below
        self.audits = AuditLog(Path(f"{traces}.audits.jsonl") if traces else None)
        self._rng = random.Random(seed)
        self._rng_lock = threading.Lock()

    def _draw(self) -> bool:
        with self._rng_lock:
            return self._rng.random() < self.audit_rate

    def prepare(self, task: Task) -> None:
        self.real.prepare(task)  # audits run for real: the environment must exist

    def open(self, task: Task, *, timeout: float | None = None, label: str = "") -> SimExecutor:
        return self.sim.open(task, timeout=timeout, label=label, hooks=EpisodeHooks(self, task))

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

    def _audit_step(self, task: Task, executor: SimExecutor, command: str, predicted: ExecResult) -> None:
        actual = self._run_real(task, executor, command)
        if actual is None:
            self.audits.add("steps", False, {"instance_id": task.instance_id, "command": command,
                                             "error": "the step could not be run for real"})
            return
        score = similarity(predicted.output, actual.output)
        same = same_outcome(predicted.output, predicted.exit_code, actual.output, actual.exit_code)
        agreed = same and score >= AGREE_SIMILARITY
        self.audits.add("steps", agreed, outcome_agreed=same, record={
            "instance_id": task.instance_id, "command": command, "similarity": round(score, 4),
            "predicted": {"exit_code": predicted.exit_code, "output": predicted.output[-4000:]},
            "real": {"exit_code": actual.exit_code, "output": actual.output[-4000:]}})

    def evaluate(self, task: Task, prediction: Prediction, log_dir: Path, *,
                 timeout: float = timeouts.EVALUATION) -> InstanceReport:
        report = self.sim.evaluate(task, prediction, log_dir, timeout=timeout)
        probability = getattr(report, "sim_probability", None)
        if self.route_below is not None and report.error is None and report.patch_successfully_applied:
            routed = probability is not None and max(probability, 1 - probability) < self.route_below
            self.audits.routed("evaluations", routed)
            if routed:  # not decisive: the real harness grades it, in the same directory
                return self.real.evaluate(task, prediction, log_dir, timeout=timeout)
        if report.error is None and self._draw():
            real = self.real.evaluate(task, prediction, log_dir / "audit", timeout=timeout)
            if real.error_kind != "infra":
                self.audits.add("evaluations", real.resolved == report.resolved, {
                    "instance_id": task.instance_id, "predicted": report.resolved, "real": real.resolved,
                    "probability": getattr(report, "sim_probability", None)})
        return report

    def audit_summary(self) -> dict:
        """Audited and agreeing steps and evaluations, with 95 % Wilson intervals."""
        return self.audits.summary()
