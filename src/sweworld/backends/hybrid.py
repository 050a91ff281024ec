"""The hybrid backend: the sim backend, with a fraction of its work also run for real.

Every simulated step (a command SWT predicted) is audited with probability ``audit_rate``: a fresh
real episode of the task gets the sim episode's current diff, runs the same command in the same
directory, and the two results are compared (exit code, normalized output similarity). Every
evaluation is audited with the same probability: the real harness grades the same prediction. The
agent always sees the simulated result (audits measure the world, they do not steer it). Audits are
counted per run with a Wilson interval (``audit_summary``) and, with ``traces``, stored one JSON line
each (disagreements included) in ``<traces>.audits.jsonl``.
"""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path

from sweworld.backends.real import RealBackend
from sweworld.backends.sim import SimBackend
from sweworld.envs import EnvBuilder
from sweworld.errors import InfraError
from sweworld.harness import patches
from sweworld.harness.predictions import Prediction
from sweworld.harness.report import InstanceReport
from sweworld.types import ExecResult, Task
from sweworld.world.config import WorldConfig
from sweworld.world.metrics import similarity, wilson
from sweworld.world.router import RoutePlan
from sweworld.world.simexec import SimExecutor
from sweworld.world.swt import SimExecResult

AGREE_SIMILARITY = 0.9
"""A step agrees when the exit codes match and the normalized outputs are at least this similar."""


class AuditLog:
    """Thread-safe audit counts, and the records appended to a JSONL file when one is given."""

    def __init__(self, path: Path | None):
        self.path = path
        self.counts = {"steps": [0, 0], "evaluations": [0, 0]}  # [audited, agreed]
        self._lock = threading.Lock()

    def add(self, kind: str, agreed: bool, record: dict) -> None:
        with self._lock:
            self.counts[kind][0] += 1
            self.counts[kind][1] += agreed
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with open(self.path, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps({"kind": kind, "agreed": agreed, **record}) + "\n")

    def summary(self) -> dict:
        with self._lock:
            return {kind: {"audited": n, "agreed": k, "agreement": round(k / n, 4) if n else None,
                           "wilson95": list(wilson(k, n))} for kind, (n, k) in self.counts.items()}


class HybridBackend:
    """Sim episodes and evaluations, audited for real at ``audit_rate`` (see the module docstring)."""

    name = "hybrid"

    def __init__(self, builder: EnvBuilder | None = None, world: WorldConfig | None = None, *,
                 audit_rate: float = 0.1, traces: Path | None = None, seed: int = 0,
                 sim: SimBackend | None = None, real: RealBackend | None = None):
        if not 0.0 <= audit_rate <= 1.0:
            raise ValueError(f"audit_rate must be within [0, 1], got {audit_rate}")
        self.real = real or RealBackend(builder)
        self.sim = sim or SimBackend(world=world, builder=self.real.builder)
        self.audit_rate = audit_rate
        self.audits = AuditLog(Path(f"{traces}.audits.jsonl") if traces else None)
        self._rng = random.Random(seed)
        self._rng_lock = threading.Lock()

    def _draw(self) -> bool:
        with self._rng_lock:
            return self._rng.random() < self.audit_rate

    def prepare(self, task: Task) -> None:
        self.real.prepare(task)  # audits run for real: the environment must exist

    def open(self, task: Task, *, timeout: float | None = None, label: str = "") -> SimExecutor:
        executor = self.sim.open(task, timeout=timeout, label=label)

        def audit(command: str, plan: RoutePlan, predictions: list[SimExecResult], result: ExecResult) -> None:
            if predictions and self._draw():
                self._audit_step(task, executor, command, result)
        executor.on_step = audit
        return executor

    def _audit_step(self, task: Task, executor: SimExecutor, command: str, predicted: ExecResult) -> None:
        cwd = executor.sandbox.run("pwd").output.strip() or executor.workdir
        diff = executor.diff()
        try:
            with self.real.open(task, label=f"{task.instance_id}-audit") as real:
                if diff.strip() and not patches.apply_patch(real, diff, workdir=real.workdir, label="audit").applied:
                    return  # the sim workspace cannot be reproduced: nothing to compare
                actual = real.run(command, cwd=cwd)
        except InfraError as exc:
            self.audits.add("steps", False, {"instance_id": task.instance_id, "command": command,
                                             "error": f"{type(exc).__name__}: {exc}"})
            return
        score = similarity(predicted.output, actual.output)
        agreed = predicted.exit_code == actual.exit_code and score >= AGREE_SIMILARITY
        self.audits.add("steps", agreed, {
            "instance_id": task.instance_id, "command": command, "similarity": round(score, 4),
            "predicted": {"exit_code": predicted.exit_code, "output": predicted.output[-4000:]},
            "real": {"exit_code": actual.exit_code, "output": actual.output[-4000:]}})

    def evaluate(self, task: Task, prediction: Prediction, log_dir: Path, *,
                 timeout: float = 1800.0) -> InstanceReport:
        report = self.sim.evaluate(task, prediction, log_dir, timeout=timeout)
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
