"""Reverse-reasoning chain of thought (SWE-World): reasoning written by a teacher that knew the answer,
kept only when it reads as if it did not.

For one world-model row (the world prompt, the true answer, its label), ``ReverseReasoner.reason``:

1. asks the teacher (``prompts/teacher.j2``): the world prompt and the true result; it writes a
   forward simulation that may not cite the result and ends with the line ``Verdict: exit code N``
   (SWT) or ``Verdict: reward N`` (SWR);
2. drops the row when the last verdict line is missing (``no_verdict``) or contradicts the label
   (``wrong_conclusion``), or when the reasoning shows hindsight (``hindsight``): it refers to a
   given result (``CITATIONS``), repeats a string of the result nothing in the prompt could let it
   know (a timing, a memory address, the nonce mask), or opens with a line of the result (a line of
   40+ characters absent from the prompt, found in the first third of the reasoning: quoted before
   it was reasoned to);
3. asks the judge (``prompts/judge.j2``), which ends with ``JUDGEMENT: ACCEPT`` or ``JUDGEMENT:
   REJECT ...`` (``judge_rejected``; no such line: ``judge_unreadable``).

A kept row's target is ``<think>reasoning</think>`` + the true JSON. An endpoint that fails after
its retries drops that row (``teacher_error`` / ``judge_error``), and the export goes on.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Literal

import jinja2
from pydantic import BaseModel, Field

from sweworld.core.errors import ModelError
from sweworld.core.protocols import Closeable
from sweworld.models.base import ChatModel, ModelConfig
from sweworld.world.templates import _fence, _json

PROMPTS = Path(__file__).parent / "prompts"
Kind = Literal["swt", "swr"]
OUTCOMES = ("accepted", "no_verdict", "wrong_conclusion", "hindsight", "judge_rejected", "judge_unreadable",
            "teacher_error", "judge_error")
CITATIONS = re.compile(
    r"\b(?:the|this)\s+(?:true|given|provided|recorded|known|real|actual)\s+(?:result|output|outcome|answer|"
    r"report|test report|run)\b|\b(?:we|i)\s+(?:are|am|was|were)\s+(?:told|given|shown)\b|"
    r"\baccording to the (?:result|output|report)\b", re.IGNORECASE)
VOLATILE = re.compile(r"\b\d+\.\d+\s?s\b|0x[0-9a-fA-F]{6,}|<nonce>|/tmp/[\w./-]+")
VERDICT = {"swt": re.compile(r"verdict\s*:\s*exit\s*code\s*[:=]?\s*(-?\d+)", re.IGNORECASE),
           "swr": re.compile(r"verdict\s*:\s*reward\s*[:=]?\s*(-?\d+)", re.IGNORECASE)}
JUDGEMENT = re.compile(r"JUDGEMENT\s*:\s*(ACCEPT|REJECT)\b(.*)", re.IGNORECASE)
THINK = re.compile(r"</?think>", re.IGNORECASE)
DISTINCT_LINE = 40


def verdict_line(kind: Kind, label: int) -> str:
    return f"Verdict: exit code {label}" if kind == "swt" else f"Verdict: reward {label}"


@cache
def _template(name: str) -> jinja2.Template:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(PROMPTS)), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, autoescape=False)
    env.filters.update(fence=_fence, json=_json)
    return env.get_template(f"{name}.j2")


def render(name: str, **values: object) -> list[dict[str, str]]:
    """The chat messages (system, user) of ``prompts/<name>.j2``."""
    template = _template(name)
    ctx = template.new_context(values)
    return [{"role": role, "content": "".join(template.blocks[role](ctx)).strip()} for role in ("system", "user")]


def _texts(result: str) -> str:
    """The strings of a JSON answer (its lines are escaped inside the JSON), else the text itself."""
    try:
        value = json.loads(result)
    except json.JSONDecodeError:
        return result
    return "\n".join(v for v in value.values() if isinstance(v, str)) if isinstance(value, dict) else result


def hindsight(reasoning: str, result: str, prompt: str) -> str | None:
    """What in ``reasoning`` gives the result away (None: nothing found); see the module docstring."""
    cited = CITATIONS.search(reasoning)
    if cited:
        return f"cites the result: {cited.group(0)!r}"
    for token in set(VOLATILE.findall(result)):
        if token not in prompt and token in reasoning:
            return f"repeats {token!r}, which the prompt cannot tell"
    opening = reasoning[:max(1, len(reasoning) // 3)]
    for line in {line.strip() for line in _texts(result).splitlines()}:
        if len(line) >= DISTINCT_LINE and line not in prompt and line in opening:
            return f"opens with a line of the result: {line[:80]!r}"
    return None


def stated_verdict(kind: Kind, reasoning: str) -> int | None:
    found = VERDICT[kind].findall(reasoning)
    return int(found[-1]) if found else None


class Verdict(BaseModel):
    """What became of one row: ``outcome`` (one of ``OUTCOMES``), the reasoning when accepted."""

    outcome: str
    reasoning: str = ""
    why: str = ""


class TeacherConfig(BaseModel):
    """The teacher and judge endpoints (OpenAI-compatible)."""

    teacher_url: str
    teacher_model: str
    judge_url: str | None = Field(default=None, description="Default: the teacher's URL.")
    judge_model: str | None = Field(default=None, description="Default: the teacher's model.")
    max_retries: int = Field(default=2, ge=0, description="HTTP retries per request.")
    max_tokens: int | None = Field(default=None, description="Cap on generated tokens per reply.")

    def model_config_of(self, role: str) -> ModelConfig:
        url = self.teacher_url if role == "teacher" else self.judge_url or self.teacher_url
        model = self.teacher_model if role == "teacher" else self.judge_model or self.teacher_model
        return ModelConfig(url=url, model=model, temperature=0.0, max_retries=self.max_retries,
                           max_tokens=self.max_tokens, native_tools=False)


class ReverseReasoner:
    """Teacher + checks + judge for one row at a time (thread-safe: the clients are)."""

    def __init__(self, teacher: ChatModel, judge: ChatModel):
        self.teacher, self.judge = teacher, judge

    @classmethod
    def from_config(cls, config: TeacherConfig) -> ReverseReasoner:
        from sweworld.models.openai import OpenAIChatModel
        return cls(OpenAIChatModel(config.model_config_of("teacher")), OpenAIChatModel(config.model_config_of("judge")))

    def close(self) -> None:
        for client in {id(self.teacher): self.teacher, id(self.judge): self.judge}.values():
            if isinstance(client, Closeable):
                client.close()

    def reason(self, kind: Kind, world: list[dict[str, str]], result: str, label: int) -> Verdict:
        """The fate of one row (see the module docstring)."""
        line = verdict_line(kind, label)
        system, user = world[0]["content"], world[-1]["content"]
        try:
            reply = self.teacher.complete(render("teacher", kind=kind, world_system=system, world_user=user,
                                                 result=result, verdict_line=line))
        except ModelError as exc:
            return Verdict(outcome="teacher_error", why=exc.message)
        reasoning = THINK.sub("", reply.content or "").strip()
        stated = stated_verdict(kind, reasoning)
        if stated is None:
            return Verdict(outcome="no_verdict", why="no verdict line")
        if stated != label:
            return Verdict(outcome="wrong_conclusion", why=f"concludes {verdict_line(kind, stated)!r}; the label is {label}")
        seen = hindsight(reasoning, result, system + "\n" + user)
        if seen:
            return Verdict(outcome="hindsight", why=seen)
        try:
            judged = self.judge.complete(render("judge", kind=kind, world_user=user, result=result,
                                                reasoning=reasoning, verdict_line=line))
        except ModelError as exc:
            return Verdict(outcome="judge_error", why=exc.message)
        found = JUDGEMENT.findall(judged.content or "")
        if not found:
            return Verdict(outcome="judge_unreadable", why="no JUDGEMENT line")
        decision, why = found[-1]
        if decision.upper() != "ACCEPT":
            return Verdict(outcome="judge_rejected", why=why.strip(" :-"))
        return Verdict(outcome="accepted", reasoning=reasoning)
