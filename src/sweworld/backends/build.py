"""A backend from its configuration (``make_backend(config)``): the environment builder over the
configured clones, the world's models, the sandbox and the command and build timeouts."""

from __future__ import annotations

from typing import Any

from sweworld.config import BackendConfig, Timeouts, WorldModelConfig
from sweworld.envs import EnvBuilder
from sweworld.repos import RepoStore
from sweworld.world.config import WorldConfig


def world_config(world: WorldModelConfig) -> WorldConfig:
    """The world's models of ``world`` (its kind unset: openai with URLs, else embedded)."""
    return WorldConfig.from_options(urls=world.urls or None, model=world.model, style=world.style,
                                    kind=world.kind or ("openai" if world.urls else "embedded"),
                                    traces=world.traces, dataset=world.dataset, max_tokens=world.max_tokens)


def from_config(config: BackendConfig, *, timeouts: Timeouts | None = None, builder: EnvBuilder | None = None) -> Any:
    """The backend ``config`` names (``InfraError``/``ConfigError`` reach the caller)."""
    from sweworld.backends.real import RealBackend
    from sweworld.backends.sim import SimBackend
    from sweworld.sandbox import SandboxConfig

    timeouts = timeouts or Timeouts()
    builder = builder or EnvBuilder(RepoStore(repos_dir=config.repos_dir), timeout=timeouts.build)
    sandbox = None
    if config.sandbox is not None:
        scratch = {} if config.sandbox.scratch_dirs is None else {"scratch_dirs": config.sandbox.scratch_dirs}
        sandbox = SandboxConfig(isolation=config.sandbox.isolation, timeout=timeouts.command, **scratch)
    if config.kind == "real":
        return RealBackend(builder, sandbox_config=sandbox, network=config.network, traces=config.traces,
                           command_timeout=timeouts.command, wheels=config.wheels)
    sim = SimBackend(world=world_config(config.world), builder=builder, sandbox_config=sandbox,
                     command_timeout=timeouts.command)
    if config.kind == "sim":
        return sim
    from sweworld.backends.hybrid import HybridBackend
    return HybridBackend(builder, audit_rate=config.audit_rate, traces=config.traces, route_below=config.route_below,
                         sim=sim, real=RealBackend(builder, command_timeout=timeouts.command))
