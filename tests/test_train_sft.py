"""``sweworld train sft`` on rows the exporters wrote: policy rows (``export sft`` of the SFT tests'
trajectories), SWT/SWR rows (``export world`` of the world-data tests' real traces) and verifier rows
(``export verifier``), trained on CPU for a few steps into a tiny model built from a config (no
download). The loss goes down, the checkpoint (and a LoRA adapter) loads back and has learned; bad
data files stop with one error at file:line; without the train extra the error says how to install it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "data"))  # the exporter tests' fixtures

from data_trajectories import trajectory, write_run

from sweworld.core.errors import ConfigError, DatasetError
from sweworld.train.rows import load_rows
from sweworld.train.sft import row_length

CLI = [sys.executable, "-m", "sweworld.cli.app", "train", "sft"]
ONE_THREAD = {**os.environ, "OMP_NUM_THREADS": "1"}
"""Tiny models on a shared CPU: one thread each is faster than two that contend."""


@pytest.fixture
def one_thread():
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, Path]:
    """policy.jsonl, world/swt.jsonl, world/swr.jsonl and verifier.jsonl, written by the exporters."""
    from data_traces import record

    from sweworld.core.types import Task
    from sweworld.data.sft import load_runs, write_sft
    from sweworld.data.verifier import write_verifier
    from sweworld.data.world import write_world

    root = tmp_path_factory.mktemp("exported")
    runs = write_run(root / "run", [trajectory(i, k, steps=3, reward=float(k == 0)) for i in "ab" for k in range(2)])
    write_sft([runs], root / "policy.jsonl")
    tasks = {i: Task(instance_id=i, repo="org/repo", base_commit="0" * 40, problem_statement=f"Fix {i}.") for i in "ab"}
    write_verifier(load_runs([runs]), tasks, root / "verifier.jsonl")
    write_world([record(root / "traces")], root / "world")
    return {"policy": root / "policy.jsonl", "swt": root / "world" / "swt.jsonl", "swr": root / "world" / "swr.jsonl",
            "verifier": root / "verifier.jsonl"}


@pytest.fixture(scope="module")
def tiny(exported, tmp_path_factory) -> Path:
    pytest.importorskip("trl", reason="the train extra is not installed (pip install 'sweworld[train]')")
    from sweworld.train.tiny import build_tiny_for

    return build_tiny_for(tmp_path_factory.mktemp("tiny") / "model", load_rows(list(exported.values())))


def reply_loss(model, tokenizer, rows) -> float:
    """The model's mean loss on the last assistant reply of each row (what assistant-only training
    teaches), the rest of the rendered conversation as its context."""
    import torch

    losses = []
    with torch.no_grad():
        for row in rows:
            ids = tokenizer.apply_chat_template(row.messages, tools=row.tools, tokenize=True, return_dict=True)
            prompt = tokenizer.apply_chat_template(row.messages[:-1], tools=row.tools, tokenize=True,
                                                   return_dict=True, add_generation_prompt=True)
            tensor = torch.tensor([ids["input_ids"]])
            labels = tensor.clone()
            labels[0, :len(prompt["input_ids"])] = -100
            losses.append(float(model(input_ids=tensor, labels=labels).loss))
    return sum(losses) / len(losses)


def mean_loss(model, tokenizer, rows) -> float:
    """The model's mean loss over the rows as the chat template renders them."""
    import torch

    losses = []
    with torch.no_grad():
        for row in rows:
            ids = tokenizer.apply_chat_template(row.messages, tools=row.tools, tokenize=True, return_dict=True)
            tensor = torch.tensor([ids["input_ids"]])
            losses.append(float(model(input_ids=tensor, labels=tensor).loss))
    return sum(losses) / len(losses)


@pytest.mark.slow
@pytest.mark.train
def test_full_fine_tune_from_the_cli_lowers_the_loss_and_loads_back(exported, tiny, tmp_path, one_thread):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    rows = load_rows(list(exported.values()))
    tokenizer = AutoTokenizer.from_pretrained(tiny)
    policy = next(r for r in rows if r.kind == "policy")
    text = tokenizer.apply_chat_template(policy.messages, tools=policy.tools, tokenize=False)
    assert '<tool_call>{"name": "submit", "arguments": {}}</tool_call><|im_end|>' in text  # tool calls render
    assert '"name": "str_replace_editor"' in text and "<|im_start|>tool\n" in text  # so do schemas and results

    out = tmp_path / "sft"
    result = subprocess.run([*CLI, "--data", *map(str, exported.values()), "--model", str(tiny), "--out", str(out),
                             "--max-steps", "8", "--batch-size", "4", "--lr", "1e-2", "--logging-steps", "1",
                             "--max-length", "512", "--too-long", "cut"], capture_output=True, text=True, env=ONE_THREAD)
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["rows"] == len(rows) and summary["steps"] == 8 and summary["device"] == "cpu"
    assert summary["kinds"] == {"policy": 2, "verifier": 4, "swt": 6, "swr": 2}
    assert len(summary["losses"]) == 8 and summary["losses"][-1] < summary["losses"][0] - 0.5
    assert min(summary["losses"]) <= summary["mean_loss"] <= max(summary["losses"])
    lengths = [row_length(tokenizer, row) for row in rows]
    assert summary["too_long"] == sum(n > 512 for n in lengths) > 0 and summary["rows_trained"] == len(rows)
    assert summary["tokens"] == sum(min(n, 512) for n in lengths)  # cut to --max-length
    assert f"-> {out}" in result.stdout

    trained = AutoModelForCausalLM.from_pretrained(out)
    reloaded = AutoTokenizer.from_pretrained(out)
    assert reloaded.chat_template == tokenizer.chat_template
    before = mean_loss(AutoModelForCausalLM.from_pretrained(tiny), tokenizer, rows)
    after = mean_loss(trained, reloaded, rows)
    assert after < before - 0.5, (before, after)


@pytest.mark.slow
@pytest.mark.train
def test_a_lora_adapter_on_world_rows_with_assistant_only_loss_loads_back(exported, tiny, tmp_path, one_thread):
    from peft import AutoPeftModelForCausalLM
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from sweworld.train.sft import SFTTrainOptions, train_sft

    data = [exported["swt"], exported["swr"]]
    rows = load_rows(data)
    tokenizer = AutoTokenizer.from_pretrained(tiny)
    lengths = sorted(row_length(tokenizer, row) for row in rows)
    options = SFTTrainOptions(model=str(tiny), out=tmp_path / "none", max_length=lengths[0] - 1)
    with pytest.raises(DatasetError, match=f"every row is longer than --max-length {lengths[0] - 1} tokens"):
        train_sft(data, options)
    with pytest.raises(ConfigError, match="no model directory at"):
        train_sft(data, SFTTrainOptions(model=str(tmp_path / "absent"), out=tmp_path / "none"))

    out, limit = tmp_path / "lora", lengths[len(lengths) // 2]  # rows over the median are dropped, not cut
    summary = train_sft(data, SFTTrainOptions(model=str(tiny), out=out, lora=True, lora_r=8, max_steps=6,
                                              batch_size=4, learning_rate=3e-2, assistant_only_loss=True,
                                              logging_steps=1, max_length=limit))
    # what it learned is judged below on the kept rows' replies: the logged losses alternate between a batch of
    # four rows and one of the fifth (five rows, batches of four), so first and last are not comparable
    assert summary.lora and summary.kinds == {"swt": 6, "swr": 2} and len(summary.losses) == 6
    assert summary.too_long == sum(n > limit for n in lengths) > 0
    assert summary.rows_trained == len(rows) - summary.too_long
    assert summary.tokens == sum(n for n in lengths if n <= limit)
    assert (out / "adapter_config.json").is_file() and not (out / "model.safetensors").exists()

    adapted = AutoPeftModelForCausalLM.from_pretrained(out)
    base = AutoModelForCausalLM.from_pretrained(tiny)
    trained = [row for row in rows if row_length(tokenizer, row) <= limit]
    after, before = reply_loss(adapted, tokenizer, trained), reply_loss(base, tokenizer, trained)
    assert after < before, (after, before)


def write(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


CHAT = json.dumps({"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]})


@pytest.mark.parametrize(("lines", "where", "says"), [
    ((), "", "no rows (the file is empty)"),
    ((CHAT, "{not json"), ":2", "invalid JSON"),
    ((json.dumps({"conversations": [{"from": "human", "value": "q"}]}),), ":1", "sharegpt row"),
    ((CHAT, "", json.dumps({"text": "plain"})), ":3", "no 'messages' in the row (its keys: text)"),
    ((json.dumps({"messages": [{"role": "user", "content": "q"}]}),), ":1", "no assistant turn"),
    ((json.dumps({"messages": [{"role": "robot", "content": "q"}]}),), ":1", "message 0 has the role 'robot'"),
    ((json.dumps({"messages": [], "kind": "swt"}),), ":1", "'messages' is not a non-empty list"),
    ((json.dumps({"messages": json.loads(CHAT)["messages"], "tools": "{bad"}),), ":1", "'tools' is a string"),
])
def test_bad_data_is_one_error_at_file_and_line(tmp_path, lines, where, says):
    path = write(tmp_path / "rows.jsonl", *lines)
    with pytest.raises(DatasetError) as caught:
        load_rows([path])
    assert caught.value.where == f"{path}{where}" and says in caught.value.message


def test_rows_keep_their_shapes_and_kinds(tmp_path):
    tools = json.dumps([{"type": "function", "function": {"name": "f", "parameters": {}}}])
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"x": [1]}'}}
    path = write(tmp_path / "rows.jsonl", CHAT, json.dumps({"messages": [
        {"role": "user", "content": None}, {"role": "assistant", "content": None, "tool_calls": [call]}],
        "tools": tools}))
    chat, policy = load_rows([path])
    assert (chat.kind, chat.tools, chat.where) == ("chat", None, f"{path}:1")
    assert policy.kind == "policy" and policy.tools == json.loads(tools)
    assert policy.messages[0]["content"] == "" and policy.messages[1]["tool_calls"][0]["function"]["arguments"] == {
        "x": [1]}
    assert load_rows([path], "string")[1].messages[1]["tool_calls"][0]["function"]["arguments"] == '{"x": [1]}'


def test_the_cli_reports_bad_data_and_a_missing_extra_in_one_line(tmp_path):
    bad = write(tmp_path / "bad.jsonl", CHAT, "[1, 2]")
    result = subprocess.run([*CLI, "--data", str(bad), "--model", "m"], capture_output=True, text=True)
    assert result.returncode == 2 and f"error: {bad}:2: a row is a JSON list, not an object" in result.stderr
    missing = subprocess.run([*CLI, "--data", str(tmp_path / "no.jsonl"), "--model", "m"], capture_output=True,
                             text=True)
    assert missing.returncode == 2 and "no such file or directory" in missing.stderr

    good = write(tmp_path / "good.jsonl", CHAT)
    no_trl = ("import sys; sys.modules['trl'] = None; from sweworld.cli.app import main; "
              f"sys.argv = ['sweworld', 'train', 'sft', '--data', {str(good)!r}, '--model', 'm']; main()")
    result = subprocess.run([sys.executable, "-c", no_trl], capture_output=True, text=True)
    assert result.returncode == 2 and "training needs the 'train' extra, and trl cannot be imported" in result.stderr
    assert "pip install 'sweworld[train]'" in result.stderr


def test_the_package_and_the_cli_import_without_the_training_libraries():
    code = ("import sys; import sweworld, sweworld.cli.app, sweworld.train.sft, sweworld.train.tiny; "
            "print(sorted(m for m in ('torch', 'transformers', 'trl', 'peft', 'datasets') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
