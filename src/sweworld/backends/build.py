"""What the built-in backends' ``from_config`` share: the environment builder over the configured
clones, the episodes' sandbox settings and the world's models. ``from_config(config)`` builds the
backend ``config`` names through the registry (``make_backend(config)`` does the same)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sweworld.core.config import BACKENDS, Timeouts, WorldModelConfig
from sweworld.core.errors import ConfigError
from sweworld.envs import EnvBuilder
from sweworld.repos import RepoStore
from sweworld.world.config import WorldConfig

if TYPE_CHECKING:
    from pydantic import BaseModel

    from sweworld.sandbox import SandboxConfig


def world_config(world: WorldModelConfig) -> WorldConfig:
    """The world's models of ``world`` (its kind defaulted by ``WorldModelConfig``: openai with URLs,
    else embedded)."""
    return WorldConfig.from_options(urls=world.urls or None, model=world.model, style=world.style, kind=world.kind,
                                    traces=world.traces, dataset=world.dataset, max_tokens=world.max_tokens)


def builder_of(config: Any, timeouts: Timeouts, builder: EnvBuilder | None) -> EnvBuilder:
    """``builder``, else one over the configured clones with the build timeout."""
    return builder or EnvBuilder(RepoStore(repos_dir=getattr(config, "repos_dir", None)), timeout=timeouts.build)


def sandbox_of(config: Any, timeouts: Timeouts) -> SandboxConfig | None:
    """The episodes' sandbox settings of ``config`` (None: the backend's default)."""
    from sweworld.sandbox import SandboxConfig
    settings = getattr(config, "sandbox", None)
    if settings is None:
        return None
    scratch = {} if settings.scratch_dirs is None else {"scratch_dirs": settings.scratch_dirs}
    return SandboxConfig(isolation=settings.isolation, timeout=timeouts.command, allow_syscalls=settings.allow_syscalls,
                         **scratch)


def from_config(config: BaseModel, *, timeouts: Timeouts | None = None, builder: EnvBuilder | None = None) -> Any:
    """The backend ``config`` names, built by its registered class's ``from_config``
    (``InfraError``/``ConfigError`` reach the caller)."""
    kind = str(getattr(config, "kind", ""))
    cls = BACKENDS.get(kind)
    build = getattr(cls, "from_config", None)
    if build is None:
        raise ConfigError(f"the {kind} backend cannot be built from a config: its class has no from_config",
                          where=f"backend {kind!r}", hint="give it a `from_config(config, *, timeouts, builder)` "
                          "classmethod, or build it by name with its constructor's keywords")
    return build(config, timeouts=timeouts or Timeouts(), builder=builder)
