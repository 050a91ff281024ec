"""The sim backend: the episode's real copy-on-write workspace of the base tree, no environment;
code execution predicted by SWT (``world.simexec.SimExecutor``), evaluations by SWR (which read the
base tree in place: ``world.treeview``; no episode).

Nothing is built: a task whose environment cannot be built (a missing interpreter or system
package) still runs. The disk a sim task needs is its shared base tree. A task whose environment is
a container image (``envs.image``, ``env_source``) has its base tree read from the image's
repository directory (``oci.tree``: the layers merged as hard links, nothing run).
"""

from __future__ import annotations

from pathlib import Path

from sweworld.core.config import SimBackendConfig, Timeouts, timeouts
from sweworld.core.errors import SWEWorldError
from sweworld.core.types import Task
from sweworld.envs import EnvBuilder
from sweworld.envs.image import ImageEnv, task_image
from sweworld.harness.predictions import Prediction
from sweworld.harness.report import InstanceReport
from sweworld.repos import RepoStore
from sweworld.sandbox import Layers, Sandbox, SandboxConfig
from sweworld.world.config import WorldConfig
from sweworld.world.simeval import evaluate_simulated, simulated_report
from sweworld.world.simexec import SimExecutor, StepHooks
from sweworld.world.swr import SWR
from sweworld.world.swt import SWT
from sweworld.world.treeview import TreeView


class SimBackend:
    """Sim episodes and SWR evaluations; ``swt``/``swr`` override what ``world`` would build;
    ``command_timeout``: the wall limit of one command when ``open`` is given none."""

    name = "sim"
    Config = SimBackendConfig

    @classmethod
    def from_config(cls, config: SimBackendConfig, *, timeouts: Timeouts, builder: EnvBuilder | None = None
                    ) -> SimBackend:
        from sweworld.backends.build import builder_of, sandbox_of, world_config
        return cls(world=world_config(config.world), builder=builder_of(config, timeouts, builder),
                   sandbox_config=sandbox_of(config, timeouts), command_timeout=timeouts.command,
                   env_source=config.env_source)

    def __init__(self, repos: RepoStore | None = None, world: WorldConfig | None = None, *,
                 swt: SWT | None = None, swr: SWR | None = None, sandbox_config: SandboxConfig | None = None,
                 builder: EnvBuilder | None = None, command_timeout: float = timeouts.COMMAND,
                 env_source: str = "auto"):
        self.builder = builder  # only to show an already-built layer's artefacts; sim builds nothing
        self.repos = builder.repos if builder is not None else (repos or RepoStore())
        self.world = world or WorldConfig.embedded()  # no world given: the CPU models, as the CLI
        self.swt = swt or self.world.make_swt()
        self.swr = swr or self.world.make_swr()
        self.sandbox_config = sandbox_config
        self.command_timeout = command_timeout
        self.env_source = env_source

    def image(self, task: Task) -> ImageEnv | None:
        """``task``'s image when it runs on one (``envs.image``), pulled once; None otherwise."""
        return task_image(task, self.env_source)

    def base_tree(self, task: Task) -> Path:
        """``task``'s base tree: its image's repository directory when it runs on an image, else the
        repository at its base commit."""
        env = self.image(task)
        return env.tree() if env is not None else self.repos.base_tree(task)

    def prepare(self, task: Task) -> None:
        self.base_tree(task)

    def workspace(self, task: Task, *, timeout: float | None = None, label: str = "") -> Sandbox:
        """A real isolated episode of the base tree (no environment mounted); when a real install
        layer of the task is already built (and ``builder`` given), its build artefacts
        (``__pycache__``, ``*.egg-info``) lie over the tree as in a real episode."""
        limit = timeout or self.command_timeout
        config = (self.sandbox_config.model_copy(update={"timeout": limit}) if self.sandbox_config
                  else SandboxConfig(timeout=limit))
        env = self.image(task)
        lowers = [env.tree() if env is not None else self.repos.base_tree(task)]
        built = None if env is not None else self._built_testbed(task)
        if built is not None:
            lowers.insert(0, built)
        return Sandbox({"/testbed": Layers(lowers)}, config=config, base_commit=task.base_commit,
                       label=label or task.instance_id)

    def _built_testbed(self, task: Task) -> Path | None:
        if self.builder is None:
            return None
        try:
            return self.builder.built_testbed(task)
        except SWEWorldError:  # no recipe, no interpreter...: the base tree alone
            return None

    def open(self, task: Task, *, timeout: float | None = None, label: str = "",
             hooks: StepHooks | None = None) -> SimExecutor:
        """A sim episode; ``hooks`` (``world.simexec.StepHooks``) see and may route its commands."""
        return SimExecutor(self.workspace(task, timeout=timeout, label=label), task, self.swt, hooks=hooks)

    def tree_view(self, task: Task) -> TreeView:
        """What an evaluation reads: the base tree in place (``world.treeview``), no episode: an SWR
        evaluation runs no command, so no sandbox starts."""
        return TreeView(self.base_tree(task))

    def evaluate(self, task: Task, prediction: Prediction, log_dir: Path, *,
                 timeout: float = timeouts.EVALUATION) -> InstanceReport:
        return evaluate_simulated(task, prediction, log_dir, swr=self.swr, open_workspace=lambda: self.tree_view(task))

    def verdict(self, task: Task, prediction: Prediction, log_dir: Path, *,
                timeout: float = timeouts.EVALUATION) -> InstanceReport:
        """``evaluate`` without writing the report into ``log_dir`` (``world.simeval.simulated_report``:
        the caller writes it once, ``harness.report.write_report``)."""
        return simulated_report(task, prediction, log_dir, swr=self.swr, open_workspace=lambda: self.tree_view(task))
