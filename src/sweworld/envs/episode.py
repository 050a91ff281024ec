"""Open an isolated episode of a task: its install layer and environment under a private upper."""

from __future__ import annotations

import logging
from pathlib import Path

from sweworld.core.errors import DatasetError
from sweworld.core.types import Task, as_list
from sweworld.envs import services, wheelhouse
from sweworld.envs.build import VENV, EnvBuilder, InstanceLayer, _ro_paths, tool_mounts, uv_binary
from sweworld.envs.scripts import OFFLINE_ENV
from sweworld.envs.services import SERVICES_MOUNT
from sweworld.sandbox import Dir, Layers, Sandbox, SandboxConfig

log = logging.getLogger(__name__)

GiB = 1 << 30
NODE_ADDRESS_SPACE = 64 * GiB
"""RLIMIT_AS of a JavaScript episode: V8 reserves about 10 GiB of address space (guard regions, not
memory) for each WebAssembly memory, which the default 8 GiB refuses ("Cannot allocate Wasm memory":
vitest, es-module-lexer); V8's own heap limit still bounds what it uses."""


def episode_sandbox(layer: InstanceLayer, config: SandboxConfig | None = None, *, label: str = "",
                    wheels: Path | None = None) -> Sandbox:
    """A fresh copy-on-write workspace over an already-built instance layer (cheap: no copy);
    ``wheels``: a wheelhouse (``envs.wheelhouse``) pip and uv in the episode install from."""
    mounts = {"/testbed": Layers([layer.testbed, layer.tree]), VENV: Layers([layer.venv, layer.env.venv]),
              **tool_mounts(uv_binary())}
    ro_paths = _ro_paths(layer.env.interpreter)
    for name, service in layer.services.items():  # local stand-ins, read-only (see envs/services.py)
        mounts[f"{SERVICES_MOUNT}/{name}/venv"] = Dir(service.venv)
        ro_paths += [p for p in _ro_paths(service.interpreter) if p not in ro_paths]
    config = config or SandboxConfig()
    if layer.env.recipe.language == "javascript" and config.memory is not None and config.memory < NODE_ADDRESS_SPACE:
        config = config.model_copy(update={"memory": NODE_ADDRESS_SPACE})
    # pip in an episode installs from local sources (no network there): a script written for an image
    # with the network (SWE-bench's eval script reinstalls a non-editable package) builds offline
    config = config.model_copy(update={"env": {**OFFLINE_ENV, **config.env}})
    if wheels is not None:
        mounts[wheelhouse.MOUNT] = Dir(wheels)
        config = config.model_copy(update={"env": {**config.env, **wheelhouse.environment()}})
    if layer.services and not config.network:  # with the real network the real hosts answer
        config = config.model_copy(update={"hosts": {**config.hosts, **services.hosts(list(layer.services))}})
    return Sandbox(mounts, config=config, base_commit=layer.base_commit, ro_paths=ro_paths, label=label)


def open_episode(task: Task, builder: EnvBuilder | None = None, config: SandboxConfig | None = None) -> Sandbox:
    """Build what is missing (repository, environment, install layer), then open an episode."""
    builder = builder or EnvBuilder()
    layer = builder.instance(task)
    return episode_sandbox(layer, config, label=task.instance_id)


def with_row_syscalls(config: SandboxConfig, task: Task) -> SandboxConfig:
    """``config`` plus the system calls the row of ``task`` asks the seccomp filter for (its
    ``allow_syscalls`` field: a list, a JSON-encoded one, or one name; ``core.types.as_list``), logged
    by name; ``DatasetError`` for a field that is not names."""
    try:
        value = as_list((task.model_extra or {}).get("allow_syscalls"))
    except ValueError:
        value = None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DatasetError(f"{task.instance_id}: allow_syscalls must be a list of system call names, got "
                           f"{(task.model_extra or {}).get('allow_syscalls')!r}",
                           hint='write e.g. "allow_syscalls": ["keyctl"], or drop the field')
    wanted = [v for v in value if v not in config.allow_syscalls]
    if not wanted:
        return config
    log.warning("%s: its row allows %s (denied to episodes by default)", task.instance_id, ", ".join(wanted))
    return config.model_copy(update={"allow_syscalls": [*config.allow_syscalls, *wanted]})
