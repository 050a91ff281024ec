"""The real backend: built environments, isolated copy-on-write sandboxes, the SWE-bench harness."""

from __future__ import annotations

from pathlib import Path

from sweworld.envs import EnvBuilder, episode_sandbox
from sweworld.executor import Executor
from sweworld.harness.evalscript import DETERMINISTIC_ENV
from sweworld.harness.evaluate import evaluate_instance
from sweworld.harness.predictions import Prediction
from sweworld.harness.report import InstanceReport
from sweworld.sandbox import SandboxConfig
from sweworld.types import Task

EPISODE_TIMEOUT_CAP = 600.0
"""Default wall timeout of one agent command (the sandbox's per-command limit)."""


class RealBackend:
    """Episodes over built environments (``EnvBuilder``); evaluation by the harness in a fresh episode.

    ``sandbox_config``: the agent episodes' sandbox settings (default: per-command timeout);
    ``network``: evaluations reach the real network (no stand-ins started);
    ``traces``: append every command and evaluation to this trace file (``sweworld.world.tracing``).
    """

    name = "real"

    def __init__(self, builder: EnvBuilder | None = None, *, sandbox_config: SandboxConfig | None = None,
                 network: bool = False, traces: Path | None = None):
        self.builder = builder or EnvBuilder()
        self.sandbox_config = sandbox_config
        self.network = network
        self.traces = traces
        self.trace_store = None
        if traces is not None:
            from sweworld.world.traces import TraceStore
            self.trace_store = TraceStore(traces)

    def prepare(self, task: Task) -> None:
        self.builder.instance(task)

    def open(self, task: Task, *, timeout: float | None = None, label: str = "") -> Executor:
        config = self.sandbox_config or SandboxConfig(timeout=min(timeout or EPISODE_TIMEOUT_CAP, EPISODE_TIMEOUT_CAP))
        sandbox = episode_sandbox(self.builder.instance(task), config, label=label or task.instance_id)
        if self.trace_store is None:
            return sandbox
        from sweworld.world.tracing import TracingExecutor
        return TracingExecutor(sandbox, task, self.trace_store)

    def evaluate(self, task: Task, prediction: Prediction, log_dir: Path, *,
                 timeout: float = 1800.0) -> InstanceReport:
        config = SandboxConfig(timeout=timeout, env=DETERMINISTIC_ENV, network=self.network)
        report = evaluate_instance(task, prediction, log_dir, builder=self.builder, timeout=timeout, config=config)
        if self.trace_store is not None:
            from sweworld.world.tracing import record_eval
            record_eval(self.trace_store, task, prediction.model_patch, report, log_dir,
                        lambda: episode_sandbox(self.builder.instance(task), SandboxConfig(), label=task.instance_id))
        return report
