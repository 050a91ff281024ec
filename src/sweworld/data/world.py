"""World-model training sets from the trace store: SWT rows and SWR rows in chat form.

Every row's prompt is ``sweworld.world.templates.render(style, kind, trace.context)``, the function
``SWT.messages``/``SWR.messages`` call at inference, so training and inference prompts are the same
bytes. The target (the assistant message) is what the parsers (``sweworld.world.parse``) read:

- SWT: the real result as ``{"stdout", "stderr", "exit_code"}`` (``replay.swt_reply``): the
  recorded output, which interleaves both streams, is the stdout and stderr is empty, so the
  observation SWT's reply becomes (stdout, then stderr) is the recorded one exactly;
- SWR: ``<think>reasoning</think>`` + ``{"test_report", "reward", "exit_code"}``
  (``replay.swr_reply``): the test output between the harness's markers, the real verdict and the
  test command's exit code. The reasoning is the teacher's (``sweworld.data.cot``, ``cot: teacher``),
  or without a teacher a summary of the real grade (``cot: summary``).

Which traces: SWT only the commands the router sends to the simulator (``routed == "sim"``), at most
``max_steps_per_trajectory`` per episode (SWE-World: 6), chosen by a hash of (seed, episode, step)
and kept in step order; SWR every evaluation SWR would be asked about (a non-empty patch that
applies). Rows with the same prompt and target are written once. With a teacher, SWR rows (and SWT
rows with ``cot_swt``) get reverse-reasoning CoT and the rows the checks drop are left out.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from sweworld.data.cot import OUTCOMES, Kind, ReverseReasoner
from sweworld.parallel.map import map_items
from sweworld.world.replay import swr_reply, swt_reply
from sweworld.world.templates import render
from sweworld.world.traces import EvalTrace, StepTrace


class WorldOptions(BaseModel):
    """What ``world_rows`` builds."""

    style: str = Field(default="sweworld", description="Prompt style (sweworld.world.templates.styles()).")
    max_steps_per_trajectory: int = Field(default=6, ge=1, description="SWT rows per episode at most.")
    seed: int = Field(default=0, description="Chooses the steps of an episode that has more.")
    cot_swt: bool = Field(default=False, description="With a teacher, give SWT rows reasoning too.")
    workers: int = Field(default=4, ge=1, description="Teacher/judge requests in flight.")


def _rank(seed: int, step: StepTrace) -> str:
    return hashlib.sha256(f"{seed}\0{step.instance_id}\0{step.episode}\0{step.step}".encode()).hexdigest()


def choose_steps(steps: Iterable[StepTrace], n: int, seed: int = 0) -> tuple[list[StepTrace], int]:
    """At most ``n`` sim-routed steps per episode (see the module docstring); (chosen, left out)."""
    episodes: dict[tuple[str, str], list[StepTrace]] = defaultdict(list)
    for step in steps:
        if step.routed == "sim":
            episodes[step.instance_id, step.episode].append(step)
    chosen, left = [], 0
    for group in episodes.values():
        keep = sorted(group, key=lambda s: _rank(seed, s))[:n]
        left += len(group) - len(keep)
        chosen += sorted(keep, key=lambda s: s.step)
    return chosen, left


def asks_swr(trace: EvalTrace) -> bool:
    """SWR is asked about this patch at inference (non-empty, applies)."""
    return bool(trace.patch.strip()) and trace.patch_applies is not False


def summary_reasoning(trace: EvalTrace) -> str:
    """The real grade in words (the SWR reasoning when there is no teacher)."""
    status = trace.report.get("tests_status") or {}
    lines = []
    for key in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        passed, failed = (status.get(key) or {}).get("success", []), (status.get(key) or {}).get("failure", [])
        if passed or failed:
            shown = "" if not failed else ": failing " + ", ".join(failed[:5]) + (" ..." if len(failed) > 5 else "")
            lines.append(f"{key}: {len(passed)} of {len(passed) + len(failed)} tests pass{shown}.")
    lines.append("Every listed test passes, so the reward is 1." if trace.resolved else
                 "Not every listed test passes, so the reward is 0.")
    return "\n".join(lines)


def swt_label(trace: StepTrace) -> tuple[str, int]:
    """(the true JSON, the exit code)."""
    return swt_reply(trace.output, "", trace.exit_code), trace.exit_code


def swr_label(trace: EvalTrace) -> tuple[str, int]:
    """(the true JSON, the reward)."""
    return swr_reply(trace, "").split("</think>\n", 1)[1], int(trace.resolved)


def _row(kind: str, style: str, trace: StepTrace | EvalTrace) -> dict[str, Any]:
    messages = render(style, kind, trace.context)
    meta: dict[str, Any] = {"kind": kind, "style": style, "instance_id": trace.instance_id, "repo": trace.repo}
    if isinstance(trace, StepTrace):
        meta.update(episode=trace.episode, step=trace.step, command=trace.command, exit_code=trace.exit_code)
    else:
        meta.update(resolved=trace.resolved)
    return {"messages": messages, **meta}


def _unique(rows: list[tuple[dict[str, Any], Any]], target: Callable[[Any], str]) -> tuple[list, int]:
    seen, out = set(), []
    for row, trace in rows:
        key = json.dumps([row["messages"], target(trace)], ensure_ascii=False)
        if key not in seen:
            seen.add(key)
            out.append((row, trace))
    return out, len(rows) - len(out)


def target(kind: str, trace: StepTrace | EvalTrace, reasoning: str = "") -> str:
    """The assistant message of a row: the true JSON, after ``<think>reasoning</think>`` when given."""
    answer = (swt_label if kind == "swt" else swr_label)(trace)[0]
    return f"<think>\n{reasoning}\n</think>\n{answer}" if reasoning else answer


def _finish(kind: Kind, pairs: list[tuple[dict[str, Any], Any]], reasoner: ReverseReasoner | None,
            use_cot: bool, workers: int, counts: Counter) -> list[dict[str, Any]]:
    """Append each row's target; with CoT, ask the teacher and drop what the checks drop."""
    if not (reasoner and use_cot):
        for row, trace in pairs:
            reasoning = summary_reasoning(trace) if kind == "swr" else ""
            row.update(cot="summary" if reasoning else "none", target=target(kind, trace, reasoning))
        return [_with_target(row) for row, _ in pairs]
    label_of = swt_label if kind == "swt" else swr_label
    verdicts = map_items(pairs, lambda pair: reasoner.reason(kind, pair[0]["messages"], *label_of(pair[1])),
                         workers=workers)
    kept = []
    for (row, trace), verdict in zip(pairs, verdicts, strict=True):
        counts[verdict.outcome] += 1
        if verdict.outcome == "accepted":
            row.update(cot="teacher", target=target(kind, trace, verdict.reasoning))
            kept.append(_with_target(row))
    return kept


def _with_target(row: dict[str, Any]) -> dict[str, Any]:
    target = row.pop("target")
    row["messages"] = [*row["messages"], {"role": "assistant", "content": target}]
    return row


def world_rows(traces: Sequence[StepTrace | EvalTrace], options: WorldOptions | None = None,
               reasoner: ReverseReasoner | None = None) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    """``{"swt": rows, "swr": rows}`` and the counts (see the module docstring)."""
    options = options or WorldOptions()
    steps = [t for t in traces if isinstance(t, StepTrace)]
    evals = [t for t in traces if isinstance(t, EvalTrace)]
    chosen, over = choose_steps(steps, options.max_steps_per_trajectory, options.seed)
    swt, swt_dups = _unique([(_row("swt", options.style, t), t) for t in chosen], lambda t: swt_label(t)[0])
    asked = [t for t in evals if asks_swr(t)]
    swr, swr_dups = _unique([(_row("swr", options.style, t), t) for t in asked], lambda t: swr_label(t)[0])
    cot = {kind: Counter(dict.fromkeys(OUTCOMES, 0)) for kind in ("swt", "swr")}
    rows = {"swt": _finish("swt", swt, reasoner, options.cot_swt, options.workers, cot["swt"]),
            "swr": _finish("swr", swr, reasoner, True, options.workers, cot["swr"])}
    counts: dict[str, Any] = {
        "style": options.style, "traces": len(traces),
        "swt": {"steps": len(steps), "sim_routed": len(chosen) + over, "episodes": len({(t.instance_id, t.episode)
                for t in steps if t.routed == "sim"}), "over_cap": over, "duplicates": swt_dups,
                "rows": len(rows["swt"])},
        "swr": {"evaluations": len(evals), "not_asked": len(evals) - len(asked), "duplicates": swr_dups,
                "rows": len(rows["swr"]), "resolved": sum(r["resolved"] for r in rows["swr"])},
    }
    if reasoner:
        counts["cot"] = {kind: dict(c) for kind, c in cot.items() if kind == "swr" or options.cot_swt}
    return rows, counts


def write_world(traces: Sequence[str | Path], out: Path, options: WorldOptions | None = None,
                reasoner: ReverseReasoner | None = None) -> dict[str, Any]:
    """``out/swt.jsonl``, ``out/swr.jsonl`` and ``out/summary.json`` from trace files; returns the counts."""
    from sweworld.data.sft import write_jsonl
    from sweworld.harness.report import write_atomic
    from sweworld.world.traces import load_traces

    rows, counts = world_rows(load_traces(*traces), options, reasoner)
    for kind, kind_rows in rows.items():
        write_jsonl(out / f"{kind}.jsonl", kind_rows)
    counts["traces_files"] = [str(t) for t in traces]
    write_atomic(out / "summary.json", json.dumps(counts, indent=2) + "\n")
    return counts
