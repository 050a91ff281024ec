"""SWE-World's RL recipe: GRPO with TRL's ``GRPOTrainer`` on a dataset's episodes, the verdict as reward.

``train_grpo(run, backend)`` renders the dataset's prompts (``integrations.trl.dataset``), makes the
environment factory over ``backend`` (``integrations.trl.environment_factory``: one sweworld episode
per rollout, the agent's tools, the verdict of the rollout's own patch as ``get_reward``), and trains
with TRL. In ``run.out`` it writes the checkpoints (every ``save_steps``), the final model and
tokenizer, ``rollouts.jsonl`` (every graded rollout), ``metrics.jsonl`` (per optimizer step: TRL's
logged reward mean, loss and gradient norm, and the rollouts graded since the step before with their
reward mean and resolve rate) and ``rl_summary.json``. On CPU it trains in float32; on a GPU in bf16,
with vLLM generation when ``run.use_vllm``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from sweworld.core.config import TrainRLConfig
from sweworld.core.protocols import Backend
from sweworld.integrations import trl as sw
from sweworld.train.deps import require
from sweworld.train.sft import load_tokenizer

SUMMARY = "rl_summary.json"
METRICS = "metrics.jsonl"
ROLLOUTS = "rollouts.jsonl"


class RLTrainSummary(BaseModel):
    """What ``train_grpo`` did (``rl_summary.json``)."""

    model: str
    backend: str
    instances: int
    device: str
    steps: int = 0
    rollouts: int = 0
    resolved: int = 0
    reward_mean: float | None = None
    errors: int = Field(default=0, description="Rollouts that got 0.0 without a verdict (a tool call or the "
                        "evaluation failed).")
    seconds: float = 0.0
    out: str


class StepMetrics:
    """One line of ``metrics.jsonl`` per logged optimizer step (every ``logging_steps``): TRL's logged
    numbers and the rollouts graded since the line before."""

    def __init__(self, factory: sw.EnvironmentFactory, path: Path):
        self.factory, self.path = factory, path
        self.seen = 0

    def write(self, step: int, logs: dict[str, Any]) -> None:
        rollouts = self.factory.results[self.seen:]
        self.seen += len(rollouts)
        rewards = [r.reward for r in rollouts]
        line = {"step": step, "rollouts": len(rollouts),
                "reward_mean": sum(rewards) / len(rewards) if rewards else None,
                "resolve_rate": sum(bool(r.resolved) for r in rollouts) / len(rollouts) if rollouts else None,
                "errors": sum(r.error is not None for r in rollouts),
                **{f"trl/{k}": float(v) for k, v in logs.items() if isinstance(v, (int, float))}}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")

    def callback(self):
        """A ``transformers.TrainerCallback`` writing a line at each training log (those with a loss)."""
        from transformers import TrainerCallback

        metrics = self

        class _Callback(TrainerCallback):
            def on_log(self, args, state, control, logs=None, **kwargs):
                if logs and "loss" in logs:
                    metrics.write(state.global_step, logs)

        return _Callback()


def grpo_config(run: TrainRLConfig, out: Path, gpu: bool):
    from trl import GRPOConfig

    return GRPOConfig(
        output_dir=str(out), max_steps=run.max_steps, per_device_train_batch_size=run.batch_size,
        gradient_accumulation_steps=run.grad_accum, num_generations=run.num_generations,
        max_completion_length=run.max_completion_length, max_tool_calling_iterations=run.max_tool_calls,
        learning_rate=run.lr, temperature=run.temperature, beta=run.beta, logging_steps=run.logging_steps,
        save_strategy="steps", save_steps=run.save_steps, report_to="none", seed=run.seed, bf16=gpu,
        use_cpu=not gpu, disable_tqdm=True, use_vllm=run.use_vllm, vllm_mode=run.vllm_mode,
        **({"vllm_server_base_url": run.vllm_server_base_url} if run.vllm_server_base_url else {}))


def trainer_for(run: TrainRLConfig, backend: Backend, out: Path):
    """TRL's ``GRPOTrainer`` over ``backend``'s episodes of the run's tasks, and its environment factory."""
    import torch
    from trl import GRPOTrainer

    require(lora=run.lora)
    tokenizer = load_tokenizer(run.model, run.chat_template)
    tokenizer.padding_side = "left"
    factory = sw.environment_factory(run.dataset, backend=backend, split=run.split, instance_ids=run.instance_ids,
                                     log_dir=out / "eval-logs", eval_timeout=run.eval_timeout, record=out / ROLLOUTS)
    train = sw.dataset(list(factory.tasks.values()), agent_config=run.agent_config)
    peft = None
    if run.lora:
        from peft import LoraConfig
        peft = LoraConfig(r=run.lora_r, lora_alpha=run.lora_alpha, target_modules="all-linear", task_type="CAUSAL_LM")
    trainer = GRPOTrainer(model=run.model, args=grpo_config(run, out, torch.cuda.is_available()),
                          train_dataset=train, processing_class=tokenizer, environment_factory=factory,
                          peft_config=peft, callbacks=[StepMetrics(factory, out / METRICS).callback()])
    return trainer, factory


def train_grpo(run: TrainRLConfig, backend: Backend) -> RLTrainSummary:
    """Train (see the module docstring); ``run.out`` must be set."""
    assert run.out is not None
    out = run.out
    trainer, factory = trainer_for(run, backend, out)
    start = time.monotonic()
    trainer.train()
    seconds = time.monotonic() - start
    trainer.save_model(str(out))
    results = factory.results
    summary = RLTrainSummary(
        model=run.model, backend=backend.name, instances=len(factory.tasks), device=str(trainer.args.device),
        steps=trainer.state.global_step, rollouts=len(results), resolved=sum(bool(r.resolved) for r in results),
        reward_mean=sum(r.reward for r in results) / len(results) if results else None,
        errors=sum(r.error is not None for r in results), seconds=round(seconds, 3), out=str(out))
    if trainer.is_world_process_zero():
        trainer.processing_class.save_pretrained(str(out))
        (out / SUMMARY).write_text(json.dumps(summary.model_dump(mode="json"), indent=2) + "\n")
    return summary


__all__ = ["METRICS", "ROLLOUTS", "SUMMARY", "RLTrainSummary", "StepMetrics", "train_grpo", "trainer_for"]
