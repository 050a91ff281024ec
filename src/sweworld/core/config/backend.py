"""Which backend a run uses and how: ``BackendConfig`` (discriminated on ``kind``: ``real``, ``sim``,
``hybrid``, or any backend registered in ``BACKENDS``, validated by that backend class's own
``Config``), and the runner the items go to. ``sweworld.backends.make_backend`` builds a backend
from one; the CLI builds one from ``--backend``, ``--world*``, ``--audit-rate``...

``BACKENDS`` is the one registry of backends (names to ``"module:Class"``, entry point group
``sweworld.backends``): a backend named anywhere (a config file, ``--backend``, a framework's spec) is
looked up there, and configured by its class's ``Config`` model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    InstanceOf,
    SerializeAsAny,
    ValidationError,
    model_validator,
)

from sweworld.core.errors import ConfigError
from sweworld.core.registry import Registry

BACKENDS: Registry[Any] = Registry("backend", {
    "real": "sweworld.backends.real:RealBackend",
    "sim": "sweworld.backends.sim:SimBackend",
    "hybrid": "sweworld.backends.hybrid:HybridBackend",
}, group="sweworld.backends")
"""The backends by name (``sweworld.backends.BACKENDS``): nothing is imported before it is asked for."""


class Strict(BaseModel):
    """A configuration model: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


class WorldModelConfig(Strict):
    """The world's models (SWT and SWR): ``--world``, ``--world-url``, ``--world-model``..."""

    kind: str | None = Field(default=None, description=(
        "World-model kind: 'openai' (served at `urls`), 'embedded' (CPU models), or another registered one; "
        "None: openai with urls, else embedded."))
    urls: list[str] = Field(default_factory=list, description="OpenAI-compatible base URLs (round-robin).")
    model: str = Field(default="world", description="openai: the served model name; embedded: a saved SWT model.")
    style: str = Field(default="sweworld", description="Prompt templates: 'sweworld' or 'swe-world'.")
    traces: list[str] = Field(default_factory=list, description="embedded: trace files the SWT is fitted on.")
    dataset: str | None = Field(default=None, description="embedded: the tasks' dataset (default: the run's).")
    max_tokens: int | None = Field(default=None, ge=1, description="openai: cap on the tokens of each reply.")

    @model_validator(mode="after")
    def _default_kind(self) -> WorldModelConfig:
        """No kind given: openai with URLs, else embedded (``kind_defaulted`` says it was chosen here)."""
        if self.kind is None:
            self.kind = "openai" if self.urls else "embedded"
            self.kind_defaulted = True
        return self

    kind_defaulted: bool = Field(default=False, exclude=True, description=(
        "The kind was not given and was chosen by the rule (the CLI says so in one line)."))


class SandboxSettings(Strict):
    """The episodes' sandbox (``--isolation``)."""

    isolation: Literal["bwrap", "none"] = "bwrap"
    scratch_dirs: list[str] | None = Field(default=None, description=(
        "Empty writable directories inside each episode (default: /var/tmp); e.g. /logs and /tests for Harbor."))
    allow_syscalls: list[str] = Field(default_factory=list, description=(
        "System calls the episodes' seccomp filter denies by default that they may make all the same (e.g. "
        "keyctl); logged by name. A row may ask for its own in its allow_syscalls field."))


class _Common(Strict):
    repos_dir: Path | None = Field(default=None, description="Directory of existing clones (no network needed).")
    sandbox: SandboxSettings | None = Field(default=None, description="Episode sandbox settings (default: bwrap).")
    env_source: Literal["auto", "recipe", "image"] = Field(default="auto", description=(
        "Where a task's environment comes from: its container image (image: the row's docker_image/image_name, "
        "else SWE-bench's image of the instance), a recipe built here (recipe), or the image when the row is not "
        "Python or names an image no recipe covers (auto)."))


class RealBackendConfig(_Common):
    """Built environments, isolated sandboxes, the real harness."""

    kind: Literal["real"] = "real"
    network: bool = Field(default=False, description="Let the tests reach the network.")
    traces: Path | None = Field(default=None, description="Append every step and evaluation to this trace file.")
    wheels: list[str] = Field(default_factory=list, description=(
        "Requirements pip in an agent's episode may install without a network, from a wheelhouse filled on the "
        "host (a framework's tool bundles, e.g. SWE-agent's tree-sitter==0.21.3, tree-sitter-languages, flake8)."))


class SimBackendConfig(_Common):
    """No environment: SWT predicts code execution, SWR the tests."""

    kind: Literal["sim"] = "sim"
    world: WorldModelConfig = Field(default_factory=WorldModelConfig)


class HybridBackendConfig(_Common):
    """Sim, with ``audit_rate`` of the steps and evaluations also run for real."""

    kind: Literal["hybrid"] = "hybrid"
    world: WorldModelConfig = Field(default_factory=WorldModelConfig)
    audit_rate: float = Field(default=0.1, ge=0.0, le=1.0, description="Fraction also run for real.")
    route_below: float | None = Field(default=None, ge=0.0, le=1.0, description=(
        "A prediction with confidence under this runs for real instead."))
    traces: Path | None = Field(default=None, description="Audits go to TRACES.audits.jsonl.")


BACKEND_CONFIGS: dict[str, type[Strict]] = {"real": RealBackendConfig, "sim": SimBackendConfig,
                                            "hybrid": HybridBackendConfig}
"""The built-in backends' configs (each class's ``Config``; read without importing the backends)."""


def config_class(kind: str) -> type[BaseModel]:
    """The config model of the backend registered as ``kind``: its class's ``Config`` (``ConfigError``
    naming the known backends, or saying the class has none)."""
    if kind in BACKEND_CONFIGS:
        return BACKEND_CONFIGS[kind]
    backend = BACKENDS.get(kind)
    model = getattr(backend, "Config", None)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise ConfigError(f"the {kind} backend ({getattr(backend, '__name__', backend)}) has no Config model",
                          where=f"backend {kind!r}", hint="give its class a `Config` pydantic model (with "
                          f"`kind: Literal[{kind!r}]`) and a `from_config` classmethod to configure it from files, "
                          "the CLI or a framework; or build it by name with its constructor's keywords")
    return model


def backend_config(data: dict[str, Any]) -> BaseModel:
    """``data`` (``kind`` and the backend's fields; no kind: real) as its backend's config; an unknown
    backend or a wrong field is one ``ConfigError`` naming it."""
    kind = str(data.get("kind") or "real")
    model = config_class(kind)
    try:
        return model.model_validate({**data, "kind": kind})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(f"{'.'.join(map(str, first['loc']))}: {first['msg']}", where=f"backend {kind!r}",
                          hint=f"see {model.__module__}.{model.__name__} for its fields") from None


def _registered(value: Any) -> Any:
    """A mapping naming a backend beyond the built-ins, validated by that backend's ``Config``;
    anything else is left to the built-ins' union."""
    if not isinstance(value, dict) or str(value.get("kind", "real")) in BACKEND_CONFIGS:
        return value
    try:
        return backend_config(value)
    except ConfigError as exc:
        raise ValueError(exc.render()) from None


_BUILT_IN = Annotated[RealBackendConfig | SimBackendConfig | HybridBackendConfig, Field(discriminator="kind")]
BackendConfig = Annotated[Annotated[_BUILT_IN | SerializeAsAny[InstanceOf[Strict]], Field(union_mode="left_to_right")],
                          BeforeValidator(_registered)]
"""A backend's config: a built-in's (discriminated on ``kind``), or a registered backend's own ``Config``."""


class RunnerConfig(Strict):
    """Where the items run: ``--runner``, ``--ray-address``, ``--workers``."""

    name: Literal["local", "ray"] = Field(default="local", description="local (threads here) or ray.")
    address: str | None = Field(default=None, description="ray: 'auto' or HOST:PORT; None: a Ray started here.")
    workers: int = Field(default=1, ge=1, description="Items at once.")


__all__ = [
    "BACKENDS",
    "BACKEND_CONFIGS",
    "BackendConfig",
    "HybridBackendConfig",
    "RealBackendConfig",
    "RunnerConfig",
    "SandboxSettings",
    "SimBackendConfig",
    "Strict",
    "WorldModelConfig",
    "backend_config",
    "config_class",
]
