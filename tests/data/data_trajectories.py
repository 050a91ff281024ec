"""Hand-made trajectories as the agent loop writes them (OpenAI messages with tool calls, steps), and a
real word-level tokenizer built here (no download) for the token filter."""

from __future__ import annotations

import json
from pathlib import Path

from sweworld.runs.store import TrajectoryStore
from sweworld.trajectory import Step, Trajectory


def trajectory(instance: str, sample: int = 0, *, steps: int = 2, reward: float | None = 1.0,
               exit_status: str = "submitted", format_error: bool = False, error_kind: str | None = None,
               words: int = 3) -> Trajectory:
    """``steps`` actions (``words`` words echoed each), the last one ``submit`` when submitted."""
    messages = [{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": f"Fix {instance}."}]
    recorded = []
    for index in range(steps):
        last = index == steps - 1 and exit_status == "submitted"
        tool, args = ("submit", {}) if last else ("execute_bash", {"command": "echo " + " ".join(["word"] * words)})
        call = f"call_{index}"
        messages += [{"role": "assistant", "content": None if last else f"step {index}", "tool_calls": [
                         {"id": call, "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}]},
                     {"role": "tool", "tool_call_id": call, "content": "submitted" if last else "word\n"}]
        recorded.append(Step(index=index, tool=tool, arguments=args, observation="ok",
                             format_error=format_error and index == 0))
    return Trajectory(instance_id=instance, sample=sample, policy="scripted", model="m", messages=messages,
                      steps=recorded, patch="diff" if reward else "", exit_status=exit_status, reward=reward,
                      error_kind=error_kind)


def write_run(directory: Path, trajectories: list[Trajectory]) -> Path:
    store = TrajectoryStore(directory / "trajectories.jsonl")
    for traj in trajectories:
        store.append(traj)
    return directory


def word_tokenizer(path: Path) -> Path:
    """A real ``tokenizers`` tokenizer (word level: one token per word or run of punctuation)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    tokenizer = Tokenizer(models.WordLevel({"[UNK]": 0, "word": 1}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(path))
    return path
