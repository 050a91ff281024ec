"""verl 0.9.1 on sweworld: ``SWEWorldAgentLoop`` run by verl's own ``AgentLoopWorker`` (from the yaml a
verl user writes, ``agent_loop_config_path``) and by hydra's instantiate as the worker does it, on real
episodes of the more-itertools instance (``conftest.task``) and on the embedded world.

The model: verl's agent-loop tests in its repository (``tests/experimental/agent_loop/``, not in the
wheel) run a real vLLM/SGLang server on GPUs with Qwen2.5 from the hub and have no CPU stand-in for
the server manager or the tokenizer. Here the server manager answers ``generate(request_id,
prompt_ids, sampling_params)`` with verl's own ``TokenOutput`` from a script (an ``AsyncMock``
``side_effect``, so the prompts it was given can be read back), and the tokenizer is a byte-level BPE
built on the spot (no download) with sweworld's ChatML-with-tools template, as ``sweworld.train.tiny``
builds one: ``<tool_call>{json}</tool_call>`` replies, which verl's hermes parser reads, and
``<|im_end|>`` turns, which verl's Qwen Continuous Token builder (``model_type`` qwen2) joins.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from unittest.mock import AsyncMock

import pytest

pytest.importorskip("verl")

import hydra
import numpy as np
import verl
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen2Config
from verl.experimental.agent_loop.agent_loop import AgentLoopWorker, DictConfigWrap, ToolListWrap
from verl.protocol import DataProto
from verl.utils.dataset.rl_dataset import RLHFDataset
from verl.workers.rollout.replica import TokenOutput

from infra_failure import DIE, dies_on_marker
from sweworld.agents.actions import render_text_action
from sweworld.agents.policies import OraclePolicy
from sweworld.core.errors import DatasetError, SandboxError
from sweworld.integrations.verl import AGENT_NAME, SWEWorldAgentLoop, rows
from sweworld.tasks import save_tasks
from sweworld.tools import default_tools
from sweworld.train.tiny import EOS, PAD, SPECIAL, chat_template

pytestmark = [pytest.mark.verl]
TARGET = f"{SWEWorldAgentLoop.__module__}.{SWEWorldAgentLoop.__qualname__}"
SAMPLING = {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "logprobs": True}


def real(test):
    """A test on real episodes: bubblewrap, PyPI (the instance's build), one xdist worker for them all."""
    for mark in (pytest.mark.bwrap, pytest.mark.network, pytest.mark.slow, pytest.mark.xdist_group("verl")):
        test = mark(test)
    return test


@pytest.fixture(scope="module")
def tokenizer(task):
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    texts = [json.dumps(default_tools().schemas()), task.problem_statement, task.patch, chat_template()]
    bpe.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=2048, special_tokens=list(SPECIAL), initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token=EOS, pad_token=PAD)
    tokenizer.chat_template = chat_template()
    return tokenizer


@pytest.fixture(scope="module")
def model_dir(tokenizer, tmp_path_factory) -> Path:
    """What ``actor_rollout_ref.model.path`` names: the tokenizer and a Qwen2 config (no weights: nothing runs it)."""
    directory = tmp_path_factory.mktemp("tiny-qwen2")
    tokenizer.save_pretrained(directory)
    Qwen2Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                num_attention_heads=4, num_key_value_heads=2, architectures=["Qwen2ForCausalLM"]).save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def dataset(task, tmp_path_factory) -> str:
    return str(save_tasks([task], tmp_path_factory.mktemp("dataset") / "tasks.jsonl"))


def trainer_config(*overrides: str):
    """verl's own ``ppo_trainer`` config (from the installed package), as its tests compose it."""
    with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer" / "config"), version_base=None):
        return compose("ppo_trainer", overrides=[
            "actor_rollout_ref.rollout.name=vllm",
            "actor_rollout_ref.rollout.prompt_length=8192",
            "actor_rollout_ref.rollout.response_length=32768",
            "actor_rollout_ref.rollout.multi_turn.max_tool_response_length=4000", *overrides])


def tool_call(name: str, arguments: dict) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def gold(task) -> list[str]:
    """The gold fix as the model's replies: the oracle's edits, then submit."""
    return [tool_call(name, args) for name, args, _ in OraclePolicy().actions(task)] + [tool_call("submit", {})]


def server(tokenizer, replies: list[str]) -> SimpleNamespace:
    """verl's server manager, scripted: each ``generate`` returns the next reply's tokens (and EOS)."""
    outputs = []
    for text in replies:
        ids = tokenizer.encode(text + EOS, add_special_tokens=False)
        outputs.append(TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed"))
    return SimpleNamespace(generate=AsyncMock(side_effect=outputs))


def run_loop(tokenizer, manager, row: dict, **options):
    """One trajectory, the loop built as ``AgentLoopWorker`` builds it (hydra, the registry's entry)."""
    config = trainer_config()

    async def go():
        entry = OmegaConf.create({"name": AGENT_NAME, "_target_": TARGET})
        loop = hydra.utils.instantiate(entry, trainer_config=DictConfigWrap(config), server_manager=manager,
                                       tokenizer=tokenizer, processor=None, hf_model_type="qwen2",
                                       dataset_cls=RLHFDataset, data_config=DictConfigWrap(config.data),
                                       tools=ToolListWrap([]), **options)
        return await loop.run(dict(SAMPLING), **row)

    return asyncio.run(go())


def row_of(task, dataset: str) -> dict:
    """What verl's ``RLHFDataset`` hands the loop for ``rows([task])[0]``."""
    data = rows([task], dataset=dataset)[0]
    return {"raw_prompt": data["prompt"], "extra_info": data["extra_info"], "data_source": data["data_source"]}


def split_by_mask(tokenizer, ids: list[int], mask: list[int]) -> tuple[str, str]:
    """(the model's tokens, the observations') of a response, by response_mask."""
    return (tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m == 1]),
            tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m == 0]))


class Recording:
    """The real backend, keeping the episodes it opens (to see them closed afterwards)."""

    def __init__(self, backend):
        self.backend, self.name, self.opened = backend, backend.name, []

    def prepare(self, task):
        return self.backend.prepare(task)

    def open(self, task, **options):
        self.opened.append(self.backend.open(task, **options))
        return self.opened[-1]

    def evaluate(self, *args, **options):
        return self.backend.evaluate(*args, **options)


@real
def test_the_gold_fix_through_verls_worker_is_rewarded_one(task, tokenizer, model_dir, dataset, tmp_path):
    """verl's ``AgentLoopWorker.generate_sequences`` on a batch whose row's ``agent_name`` is the yaml's
    entry: the reward reaches the batch as ``rm_scores`` on the last response token."""
    loops = tmp_path / "agent_loops.yaml"
    loops.write_text(f"- name: sweworld_real\n  _target_: {TARGET}\n  backend: real\n  dataset: {dataset}\n")
    config = trainer_config(f"actor_rollout_ref.model.path={model_dir}",
                            f"actor_rollout_ref.rollout.agent.agent_loop_config_path={loops}")
    manager = server(tokenizer, gold(task))
    worker = AgentLoopWorker(config, manager)
    data = rows([task], dataset=dataset, agent_name="sweworld_real")[0]
    batch = DataProto.from_dict(non_tensors={
        "raw_prompt": np.array([data["prompt"]], dtype=object), "agent_name": np.array([data["agent_name"]], dtype=object),
        "extra_info": np.array([data["extra_info"]], dtype=object),
        "data_source": np.array([data["data_source"]], dtype=object)})
    result = asyncio.run(worker.generate_sequences(batch))
    info = result.non_tensor_batch["sweworld"][0]
    assert info["resolved"] is True and info["stop_reason"] == "submit" and info["error"] is None, info
    assert info["backend"] == "real" and "+    if default is _marker:" in info["patch"]
    assert manager.generate.await_count == len(gold(task))
    scores, mask = result.batch["rm_scores"][0], result.batch["response_mask"][0]
    last = int(result.batch["attention_mask"][0, result.batch["prompts"].shape[1]:].sum()) - 1
    assert scores.sum().item() == 1.0 and scores[last].item() == 1.0
    response = result.batch["responses"][0][: last + 1].tolist()
    said, seen = split_by_mask(worker.tokenizer, response, mask[: last + 1].tolist())
    assert said.count("<tool_call>") == len(gold(task)) and "has been edited" not in said
    assert "has been edited" in seen and "<tool_call>" not in seen  # observations: mask 0


@real
def test_the_shell_persists_across_calls_and_the_episode_is_closed(task, tokenizer, backend, dataset):
    recording = Recording(backend)
    manager = server(tokenizer, [tool_call("execute_bash", {"command": "cd more_itertools && export FOO=bar"}),
                                 tool_call("execute_bash", {"command": "pwd; echo $FOO"}),
                                 "Nothing more to do."])
    output = run_loop(tokenizer, manager, row_of(task, dataset), backend=recording)
    info = output.extra_fields["sweworld"]
    assert info["stop_reason"] == "no_tool_call" and info["tool_calls"] == 2 and info["error"] is None
    said, seen = split_by_mask(tokenizer, output.response_ids, output.response_mask)
    assert "/testbed/more_itertools\nbar\n" in seen and "Nothing more to do." in said
    third_prompt = manager.generate.await_args_list[2].kwargs["prompt_ids"]
    assert "/testbed/more_itertools\nbar\n" in tokenizer.decode(third_prompt)  # the model saw it
    assert output.reward_score == 0.0 and info["patch"] == "" and output.num_turns == 6
    assert len(recording.opened) == 1
    with pytest.raises(SandboxError, match="closed"):
        recording.opened[0].run("true")


@real
def test_a_change_that_fixes_nothing_is_graded_zero_in_text_actions(task, tokenizer, backend, dataset):
    """sweworld's ``<function=...>`` text format (``tool_format: sweworld_text``): the tools' instructions
    open the prompt; the diff is graded by the harness, not resolved."""
    manager = server(tokenizer, [render_text_action("execute_bash", {"command": "echo note > NOTES.txt"}, "a note"),
                                 render_text_action("submit", {}, "done")])
    output = run_loop(tokenizer, manager, row_of(task, dataset), backend=backend, tool_format="sweworld_text")
    info = output.extra_fields["sweworld"]
    assert "---- BEGIN FUNCTION: execute_bash ----" in tokenizer.decode(output.prompt_ids)
    assert info["stop_reason"] == "submit" and "NOTES.txt" in info["patch"]
    assert info["resolved"] is False and output.reward_score == 0.0 and output.metrics.compute_score > 0


@real
def test_a_tool_call_that_raises_ends_with_reward_zero_and_the_error(task, tokenizer, backend, dataset):
    recording = Recording(backend)
    manager = server(tokenizer, [tool_call("execute_bash", {"command": DIE}), *gold(task)])
    with dies_on_marker():
        output = run_loop(tokenizer, manager, row_of(task, dataset), backend=recording)
    info = output.extra_fields["sweworld"]
    assert output.reward_score == 0.0 and info["stop_reason"] == "error"
    assert info["error"].startswith("SandboxError") and "died" in info["error"], info
    assert manager.generate.await_count == 1 and info["resolved"] is None
    assert len(recording.opened) == 1
    with pytest.raises(SandboxError, match="closed"):
        recording.opened[0].run("true")


@real
def test_the_sim_backend_named_in_the_loop_config_rewards_swr_probability(task, tokenizer, dataset):
    """``backend: sim`` without options: the embedded world (CPU SWT/SWR), through ``integrations.episodes``."""
    output = run_loop(tokenizer, server(tokenizer, gold(task)), row_of(task, dataset), backend="sim", dataset=dataset)
    info = output.extra_fields["sweworld"]
    assert info["backend"] == "sim" and info["stop_reason"] == "submit" and info["resolved"] is True
    assert 0.5 < output.reward_score < 1.0


def test_a_row_naming_no_instance_is_one_dataset_error(tokenizer, dataset):
    manager = server(tokenizer, ["unused"])
    with pytest.raises(DatasetError, match="names no instance"):
        run_loop(tokenizer, manager, {"raw_prompt": [{"role": "user", "content": "fix it"}], "extra_info": {}},
                 dataset=dataset)
    assert manager.generate.await_count == 0
