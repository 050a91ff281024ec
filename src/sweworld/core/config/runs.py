"""One configuration per run command, holding exactly what its flags hold (``--config FILE.yaml``
reads one; every run writes the resolved one as ``config.yaml`` beside its outputs)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from sweworld.core.config.backend import BackendConfig, RealBackendConfig, RunnerConfig, Strict
from sweworld.core.config.timeouts import EVALUATION, Timeouts


def _runner(workers: int):
    return lambda: RunnerConfig(workers=workers)


class DatasetSelection(Strict):
    """Which tasks: ``--dataset``, ``--split``, ``--instance-ids``, ``--skip-invalid``."""

    dataset: str = Field(default="default", description="A shipped name, a file, a directory or a hub name.")
    split: str | None = None
    instance_ids: list[str] | None = Field(default=None, description="Only these instances.")
    skip_invalid: bool = Field(default=False, description="Skip invalid rows and report how many.")

    @model_validator(mode="after")
    def _world_reads_these_tasks(self) -> DatasetSelection:
        """A sim or hybrid backend's world, unless told otherwise, knows the run's tasks (their
        FAIL_TO_PASS / PASS_TO_PASS: the baseline of structured test runs), from the CLI or the library."""
        world = getattr(getattr(self, "backend", None), "world", None)
        if world is not None and world.dataset is None:
            world.dataset = self.dataset
        return self


class EvalConfig(DatasetSelection):
    """``sweworld eval``: grade predictions."""

    predictions: str = Field(default="gold", description="Predictions file or 'gold'.")
    run_id: str = "sweworld"
    force: bool = Field(default=False, description="Evaluate again instances that already have a report.")
    logs_dir: Path = Path("logs")
    out: Path = Field(default=Path("."), description="Directory of the run summary.")
    compare_to: str | None = None
    backend: BackendConfig = Field(default_factory=RealBackendConfig)
    timeouts: Timeouts = Field(default_factory=Timeouts)
    runner: RunnerConfig = Field(default_factory=RunnerConfig)


class PolicySettings(Strict):
    """The policy flags ``rollout`` and ``world collect`` share."""

    policy: str = "oracle"
    model_url: str | None = None
    model: str | None = None
    replay: Path | None = None
    agent_config: Path | None = Field(default=None, description="Agent YAML (templates, limits).")
    step_limit: int | None = Field(default=None, ge=1)
    temperature: float = Field(default=0.0, ge=0.0)
    n_samples: int = Field(default=1, ge=1, description="Samples per instance.")


class RolloutConfig(DatasetSelection, PolicySettings):
    """``sweworld rollout``: a policy on a dataset, K samples per instance."""

    out: Path = Path("runs/rollout")
    api_key_env: str = "OPENAI_API_KEY"
    max_tokens: int | None = Field(default=None, ge=1)
    model_retries: int = Field(default=5, ge=0)
    text_actions: bool = False
    perturb_p: float = Field(default=0.5, ge=0.0, le=1.0)
    seed: int = 0
    evaluate: bool = Field(default=True, description="Evaluate each episode (`--no-eval`: false).")
    backend: BackendConfig = Field(default_factory=RealBackendConfig)
    timeouts: Timeouts = Field(default_factory=Timeouts)
    runner: RunnerConfig = Field(default_factory=RunnerConfig)
    branch_at: int | None = Field(default=None, ge=0, description=(
        "Branched rollouts (with `branches`): the steps of the shared prefix; each of the n_samples prefixes "
        "is snapshotted there and continued `branches` times in forks (docs/branching_rollouts.md)."))
    branches: int | None = Field(default=None, ge=1, description=(
        "Branched rollouts (with `branch_at`): continuations per prefix, each its own sample "
        "(n_samples x branches samples per instance)."))

    @model_validator(mode="after")
    def _branching_needs_both(self) -> RolloutConfig:
        if (self.branch_at is None) != (self.branches is None):
            raise ValueError("branch_at and branches go together (--branch-at STEP --branches K)")
        return self

    @property
    def samples_per_instance(self) -> int:
        """n_samples, times branches when branched."""
        return self.n_samples * (self.branches or 1)


class CollectConfig(DatasetSelection, PolicySettings):
    """``sweworld world collect``: a rollout with the real backend, recording traces in OUT."""

    out: Path = Path("runs/traces")
    backend: RealBackendConfig = Field(default_factory=RealBackendConfig)
    timeouts: Timeouts = Field(default_factory=Timeouts)
    runner: RunnerConfig = Field(default_factory=RunnerConfig)

    def rollout(self, traces: Path) -> RolloutConfig:
        """The rollout this collection runs (its backend recording to ``traces``)."""
        data = self.model_dump(exclude={"backend"})
        return RolloutConfig(**data, backend=self.backend.model_copy(update={"traces": traces}))


class ValidateConfig(DatasetSelection):
    """``sweworld validate``: keep the instances whose tests go fail -> pass with the gold patch."""

    out: Path = Path("validated.jsonl")
    backend: RealBackendConfig = Field(default_factory=RealBackendConfig)
    timeouts: Timeouts = Field(default_factory=Timeouts)
    runner: RunnerConfig = Field(default_factory=RunnerConfig)


class MineConfig(Strict):
    """``sweworld mine``: validated instances from a repository's history (``repo``), or from many
    (``repos``, a file of them, into ``out_dir``)."""

    repo: str | None = None
    repos: Path | None = Field(default=None, description=(
        "A file of repositories to mine in one run (one a line, with key=value overrides; or a .jsonl/.json "
        "dataset with a repo or url field), instead of repo."))
    out_dir: Path | None = Field(default=None, description="With repos: the run's directory (default: mined).")
    out: Path = Path("tasks.jsonl")
    since: str | None = None
    until: str | None = None
    max_instances: int | None = Field(default=None, ge=1)
    max_candidates: int | None = Field(default=None, ge=1)
    rev: str = "HEAD"
    commits: list[str] | None = None
    name: str | None = None
    max_patch_lines: int | None = Field(default=None, ge=1, description="Default: the mining rules' limit.")
    max_test_patch_lines: int | None = Field(default=None, ge=1, description="Default: the mining rules' limit.")
    model_url: str | None = None
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    setup_model_url: str | None = Field(default=None, description=(
        "OpenAI-compatible URL of the set-up agent's model, asked for a recipe where a release line's inferred "
        "one does not build or finds no tests (default: off)."))
    setup_model: str | None = None
    setup_attempts: int = Field(default=3, ge=1)
    exclude: list[str] | None = Field(default=None, description=(
        "Datasets (shipped names, files, save_to_disk directories, hub names such as "
        "princeton-nlp/SWE-bench_Verified) whose instances are not mined again: a commit whose base commit, "
        "fix commit or instance id one of their rows has is dropped, counted as 'excluded: ...'."))
    backend: RealBackendConfig = Field(default_factory=RealBackendConfig)
    timeouts: Timeouts = Field(default_factory=Timeouts)
    runner: RunnerConfig = Field(default_factory=_runner(2))


class SynthConfig(Strict):
    """``sweworld synth``: bugs injected into a real repository, kept when its tests catch them."""

    repo: str
    out: Path
    max_instances: int | None = Field(default=None, ge=1)
    methods: str | None = None
    seed: int = 0
    commit: str = "HEAD"
    name: str | None = None
    python: str | None = None
    pip_packages: list[str] | None = None
    test_cmd: str = "pytest -rA"
    max_candidates: int | None = Field(default=None, ge=1)
    max_per_kind: int | None = Field(default=None, ge=1)
    combine_share: float = Field(default=0.1, ge=0.0, le=1.0)
    naive: bool = False
    timeout: float | None = Field(default=None, gt=0, description=(
        "Per-run timeout of a candidate, seconds (default: max(5, 4 x the suite's time))."))
    issue_model_url: str | None = None
    issue_model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    work: Path | None = None
    runner: RunnerConfig = Field(default_factory=_runner(2))


class TrainSFTConfig(Strict):
    """``sweworld train sft``: supervised fine-tuning on exported rows."""

    data: list[Path]
    model: str
    out: Path | None = None
    lora: bool = False
    lora_r: int = Field(default=16, ge=1)
    lora_alpha: int = Field(default=32, ge=1)
    epochs: float = Field(default=1.0, gt=0)
    max_steps: int | None = Field(default=None, ge=1)
    lr: float | None = Field(default=None, gt=0)
    batch_size: int = Field(default=1, ge=1)
    grad_accum: int = Field(default=1, ge=1)
    max_length: int = Field(default=8192, ge=1)
    too_long: Literal["drop", "cut"] = "drop"
    assistant_only_loss: bool = False
    chat_template: Path | None = None
    tool_arguments: Literal["object", "string"] = "object"
    seed: int = 0
    logging_steps: int = Field(default=10, ge=1)


class TrainRLConfig(DatasetSelection):
    """``sweworld train rl``: GRPO (TRL's ``GRPOTrainer``) on a dataset's episodes, the backend's verdict as
    the reward (SWE-World's recipe with ``backend.kind: sim``)."""

    model: str = Field(description="A Hugging Face model name or a local model directory (the policy).")
    out: Path | None = Field(default=None, description="Checkpoints, the model, metrics.jsonl, rollouts.jsonl.")
    backend: BackendConfig = Field(default_factory=RealBackendConfig)
    agent_config: Path | None = Field(default=None, description="Agent YAML: the prompts' templates.")
    max_steps: int = Field(default=100, ge=1, description="Optimizer steps.")
    num_generations: int = Field(default=4, ge=2, description="Rollouts per prompt (GRPO's group).")
    batch_size: int = Field(default=4, ge=1, description="Rollouts per device per step (a multiple of the "
                            "group size, with grad_accum).")
    grad_accum: int = Field(default=1, ge=1)
    max_completion_length: int = Field(default=4096, ge=1, description="Tokens of a rollout (replies and tool "
                                       "results) at most.")
    max_tool_calls: int = Field(default=30, ge=1, description="Tool-calling rounds of a rollout at most.")
    lr: float = Field(default=1e-6, gt=0)
    temperature: float = Field(default=1.0, gt=0)
    beta: float = Field(default=0.0, ge=0, description="KL coefficient (0: no reference model).")
    lora: bool = False
    lora_r: int = Field(default=16, ge=1)
    lora_alpha: int = Field(default=32, ge=1)
    chat_template: Path | None = None
    use_vllm: bool = Field(default=False, description="Generate with vLLM (GPU; the train extra's vllm).")
    vllm_mode: Literal["colocate", "server"] = "colocate"
    vllm_server_base_url: str | None = None
    eval_timeout: float = Field(default=EVALUATION, gt=0, description="Seconds for one rollout's evaluation.")
    seed: int = 0
    logging_steps: int = Field(default=1, ge=1)
    save_steps: int = Field(default=50, ge=1, description="A checkpoint every N steps.")


class SelectConfig(Strict):
    """``sweworld select``: best-of-n over rollouts with a verifier."""

    runs: list[Path] = Field(description="Rollout directories or their trajectories.jsonl (samples pooled).")
    verifier: str = Field(default="swr", description="A registered verifier: swr, embedded, llm, tests, hybrid, "
                          "random, oracle.")
    dataset: str = "default"
    split: str | None = None
    repos_dir: Path | None = None
    seed: int = Field(default=0, description="Seed of the random verifier.")
    out: Path | None = Field(default=None, description="Predictions JSONL (SWE-bench format) to write.")
    json_out: Path | None = Field(default=None, description="`--json`: the curve and the picks as JSON.")
    report: Path | None = Field(default=None, description="Directory of an HTML report.")
    model: str | None = Field(default=None, description="model_name_or_path of the predictions.")
    verifier_model: Path | None = None
    verifier_url: str | None = None
    verifier_model_name: str = "verifier"
    verifier_input: Literal["trajectory", "diff"] = "trajectory"
    votes: int = Field(default=5, ge=1)
    hybrid_base: Literal["swr", "embedded", "llm", "random"] = "swr"


class FidelityConfig(Strict):
    """``sweworld world fidelity``: SWT and SWR measured against recorded real results."""

    traces: list[Path] | None = None
    verdicts: list[Path] | None = None
    dataset: str | None = Field(default=None, description="The instances `verdicts` grade.")
    world_url: list[str] | None = None
    world_model: str = "world"
    prompt_style: str = "sweworld"
    test_fraction: float = Field(default=0.5, ge=0.0, le=1.0)
    swr_samples: int = Field(default=1, ge=1)
    workers: int = Field(default=1, ge=1)
    cache: bool = False
    html: Path | None = None
    json_out: Path | None = Field(default=None, description="`--json`: the figures as JSON.")


class WorldTrainConfig(Strict):
    """``sweworld world train``: the embedded SWR fitted on real evaluations."""

    traces: list[Path] | None = None
    verdicts: list[Path] | None = None
    dataset: str | None = Field(default=None, description="The instances `verdicts` grade.")
    out: Path = Field(default=Path("swr.json"), description="Model JSON to write.")
    test_fraction: float = Field(default=0.5, ge=0.0, le=1.0)
    leave_repo_out: bool = False
    repos_dir: Path | None = None
    json_out: Path | None = Field(default=None, description="`--json`: the figures as JSON.")


class VerifierTrainConfig(Strict):
    """``sweworld verifier train``: the embedded verifier from real-labelled rollouts."""

    runs: list[Path]
    out: Path = Field(description="The model JSON to write.")
    features: Literal["blind", "solo", "reference"] = "blind"
    dataset: str = "default"
    split: str | None = None
    repos_dir: Path | None = None
    l2: float = Field(default=1.0, ge=0.0)


class ExportSFTConfig(Strict):
    """``sweworld export sft``: SFT rows from rollouts."""

    runs: list[Path]
    out: Path
    format: Literal["openai", "sharegpt"] = "openai"
    all: bool = Field(default=False, description="Keep unresolved trajectories too.")
    cap_per_instance: int | None = Field(default=None, ge=1)
    seed: int = 0
    max_tokens: int | None = Field(default=None, ge=1)
    tokenizer: str | None = None
    tool_arguments: Literal["string", "object"] = "string"


class ExportWorldConfig(Strict):
    """``sweworld export world``: SWT and SWR rows from traces."""

    traces: list[Path]
    out: Path = Field(description="Directory of swt.jsonl, swr.jsonl and summary.json.")
    style: str = "sweworld"
    max_steps_per_trajectory: int = Field(default=6, ge=1)
    seed: int = 0
    teacher_url: str | None = None
    teacher_model: str = "teacher"
    judge_url: str | None = None
    judge_model: str | None = None
    cot_swt: bool = False
    workers: int = Field(default=4, ge=1)


class ExportVerifierConfig(Strict):
    """``sweworld export verifier``: verifier rows (issue and trajectory -> YES/NO) from rollouts."""

    runs: list[Path]
    out: Path
    dataset: str = "default"
    split: str | None = None
    input: Literal["trajectory", "diff"] = "trajectory"
    balance: bool = True
    format: Literal["openai", "sharegpt"] = "openai"
    max_chars: int = Field(default=2000, ge=100)
    seed: int = 0


__all__ = ["CollectConfig", "DatasetSelection", "EvalConfig", "ExportSFTConfig", "ExportVerifierConfig",
           "ExportWorldConfig", "FidelityConfig", "MineConfig", "PolicySettings", "RolloutConfig", "SelectConfig",
           "SynthConfig", "TrainRLConfig", "TrainSFTConfig", "ValidateConfig", "VerifierTrainConfig", "WorldTrainConfig"]
