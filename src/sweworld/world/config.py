"""One configuration for the simulated world: which served models answer SWT and SWR, in which
prompt style, with which sampling. The CLI builds it from ``--world-url``, ``--world-model`` and
``--prompt-style``; a YAML/JSON file can hold the same fields."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from sweworld.errors import ConfigError
from sweworld.world.models import OpenAIWorldConfig, WorldModel, create_model
from sweworld.world.swr import SWR, SWRConfig
from sweworld.world.swt import SWT, SWTConfig


class WorldConfig(BaseModel):
    """The world's two models (the same endpoint may serve both)."""

    backend: str = Field(default="openai", description="World-model registry name (sweworld.world.models).")
    swt_model: dict[str, Any] = Field(default_factory=dict, description=(
        "Config of the SWT model for the registry (openai: urls, model, temperature, ...)."))
    swr_model: dict[str, Any] = Field(default_factory=dict, description="Config of the SWR model (same keys).")
    swt: SWTConfig = Field(default_factory=SWTConfig, description="SWT prompt style, privileged context, retries.")
    swr: SWRConfig = Field(default_factory=SWRConfig, description="SWR prompt style, samples k, threshold.")

    @classmethod
    def from_options(cls, *, urls: list[str] | None, model: str = "world", style: str = "sweworld",
                     swr_samples: int = 1) -> WorldConfig:
        """From the CLI options: one endpoint list serving both models (SWT at temperature 0, SWR at
        0.7 as SWE-World samples them)."""
        if not urls:
            raise ConfigError("the sim and hybrid backends need the world models' endpoint",
                              hint="pass --world-url http://HOST:PORT/v1 (an OpenAI-compatible server, e.g. vLLM, "
                                   "or `sweworld world serve --traces T` replaying recorded traces)")
        swt = OpenAIWorldConfig(urls=list(urls), model=model, temperature=0.0)
        swr = OpenAIWorldConfig(urls=list(urls), model=model, temperature=0.7)
        return cls(swt_model=swt.model_dump(), swr_model=swr.model_dump(), swt=SWTConfig(style=style),
                   swr=SWRConfig(style=style, k=swr_samples))

    def make_swt(self, model: WorldModel | None = None) -> SWT:
        return SWT(model or create_model(self.backend, self.swt_model), self.swt)

    def make_swr(self, model: WorldModel | None = None) -> SWR:
        return SWR(model or create_model(self.backend, self.swr_model), self.swr)
