"""The real backend: built environments, isolated copy-on-write sandboxes, the SWE-bench harness."""

from __future__ import annotations

import logging
from pathlib import Path

from sweworld.core.config import RealBackendConfig, Timeouts, timeouts
from sweworld.core.errors import EnvBuildError, SandboxError
from sweworld.core.executor import Executor
from sweworld.core.types import Task
from sweworld.envs import EnvBuilder, InstanceLayer, episode_sandbox, services, wheelhouse
from sweworld.envs.episode import with_row_syscalls
from sweworld.envs.image import ImageEnv, image_sandbox, task_image
from sweworld.envs.scripts import OFFLINE_ENV
from sweworld.harness.evalscript import DETERMINISTIC_ENV
from sweworld.harness.evaluate import Prepared, evaluate_prepared
from sweworld.harness.predictions import Prediction
from sweworld.harness.report import InstanceReport
from sweworld.sandbox import Sandbox, SandboxConfig
from sweworld.toxenv import tox_current_env_shims

logger = logging.getLogger(__name__)


def prepared_instance(builder: EnvBuilder, task: Task, config: SandboxConfig) -> Prepared:
    """Build ``task``'s install layer (if missing) and say how the harness opens its episodes."""
    layer = builder.instance(task)
    stand_ins = services.script_lines([] if config.network else layer.env.recipe.services)
    return Prepared(recipe=layer.env.recipe, build_env={**OFFLINE_ENV, **layer.build_env}, stand_ins=stand_ins,
                    open=lambda: episode_sandbox(layer, config, label=task.instance_id),
                    describe=f"environment {layer.env.key} (python {layer.env.interpreter.version}), "
                             f"layer {layer.key}")


def prepared_image(env: ImageEnv, task: Task, config: SandboxConfig) -> Prepared:
    """How the harness opens ``task``'s episodes on its image (nothing to build or reinstall)."""
    return Prepared(recipe=env.recipe, build_env=dict(OFFLINE_ENV), describe=env.describe,
                    open=lambda: image_sandbox(env, task, config, label=task.instance_id))


def prepared_task(builder: EnvBuilder, task: Task, config: SandboxConfig, env_source: str) -> Prepared:
    """The harness's view of ``task``: its image (``env_source``: ``envs.image``) or its built layer."""
    env = task_image(task, env_source)
    config = with_row_syscalls(config, task)
    return prepared_image(env, task, config) if env is not None else prepared_instance(builder, task, config)


def evaluate_instance(task: Task, prediction: Prediction, log_dir: Path, *, builder: EnvBuilder,
                      timeout: float = timeouts.EVALUATION, config: SandboxConfig | None = None,
                      audits: dict | None = None, env_source: str = "recipe") -> InstanceReport:
    """The real harness on ``prediction`` in a fresh episode over ``builder``'s layer of ``task``, or
    over its image (``env_source``: ``envs.image``); the report written carries ``audits``
    (``evaluate_prepared``)."""
    config = config or SandboxConfig(timeout=timeout)
    return evaluate_prepared(task, prediction, log_dir, timeout=timeout, audits=audits,
                             prepare=lambda: prepared_task(builder, task, config, env_source))


def set_up_episode(sandbox: Sandbox, layer: InstanceLayer, stand_ins: list[str], instance_id: str) -> None:
    """What an agent's episode holds beyond its layer: tox --current-env's interpreter links (under
    .tox, never in a diff) for a test script that is not the harness's, which writes them itself
    (inspect_evals' eval script, a Harbor test.sh); the local stand-ins ``stand_ins`` running, again
    in each fork and after each restore."""
    recipe = layer.env.recipe
    lines = [*tox_current_env_shims(recipe.test_cmd or "", recipe.python), *services.start_lines(stand_ins)]
    if not lines:
        return
    sandbox.setup = "\n".join(lines)  # run again in a fork and after a restore (sandbox/branches.py)
    started = sandbox.run(sandbox.setup, timeout=120)
    if not started.ok:
        raise SandboxError(f"the episode of {instance_id} could not be set up (local stand-ins: "
                           f"{', '.join(stand_ins) or 'none'}): {started.output[-1500:]}",
                           hint="run `sweworld env build` again for this instance; see envs/services.py")


class RealBackend:
    """Episodes over built environments (``EnvBuilder``); evaluation by the harness in a fresh episode.

    ``sandbox_config``: the agent episodes' sandbox settings (default: bwrap);
    ``command_timeout``: the wall limit of one command when ``open`` is given none (``Timeouts.command``);
    ``network``: evaluations reach the real network (no stand-ins started);
    ``traces``: append every command and evaluation to this trace file (``sweworld.world.tracing``);
    ``wheels``: requirements pip and uv in agent episodes may install without a network, from a
    wheelhouse filled on the host (``envs.wheelhouse``: a framework's tool bundles);
    ``env_source``: ``auto``, ``recipe`` or ``image``: which tasks run on their container image
    (``envs.image``: pulled once, nothing built).
    """

    name = "real"
    Config = RealBackendConfig

    @classmethod
    def from_config(cls, config: RealBackendConfig, *, timeouts: Timeouts, builder: EnvBuilder | None = None
                    ) -> RealBackend:
        from sweworld.backends.build import builder_of, sandbox_of
        return cls(builder_of(config, timeouts, builder), sandbox_config=sandbox_of(config, timeouts),
                   network=config.network, traces=config.traces, command_timeout=timeouts.command,
                   wheels=config.wheels, env_source=config.env_source)

    def __init__(self, builder: EnvBuilder | None = None, *, sandbox_config: SandboxConfig | None = None,
                 network: bool = False, traces: Path | None = None, repos_dir: str | Path | None = None,
                 command_timeout: float = timeouts.COMMAND, wheels: list[str] | None = None,
                 env_source: str = "auto"):
        if builder is None:
            from sweworld.repos import RepoStore
            builder = EnvBuilder(RepoStore(repos_dir=repos_dir))
        self.builder = builder
        self.sandbox_config = sandbox_config
        self.network = network
        self.command_timeout = command_timeout
        self.traces = traces
        self.wheels = list(wheels or [])
        self.env_source = env_source
        self._no_wheels: set[str] = set()
        self.trace_store = None
        if traces is not None:
            from sweworld.world.traces import TraceStore
            self.trace_store = TraceStore(traces)

    def image(self, task: Task) -> ImageEnv | None:
        """``task``'s image as its environment (pulled once), None when a recipe builds it."""
        return task_image(task, self.env_source)

    def prepare(self, task: Task) -> None:
        if self.image(task) is None:
            self.builder.instance(task)

    def prepared(self, task: Task, *, timeout: float = timeouts.EVALUATION) -> Prepared:
        """The harness's view of ``task`` (validation runs its tests in these episodes)."""
        return prepared_task(self.builder, task, SandboxConfig(timeout=timeout), self.env_source)

    def open(self, task: Task, *, timeout: float | None = None, label: str = "") -> Executor:
        limit = timeout or self.command_timeout
        config = with_row_syscalls(self.sandbox_config.model_copy(update={"timeout": limit}) if self.sandbox_config
                                   else SandboxConfig(timeout=limit), task)
        env = self.image(task)
        if env is not None:
            return self._traced(image_sandbox(env, task, config, label=label or task.instance_id), task)
        layer = self.builder.instance(task)
        # the local stand-ins of the tests' network services run for the whole episode, as the real
        # services are there for a container with the network: an agent's or a framework's own test
        # script reaches them (the harness's evaluations start their own)
        names = [] if config.network else list(layer.services)
        if names:
            config = config.model_copy(update={"env": {**services.environment(names), **config.env}})
        sandbox = episode_sandbox(layer, config, label=label or task.instance_id,
                                  wheels=self._wheelhouse(layer, task.instance_id))
        try:
            set_up_episode(sandbox, layer, names, task.instance_id)
        except BaseException:
            sandbox.close()
            raise
        return self._traced(sandbox, task)

    def _traced(self, sandbox: Executor, task: Task) -> Executor:
        if self.trace_store is None:
            return sandbox
        from sweworld.world.tracing import TracingExecutor
        return TracingExecutor(sandbox, task, self.trace_store)

    def _wheelhouse(self, layer: InstanceLayer, instance_id: str) -> Path | None:
        """The wheelhouse of ``wheels`` for the layer's Python; None (a warning, once per Python) when
        pip cannot fill it: the episode opens without, and what installs from it fails there as it
        would without the wheels."""
        if not self.wheels:
            return None
        interpreter = layer.env.interpreter
        if interpreter.full_version in self._no_wheels:
            return None
        try:
            return wheelhouse.ensure(self.wheels, interpreter)
        except EnvBuildError as exc:
            self._no_wheels.add(interpreter.full_version)
            logger.warning("%s: episodes of Python %s open without the wheelhouse: %s", instance_id,
                           interpreter.full_version, exc)
            return None

    def evaluate(self, task: Task, prediction: Prediction, log_dir: Path, *,
                 timeout: float = timeouts.EVALUATION, audits: dict | None = None) -> InstanceReport:
        """The harness's report, written into ``log_dir`` carrying ``audits`` when given (a hybrid
        backend's evaluation routed here)."""
        config = SandboxConfig(timeout=timeout, env=DETERMINISTIC_ENV, network=self.network)
        report = evaluate_instance(task, prediction, log_dir, builder=self.builder, timeout=timeout, config=config,
                                   audits=audits, env_source=self.env_source)
        if self.trace_store is not None and self.image(task) is None:
            from sweworld.world.tracing import record_eval
            record_eval(self.trace_store, task, prediction.model_patch, report, log_dir,
                        lambda: episode_sandbox(self.builder.instance(task), SandboxConfig(), label=task.instance_id))
        return report
