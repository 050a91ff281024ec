"""SFT rows from rollouts: the agent's own conversations, filtered as SWE-Gym and SWE-World filter them.

``export_sft(runs, out, options)`` reads ``<run>/trajectories.jsonl`` of each rollout directory
(``TrajectoryStore``), decides each trajectory's fate and writes the kept ones, one JSON row a line:
the chat row of ``sweworld.data.formats`` (the conversation up to the agent's last turn, so a row
ends with the ``submit`` call, and the tool schemas of ``default_tools()``) plus ``instance_id``,
``sample``, ``policy``, ``model``, ``reward``, ``exit_status``, ``steps``, ``tokens``, ``backend``, ``run``.

Filters, in order; a trajectory is counted under the first one that removes it (``FILTERS``):

- ``failed``: a model or infrastructure failure (``error_kind``): no outcome, never kept;
- ``unresolved``: reward is not 1 (off with ``keep_unresolved``, ``--all``);
- ``format_errors``: a turn held no valid action;
- ``hit_limit``: the episode ended at its step, time or context limit;
- ``not_submitted``: it did not end in ``submit`` (stuck, too many format errors);
- ``too_long``: the row is over ``max_tokens`` (``sweworld.data.tokens``);
- ``cap``: more than ``cap_per_instance`` kept rows of one instance. Resolved ones are preferred,
  then the fewest steps; equal ones are ordered by a hash of (seed, run, instance, sample), so the
  choice is deterministic and a new seed picks another one (SWE-Gym: a cap of 1-2 is best).

The summary (``SFTSummary``) says how many each filter removed; ``write_sft`` writes it next to the
output as ``<name>.summary.json``.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from sweworld.core.errors import DatasetError
from sweworld.data.formats import Arguments, Format, chat_row
from sweworld.data.tokens import TokenCounter
from sweworld.trajectory import LIMIT_STATUSES, Trajectory

FILTERS: dict[str, str] = {
    "failed": "a model or infrastructure failure (error_kind): never kept",
    "unresolved": "reward is not 1 (kept with --all)",
    "format_errors": "a turn held no valid action",
    "hit_limit": "ended at the step, time or context limit",
    "not_submitted": "did not end in submit",
    "too_long": "over --max-tokens",
    "cap": "over --cap-per-instance (the longest first)",
}
TRAJECTORIES_FILE = "trajectories.jsonl"


class SFTOptions(BaseModel):
    """What ``export_sft`` keeps and how it writes it."""

    keep_unresolved: bool = Field(default=False, description="Keep every trajectory with an outcome (--all).")
    cap_per_instance: int | None = Field(default=None, ge=1, description="Rows kept per instance at most.")
    seed: int = Field(default=0, description="Orders trajectories of equal length for the cap.")
    max_tokens: int | None = Field(default=None, ge=1, description="Longest row kept, in tokens.")
    format: Format = Field(default="openai", description="'openai' (messages + tools) or 'sharegpt'.")
    arguments: Arguments = Field(default="string", description="Tool-call arguments as a JSON string or an object.")


class SFTSummary(BaseModel):
    """What an export read, removed and wrote."""

    runs: list[str]
    trajectories: int = 0
    removed: dict[str, int] = Field(default_factory=lambda: dict.fromkeys(FILTERS, 0))
    rows: int = 0
    instances: int = 0
    resolved_rows: int = 0
    tokens: dict[str, Any] = Field(default_factory=dict, description="Counter, total and longest row.")
    options: SFTOptions = Field(default_factory=SFTOptions)


def conversation(traj: Trajectory) -> list[dict[str, Any]]:
    """The messages up to and including the agent's last turn (the final tool result is not trained on)."""
    last = max((i for i, m in enumerate(traj.messages) if m.get("role") == "assistant"), default=-1)
    return traj.messages[:last + 1]


def load_runs(runs: Sequence[str | Path]) -> list[tuple[str, Trajectory]]:
    """(run, trajectory) of every rollout directory (or trajectories.jsonl file), in run order."""
    from sweworld.runs.store import TrajectoryStore

    found = []
    for run in runs:
        path = Path(run)
        path = path / TRAJECTORIES_FILE if path.is_dir() else path
        if not path.is_file():
            raise DatasetError(f"no {TRAJECTORIES_FILE} at {path}", where=str(run),
                               hint="give rollout directories (`sweworld rollout --out DIR`)")
        trajectories = TrajectoryStore(path).load()
        found += [(str(run), t) for t in sorted(trajectories, key=lambda t: t.key)]
    return found


def removed_by(traj: Trajectory, options: SFTOptions, tokens: int) -> str | None:
    """The first filter that removes ``traj`` (None: kept), cap aside."""
    if traj.failed:
        return "failed"
    if not options.keep_unresolved and traj.reward != 1:
        return "unresolved"
    if any(step.format_error for step in traj.steps):
        return "format_errors"
    if traj.exit_status in LIMIT_STATUSES:
        return "hit_limit"
    if traj.exit_status != "submitted" or not traj.steps:
        return "not_submitted"
    if options.max_tokens is not None and tokens > options.max_tokens:
        return "too_long"
    return None


def _order(seed: int, run: str, traj: Trajectory) -> tuple[int, int, str]:
    tie = hashlib.sha256(f"{seed}\0{run}\0{traj.instance_id}\0{traj.sample}".encode()).hexdigest()
    return (0 if traj.reward == 1 else 1, len(traj.steps), tie)


def select(found: Sequence[tuple[str, Trajectory]], options: SFTOptions, counter: TokenCounter,
           tools: list[dict]) -> tuple[list[tuple[str, Trajectory, int]], SFTSummary]:
    """The kept (run, trajectory, tokens), in input order, and the summary of the filters."""
    summary = SFTSummary(runs=list(dict.fromkeys(run for run, _ in found)), trajectories=len(found), options=options)
    kept: dict[str, list[tuple[int, str, Trajectory, int]]] = defaultdict(list)
    for position, (run, traj) in enumerate(found):
        tokens = counter.messages(conversation(traj), tools)
        why = removed_by(traj, options, tokens)
        if why:
            summary.removed[why] += 1
        else:
            kept[traj.instance_id].append((position, run, traj, tokens))
    chosen = []
    for group in kept.values():
        ranked = sorted(group, key=lambda item: _order(options.seed, item[1], item[2]))
        cap = options.cap_per_instance or len(ranked)
        summary.removed["cap"] += max(0, len(ranked) - cap)
        chosen += ranked[:cap]
    chosen.sort(key=lambda item: item[0])
    rows = [(run, traj, tokens) for _, run, traj, tokens in chosen]
    summary.rows = len(rows)
    summary.instances = len({traj.instance_id for _, traj, _ in rows})
    summary.resolved_rows = sum(traj.reward == 1 for _, traj, _ in rows)
    summary.tokens = {"counter": counter.name, "total": sum(t for *_, t in rows),
                      "longest": max((t for *_, t in rows), default=0), "max_tokens": options.max_tokens}
    return rows, summary


def sft_row(run: str, traj: Trajectory, tokens: int, tools: list[dict], options: SFTOptions) -> dict[str, Any]:
    row = chat_row(conversation(traj), tools, options.format, options.arguments)
    row.update(instance_id=traj.instance_id, sample=traj.sample, policy=traj.policy, model=traj.model,
               reward=traj.reward, exit_status=traj.exit_status, steps=len(traj.steps), tokens=tokens,
               backend=traj.backend, run=run)
    return row


def export_sft(runs: Sequence[str | Path], options: SFTOptions | None = None,
               counter: TokenCounter | None = None) -> tuple[list[dict[str, Any]], SFTSummary]:
    """The SFT rows of ``runs`` and the summary (see the module docstring)."""
    from sweworld.tools import default_tools

    options = options or SFTOptions()
    counter = counter or TokenCounter()
    tools = default_tools().schemas()
    rows, summary = select(load_runs(runs), options, counter, tools)
    return [sft_row(run, traj, tokens, tools, options) for run, traj, tokens in rows], summary


def summary_path(out: Path) -> Path:
    """``F.jsonl`` -> ``F.summary.json``, next to it."""
    return out.with_name(out.name.removesuffix(".jsonl") + ".summary.json")


def write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """``rows`` as JSON lines, replacing ``path`` by one rename."""
    from sweworld.harness.report import write_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def write_sft(runs: Sequence[str | Path], out: Path, options: SFTOptions | None = None,
              counter: TokenCounter | None = None) -> SFTSummary:
    """Export and write ``out`` and its summary; returns the summary."""
    from sweworld.harness.report import write_atomic

    rows, summary = export_sft(runs, options, counter)
    write_jsonl(out, rows)
    write_atomic(summary_path(out), summary.model_dump_json(indent=2) + "\n")
    return summary
