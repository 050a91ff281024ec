"""The ``llm`` verifier: a model behind an OpenAI-compatible endpoint judges each sample, as SWE-Gym's
verifier does.

The prompt is ``sweworld.data.verifier.verifier_messages`` (the rows ``sweworld export verifier``
trains on). One request per sample at temperature 0, one generated token, ``logprobs`` with
``top_logprobs``: score = P(YES) / (P(YES) + P(NO)) over the first token's alternatives (tokens
compared stripped and upper-cased). When the endpoint gives no logprobs, or neither answer is among
them, ``votes`` more requests at ``vote_temperature`` are sent and the score is the share of YES
among the YES/NO answers (0.5 when none answered either). Scores are cached per prompt (samples
often repeat a diff: with ``input="diff"`` they are asked about once).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from sweworld.core.errors import ConfigError
from sweworld.core.types import Task
from sweworld.data.verifier import Input, verifier_messages
from sweworld.trajectory import Trajectory
from sweworld.verify.verifiers import need_task

_ANSWER = re.compile(r"\b(YES|NO)\b", re.IGNORECASE)


def yes_probability(body: dict[str, Any]) -> float | None:
    """P(YES) normalised over YES/NO from the first generated token's top logprobs (None: not there)."""
    try:
        first = body["choices"][0]["logprobs"]["content"][0]
    except (KeyError, IndexError, TypeError):
        return None
    mass = {"YES": 0.0, "NO": 0.0}
    for alternative in [first, *(first.get("top_logprobs") or [])]:
        token = str(alternative.get("token", "")).strip().upper()
        if token in mass and alternative.get("logprob") is not None:
            mass[token] = max(mass[token], math.exp(float(alternative["logprob"])))
    total = mass["YES"] + mass["NO"]
    return mass["YES"] / total if total else None


def answer(text: str | None) -> str | None:
    """The last YES or NO of a reply."""
    found = _ANSWER.findall(text or "")
    return found[-1].upper() if found else None


class LLMVerifier:
    name = "llm"
    needs_tasks = True

    def __init__(self, url: str | None = None, model: str = "verifier", *, input: Input = "trajectory",
                 votes: int = 5, vote_temperature: float = 1.0, top_logprobs: int = 5, max_chars: int = 2000,
                 max_retries: int = 2):
        from sweworld.models.base import ModelConfig
        from sweworld.models.openai import OpenAIChatModel

        if not url:
            raise ConfigError("the llm verifier needs an endpoint", hint="give --verifier-url (an OpenAI-compatible "
                              "base URL, up to /v1) and --verifier-model-name")
        base = ModelConfig(url=url, model=model, native_tools=False, max_retries=max_retries)
        self.scorer = OpenAIChatModel(base.model_copy(update={
            "max_tokens": 1, "extra_body": {"logprobs": True, "top_logprobs": top_logprobs}}))
        self.voter = OpenAIChatModel(base.model_copy(update={"temperature": vote_temperature, "max_tokens": 16}))
        self.input, self.votes, self.max_chars = input, votes, max_chars
        self.voted = 0
        """Samples scored by votes (the endpoint gave no usable logprobs)."""
        self._cache: dict[str, float] = {}

    def score(self, task: Task | None, trajectory: Trajectory) -> float:
        task = need_task(task, trajectory, self.name)
        messages = verifier_messages(task, trajectory, self.input, self.max_chars)
        key = json.dumps(messages, ensure_ascii=False)
        if key not in self._cache:
            self._cache[key] = self._judge(messages)
        return self._cache[key]

    def _judge(self, messages: list[dict[str, str]]) -> float:
        probability = yes_probability(self.scorer.complete(messages).raw)
        if probability is not None:
            return probability
        self.voted += 1
        answers = [answer(self.voter.complete(messages).content) for _ in range(self.votes)]
        said = [a for a in answers if a]
        return sum(a == "YES" for a in said) / len(said) if said else 0.5

    def close(self) -> None:
        self.scorer.close()
        self.voter.close()


def llm_verifier(url: str | None = None, model_name: str = "verifier", input: Input = "trajectory",
                 votes: int = 5) -> LLMVerifier:
    """``create_verifier("llm", ...)``: the judge at ``url`` serving ``model_name``."""
    return LLMVerifier(url, model_name, input=input, votes=votes)


llm_verifier.needs_tasks = True  # type: ignore[attr-defined]
