"""Run configuration: pydantic models (unknown keys are errors) of what every run command and the
library's run functions take, the three ``Timeouts``, and YAML files of them.

``sweworld <command> --config run.yaml`` reads one (flags given on the command line override its
values); every run writes the resolved one as ``config.yaml`` beside its outputs, so
``sweworld rollout --config runs/r1/config.yaml`` repeats ``runs/r1`` exactly."""

from __future__ import annotations

from sweworld.core.config.backend import (
    BACKEND_CONFIGS,
    BACKENDS,
    BackendConfig,
    HybridBackendConfig,
    RealBackendConfig,
    RunnerConfig,
    SandboxSettings,
    SimBackendConfig,
    WorldModelConfig,
    backend_config,
    config_class,
)
from sweworld.core.config.files import CONFIG_FILE, dump, load, write
from sweworld.core.config.runs import (
    CollectConfig,
    DatasetSelection,
    EvalConfig,
    ExportSFTConfig,
    ExportVerifierConfig,
    ExportWorldConfig,
    FidelityConfig,
    MineConfig,
    RolloutConfig,
    SelectConfig,
    SynthConfig,
    TrainRLConfig,
    TrainSFTConfig,
    ValidateConfig,
    VerifierTrainConfig,
    WorldTrainConfig,
)
from sweworld.core.config.timeouts import Timeouts

__all__ = ["BACKENDS", "BACKEND_CONFIGS", "CONFIG_FILE", "BackendConfig", "CollectConfig", "DatasetSelection", "EvalConfig",
           "ExportSFTConfig", "ExportVerifierConfig", "ExportWorldConfig", "FidelityConfig", "HybridBackendConfig",
           "MineConfig", "RealBackendConfig", "RolloutConfig", "RunnerConfig", "SandboxSettings", "SelectConfig",
           "SimBackendConfig", "SynthConfig", "Timeouts", "TrainRLConfig", "TrainSFTConfig", "ValidateConfig", "VerifierTrainConfig",
           "WorldModelConfig", "WorldTrainConfig", "backend_config", "config_class", "dump", "load", "write"]
