"""Verifier rows as SWE-Gym builds them: the issue and the trajectory (or only its final diff) in, the
real verdict out (``YES`` resolved, ``NO`` not), classes balanced.

``verifier_messages(task, trajectory, input)`` renders ``prompts/verifier.j2`` (system + user): the
prompt the ``llm`` verifier sends at inference (``sweworld.verify.llm``), so training and inference
prompts are the same bytes. The trajectory is the steps as text (``trajectory_text``): each action
(tool and arguments), its observation cut to ``max_chars`` (head and tail kept), and the thought,
without the line a scripted policy records its choice on (``perturb: <kind>``, which would be the
label).

``export_verifier(runs, tasks, options)``: every sample with an outcome (failed ones never), the
label from its real reward; with ``balance`` (default) the larger class is cut to the size of the
smaller one, the kept rows chosen by a hash of (seed, run, instance, sample). Rows: the chat row of
``formats`` (openai or sharegpt; no tools) with the assistant's answer, plus ``instance_id``,
``sample``, ``run``, ``label`` and ``reward``. The summary counts what was read, removed and written.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from sweworld.agents.perturb import MARK
from sweworld.core.errors import DatasetError
from sweworld.core.types import Task
from sweworld.data.cot import render
from sweworld.data.formats import Format, chat_row
from sweworld.trajectory import Step, Trajectory

Input = Literal["trajectory", "diff"]
YES, NO = "YES", "NO"


class VerifierOptions(BaseModel):
    input: Input = Field(default="trajectory", description="What the judge reads: 'trajectory' or 'diff'.")
    balance: bool = Field(default=True, description="Cut the larger class to the smaller one's size.")
    seed: int = Field(default=0, description="Chooses the rows balancing keeps.")
    max_chars: int = Field(default=2000, ge=100, description="Longest observation kept (head and tail).")
    format: Format = "openai"


class VerifierSummary(BaseModel):
    runs: list[str]
    trajectories: int = 0
    failed: int = 0
    yes: int = Field(default=0, description="Resolved samples read.")
    no: int = Field(default=0, description="Unresolved samples read.")
    balanced_out: int = Field(default=0, description="Rows removed to balance the classes.")
    rows: int = 0
    options: VerifierOptions = Field(default_factory=VerifierOptions)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"


def _thought(step: Step) -> str:
    return "\n".join(line for line in (step.thought or "").splitlines() if not line.startswith(MARK)).strip()


def trajectory_text(trajectory: Trajectory, max_chars: int = 2000) -> str:
    """The steps as text (see the module docstring)."""
    parts = []
    for step in trajectory.steps:
        thought = _thought(step)
        action = f"{step.tool or '(no valid action)'} {json.dumps(step.arguments, ensure_ascii=False)}"
        parts.append(f"## Step {step.index + 1}\n" + (f"Thought: {thought}\n" if thought else "") +
                     f"Action: {_cut(action, max_chars)}\nObservation:\n{_cut(step.observation or '', max_chars)}")
    return "\n\n".join(parts) or "(no steps)"


def verifier_messages(task: Task, trajectory: Trajectory, input: Input = "trajectory",
                      max_chars: int = 2000) -> list[dict[str, str]]:
    """The judge's prompt (system, user) for one sample."""
    return render("verifier", problem_statement=task.problem_statement, repo=task.repo, input=input,
                  trajectory=trajectory_text(trajectory, max_chars) if input == "trajectory" else "",
                  patch=trajectory.patch)


def _rank(seed: int, run: str, t: Trajectory) -> str:
    return hashlib.sha256(f"{seed}\0{run}\0{t.instance_id}\0{t.sample}".encode()).hexdigest()


def export_verifier(found: Sequence[tuple[str, Trajectory]], tasks: Mapping[str, Task],
                    options: VerifierOptions | None = None) -> tuple[list[dict[str, Any]], VerifierSummary]:
    """The rows and the summary (see the module docstring)."""
    options = options or VerifierOptions()
    summary = VerifierSummary(runs=list(dict.fromkeys(r for r, _ in found)), trajectories=len(found), options=options)
    kept = [(r, t) for r, t in found if not t.failed]
    summary.failed = len(found) - len(kept)
    for _, t in kept:
        if t.instance_id not in tasks:
            raise DatasetError(f"no task {t.instance_id} in the dataset given", hint="give the dataset the rollouts "
                               "ran on (--dataset)")
    classes = {YES: [p for p in kept if p[1].reward == 1.0], NO: [p for p in kept if p[1].reward != 1.0]}
    summary.yes, summary.no = len(classes[YES]), len(classes[NO])
    if options.balance:
        size = min(map(len, classes.values()))
        chosen = {id(p) for group in classes.values()
                  for p in sorted(group, key=lambda p: _rank(options.seed, *p))[:size]}
        summary.balanced_out = len(kept) - len(chosen)
        kept = [p for p in kept if id(p) in chosen]
    rows = []
    for run, t in kept:
        label = YES if t.reward == 1.0 else NO
        messages = [*verifier_messages(tasks[t.instance_id], t, options.input, options.max_chars),
                    {"role": "assistant", "content": label}]
        rows.append({**chat_row(messages, None, options.format), "instance_id": t.instance_id, "sample": t.sample,
                     "run": run, "label": label, "reward": t.reward})
    summary.rows = len(rows)
    return rows, summary


def write_verifier(samples: Sequence[tuple[str, Trajectory]], tasks: Mapping[str, Task], out: Path,
                   options: VerifierOptions | None = None) -> VerifierSummary:
    """Export ``samples`` (``sft.load_runs``) and write ``out`` and its summary (``<name>.summary.json``)."""
    from sweworld.data.sft import summary_path, write_jsonl
    from sweworld.harness.report import write_atomic

    rows, summary = export_verifier(samples, tasks, options)
    write_jsonl(out, rows)
    write_atomic(summary_path(out), summary.model_dump_json(indent=2) + "\n")
    return summary
