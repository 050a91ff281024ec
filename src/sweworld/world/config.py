"""One configuration for the simulated world: which models answer SWT and SWR, in which prompt
style, with which sampling. The CLI builds it from ``--world openai|embedded``, ``--world-url``,
``--world-model``, ``--world-traces`` and ``--prompt-style``; a YAML/JSON file can hold the same fields.

- ``openai``: served models behind OpenAI-compatible endpoints (vLLM, SGLang, a replay server);
- ``embedded``: the CPU world models: the embedded SWT (fitted on ``--world-traces``, or loaded from
  ``--world-model PATH``) and the embedded SWR (the shipped classifier, or ``swr_model.path``),
  whose per-test predictions also feed the SWT's structured test runs."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, model_validator

from sweworld.core.errors import ConfigError
from sweworld.core.registry import load
from sweworld.world.swr import SWR, SWRConfig
from sweworld.world.swt import SWT, SWTConfig
from sweworld.world.worldmodels import OpenAIWorldConfig, WorldModel, create_model

EMBEDDED_SWR = "sweworld.surrogates.swr.swr:create"
"""The embedded SWR, loaded by name: the world never imports the surrogates (they sit above it)."""
EMBEDDED_PREDICTOR = "sweworld.surrogates.swr:predictor"
"""The embedded SWR's per-test predictions, for the embedded SWT's structured test runs."""


class WorldConfig(BaseModel):
    """The world's two models (the same endpoint may serve both)."""

    kind: str = Field(default="openai", description=(
        "World-model registry name (sweworld.world.worldmodels); a saved file's older key `backend` is read as it."))
    swt_model: dict[str, Any] = Field(default_factory=dict, description=(
        "Config of the SWT model for the registry (openai: urls, model, temperature, ...)."))
    swr_model: dict[str, Any] = Field(default_factory=dict, description="Config of the SWR model (same keys).")
    swt: SWTConfig = Field(default_factory=SWTConfig, description="SWT prompt style, privileged context, retries.")
    swr: SWRConfig = Field(default_factory=SWRConfig, description="SWR prompt style, samples k, threshold.")

    @model_validator(mode="before")
    @classmethod
    def _older_key(cls, data: Any) -> Any:
        """``backend`` (the key's name before it was ``kind``) is read as ``kind``."""
        if isinstance(data, dict) and "backend" in data and "kind" not in data:
            data = {("kind" if k == "backend" else k): v for k, v in data.items()}
        return data

    @classmethod
    def from_options(cls, *, urls: list[str] | None, model: str = "world", style: str = "sweworld",
                     swr_samples: int = 1, kind: str = "openai", traces: list[str] | None = None,
                     dataset: str | None = None, cache: bool = True, max_tokens: int | None = None) -> WorldConfig:
        """From the CLI options: for ``openai`` one endpoint list serving both models (SWT at
        temperature 0, SWR at 0.7 as SWE-World samples them; ``max_tokens`` caps each reply, None
        leaves it to the server); for ``embedded`` the CPU models."""
        if kind == "embedded":
            swt: dict[str, Any] = {"predictor": EMBEDDED_PREDICTOR, "traces": list(traces or []), "import_graph": True,
                                   "calibrate": True}
            if model and model != "world":
                swt["model"] = model
            if dataset:  # the tasks' FAIL_TO_PASS / PASS_TO_PASS: the baseline of structured test runs
                swt["dataset"] = dataset
            return cls(kind="embedded", swt_model=swt, swr_model={}, swt=SWTConfig(style=style),
                       swr=SWRConfig(style=style))
        if not urls:
            raise ConfigError("the sim and hybrid backends need the world models' endpoint (--world openai)",
                              hint="pass --world-url http://HOST:PORT/v1 (an OpenAI-compatible server, e.g. vLLM, or "
                                   "`sweworld world serve --traces T` replaying recorded traces), or --world embedded "
                                   "for the CPU models (no endpoint)")
        swt = OpenAIWorldConfig(urls=list(urls), model=model, temperature=0.0, cache=cache, max_tokens=max_tokens)
        swr = OpenAIWorldConfig(urls=list(urls), model=model, temperature=0.7, cache=cache, max_tokens=max_tokens)
        return cls(swt_model=swt.model_dump(), swr_model=swr.model_dump(), swt=SWTConfig(style=style),
                   swr=SWRConfig(style=style, k=swr_samples))

    @classmethod
    def embedded(cls, dataset: str | None = None) -> WorldConfig:
        """The CPU world models (no endpoint): what a sim or hybrid backend uses when given no world,
        as the CLI's ``--backend sim`` without ``--world-url`` does."""
        return cls.from_options(urls=None, kind="embedded", dataset=dataset)

    def make_swt(self, model: WorldModel | None = None) -> SWT:
        return SWT(model or create_model(self.kind, self.swt_model), self.swt)

    def make_swr(self, model: WorldModel | None = None) -> SWR:
        if self.kind == "embedded" and model is None:
            return load(EMBEDDED_SWR)(dict(self.swr_model))
        return SWR(model or create_model(self.kind, self.swr_model), self.swr)
