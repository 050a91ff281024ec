"""Which backend a run uses and how: ``BackendConfig``, one of ``real``, ``sim`` and ``hybrid``
(discriminated on ``kind``), and the runner the items go to. ``sweworld.backends.make_backend``
builds a backend from one; the CLI builds one from ``--backend``, ``--world*``, ``--audit-rate``..."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


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


class SandboxSettings(Strict):
    """The episodes' sandbox (``--isolation``)."""

    isolation: Literal["bwrap", "none"] = "bwrap"
    scratch_dirs: list[str] | None = Field(default=None, description=(
        "Empty writable directories inside each episode (default: /var/tmp); e.g. /logs and /tests for Harbor."))


class _Common(Strict):
    repos_dir: Path | None = Field(default=None, description="Directory of existing clones (no network needed).")
    sandbox: SandboxSettings | None = Field(default=None, description="Episode sandbox settings (default: bwrap).")


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


BackendConfig = Annotated[RealBackendConfig | SimBackendConfig | HybridBackendConfig, Field(discriminator="kind")]
BACKEND_CONFIGS: dict[str, type[Strict]] = {"real": RealBackendConfig, "sim": SimBackendConfig,
                                            "hybrid": HybridBackendConfig}


class RunnerConfig(Strict):
    """Where the items run: ``--runner``, ``--ray-address``, ``--workers``."""

    name: Literal["local", "ray"] = Field(default="local", description="local (threads here) or ray.")
    address: str | None = Field(default=None, description="ray: 'auto' or HOST:PORT; None: a Ray started here.")
    workers: int = Field(default=1, ge=1, description="Items at once.")


__all__ = ["BACKEND_CONFIGS", "BackendConfig", "HybridBackendConfig", "RealBackendConfig", "RunnerConfig",
           "SandboxSettings", "SimBackendConfig", "Strict", "WorldModelConfig"]
