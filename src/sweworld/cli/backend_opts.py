"""The options every command that opens episodes shares: which backend, and the world's models.

``--backend real`` (default) builds environments and runs everything for real; ``sim`` predicts code
execution with SWT and test runs with SWR (no environment is built); ``hybrid`` is ``sim`` with
``--audit-rate`` of its steps and evaluations also run for real. The world's models are served
behind OpenAI-compatible endpoints (``--world openai --world-url``, several for round-robin) or are
the embedded CPU models (``--world embedded``): without ``--world-url`` and ``--world``, sim and hybrid
use the embedded ones (the offline default) and say so in one line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from sweworld.cli import common, params

EMBEDDED_DEFAULT = ("no --world-url: using the embedded world (CPU models); pass --world openai --world-url URL "
                    "for served models")

BackendName = Annotated[str, typer.Option(
    "--backend", callback=params.registered_backend,
    help="real (built environments), sim (SWT/SWR predict execution and tests), hybrid (sim, audited), or a "
    "backend a package registers (entry point group sweworld.backends).")]
WorldURL = Annotated[list[str] | None, typer.Option(
    "--world-url", help="OpenAI-compatible base URL of the world models (SWT and SWR); repeat for round-robin.")]
WorldKind = Annotated[str | None, typer.Option(
    "--world", callback=params.one_of("openai", "embedded"),
    help="World models: openai (served at --world-url) or embedded (CPU models, no GPU, no endpoint); "
    "default: openai with --world-url, else embedded.")]
WorldModel = Annotated[str, typer.Option(
    "--world-model", help="openai: the model name served at --world-url; embedded: a saved SWT model file.")]
WorldMaxTokens = Annotated[int | None, typer.Option(
    "--world-max-tokens", min=1, help="openai: cap on the tokens of each SWT/SWR reply (default: the server's).")]
WorldTraces = Annotated[list[str] | None, typer.Option(
    "--world-traces", help="embedded: trace files the embedded SWT is fitted on (repeat).")]
PromptStyle = Annotated[str, typer.Option(
    "--prompt-style", help="World prompt templates: 'sweworld' or 'swe-world' (SWE-World's released checkpoints).")]
AuditRate = Annotated[float, typer.Option(
    "--audit-rate", min=0.0, max=1.0, help="hybrid: fraction of steps and evaluations also run for real.")]
RouteBelow = Annotated[float | None, typer.Option(
    "--route-below", min=0.0, max=1.0,
    help="hybrid: a prediction with confidence under this runs for real instead (models that give one).")]
EnvSource = Annotated[str, typer.Option(
    "--env-source", callback=params.env_source,
    help="Where environments come from: image (each row's container image, docker_image/image_name, else "
    "SWE-bench's image of the instance; pulled daemon-free through registries.conf), recipe (built here), or auto "
    "(the image for rows that are not Python or name an image no recipe covers).")]
Traces = Annotated[Path | None, typer.Option(
    "--traces", help="real/hybrid: append every real step and evaluation to this trace file (JSONL).")]


def backend_from_options(name: str, *, repos_dir: Path | None = None, network: bool = False,
                         world_url: list[str] | None = None, world_model: str = "world",
                         prompt_style: str = "sweworld", audit_rate: float = 0.1, traces: Path | None = None,
                         sandbox_config: Any = None, builder: Any = None, route_below: float | None = None,
                         world: str | None = None, world_traces: list[str] | None = None,
                         dataset: str | None = None, world_max_tokens: int | None = None):
    """The backend the options name (``InfraError``/``ConfigError`` reach the caller's ``reported``):
    their ``BackendConfig`` built by ``sweworld.backends.make_backend``."""
    from sweworld.backends import make_backend
    from sweworld.core.config import SandboxSettings, Timeouts, config_class

    fields: dict[str, Any] = {"repos_dir": repos_dir, "network": network, "traces": traces,
                              "audit_rate": audit_rate, "route_below": route_below}
    timeouts = Timeouts()
    if sandbox_config is not None:
        fields["sandbox"] = SandboxSettings(isolation=sandbox_config.isolation)
        timeouts = Timeouts(command=sandbox_config.timeout)
    model = config_class(name)
    if "world" in model.model_fields:
        fields["world"] = {"kind": world_kind(world, world_url), "urls": list(world_url or []), "model": world_model,
                           "style": prompt_style, "traces": list(world_traces or []), "dataset": dataset,
                           "max_tokens": world_max_tokens}
    config = model(**{"kind": name, **{k: v for k, v in fields.items() if k in model.model_fields}})
    return make_backend(config, timeouts=timeouts, builder=builder)


def world_kind(world: str | None, world_url: list[str] | None) -> str:
    """``--world`` as given, else what ``WorldModelConfig`` chooses (its one rule: openai with
    ``--world-url``, else embedded), said in one line when it is the embedded world. ``--world openai``
    without ``--world-url`` is ``WorldConfig.from_options``'s error."""
    from sweworld.core.config import WorldModelConfig
    chosen = WorldModelConfig(kind=world, urls=list(world_url or []))
    if chosen.kind_defaulted and chosen.kind == "embedded":
        common.console.print(EMBEDDED_DEFAULT, markup=False, highlight=False, soft_wrap=True)
    return str(chosen.kind)
