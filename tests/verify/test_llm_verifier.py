"""The llm verifier against a real local HTTP server with scripted replies: P(YES) from top logprobs,
the vote when the endpoint gives none, the prompt is the exported training row's, and the CLI."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from chatserver import ChatServer, Raw
from sweworld.core.errors import ConfigError
from sweworld.core.types import Task
from sweworld.data.verifier import VerifierOptions, export_verifier
from sweworld.trajectory import Step, Trajectory
from sweworld.verify import create_verifier, select
from sweworld.verify.llm import LLMVerifier, answer, yes_probability

TASK = Task(instance_id="o__r-1", repo="o/r", base_commit="0" * 40, patch="", problem_statement="x breaks")


def traj(sample: int, patch: str, reward: float = 0.0) -> Trajectory:
    return Trajectory(instance_id=TASK.instance_id, sample=sample, patch=patch, reward=reward, exit_status="submitted",
                      steps=[Step(index=0, tool="execute_bash", arguments={"command": "ls"}, observation="a.py",
                                  thought="perturb: gold\nlook")])


def with_logprobs(yes: float, no: float, first: str = "YES") -> Raw:
    top = [{"token": " YES", "logprob": math.log(yes)}, {"token": "NO", "logprob": math.log(no)},
           {"token": "Maybe", "logprob": math.log(0.01)}]
    body = {"id": "c", "object": "chat.completion", "model": "judge",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": first}, "finish_reason": "length",
                         "logprobs": {"content": [{"token": first, "logprob": top[0]["logprob"], "top_logprobs": top}]}}]}
    return Raw(json.dumps(body))


def test_yes_probability_and_answer():
    assert yes_probability(json.loads(with_logprobs(0.6, 0.2).body)) == pytest.approx(0.75)
    assert yes_probability({"choices": [{"message": {"content": "YES"}}]}) is None
    assert answer("Reasoning... the answer is NO.") == "NO" and answer("unsure") is None


def test_scores_from_logprobs_and_the_prompt_is_the_training_row():
    with ChatServer([with_logprobs(0.9, 0.1), with_logprobs(0.2, 0.6)]) as server:
        verifier = LLMVerifier(server.url, "judge")
        result = select([("r", traj(0, "diff-a", 1.0)), ("r", traj(1, "diff-b"))], verifier, {TASK.instance_id: TASK})
        verifier.close()
    assert result.picks[TASK.instance_id].trajectory.sample == 0
    assert [s.score for s in sorted(result.picks.values(), key=lambda s: s.run)] == [pytest.approx(0.9)]
    request = server.requests[0]
    assert request["logprobs"] is True and request["top_logprobs"] == 5 and request["max_tokens"] == 1
    assert request["temperature"] == 0.0 and "tools" not in request
    rows, _ = export_verifier([("r", traj(0, "diff-a", 1.0))], {TASK.instance_id: TASK}, VerifierOptions(balance=False))
    assert request["messages"] == rows[0]["messages"][:-1] and rows[0]["messages"][-1]["content"] == "YES"
    assert "perturb:" not in json.dumps(request["messages"]) and "look" in request["messages"][1]["content"]


def test_votes_when_the_endpoint_gives_no_logprobs():
    script = ["YES", "YES", "NO", "I think NO", "yes", "unsure"]  # 1 plain reply, then 5 votes: 2 YES of 4 answers
    with ChatServer(script) as server:
        verifier = LLMVerifier(server.url, "judge", votes=5, input="diff")
        assert verifier.score(TASK, traj(0, "diff-a")) == pytest.approx(0.5)
        assert verifier.score(TASK, traj(3, "diff-a")) == pytest.approx(0.5)  # cached: same patch
        verifier.close()
    assert len(server.requests) == 6 and verifier.voted == 1
    assert [r["temperature"] for r in server.requests] == [0.0] + [1.0] * 5
    assert "What the agent did" not in server.requests[0]["messages"][1]["content"]


def test_needs_an_endpoint_and_a_task():
    with pytest.raises(ConfigError, match="needs an endpoint"):
        create_verifier("llm")
    with ChatServer([]) as server:
        verifier = create_verifier("llm", url=server.url)
        with pytest.raises(ConfigError, match="needs the task"):
            verifier.score(None, traj(0, "d"))


def test_select_cli_with_the_llm_verifier(tmp_path):
    from sweworld.datasets import path_of
    from sweworld.runs.store import TrajectoryStore
    from sweworld.tasks import load_tasks

    real = next(iter(load_tasks(path_of("default"))))
    store = TrajectoryStore(tmp_path / "run" / "trajectories.jsonl")
    for i, reward in enumerate([0.0, 1.0, 0.0]):
        store.append(Trajectory(instance_id=real.instance_id, sample=i, reward=reward, patch=f"diff {i}",
                                exit_status="submitted"))
    with ChatServer([with_logprobs(0.3, 0.7), with_logprobs(0.8, 0.2), with_logprobs(0.5, 0.5)]) as server:
        result = subprocess.run([sys.executable, "-m", "sweworld.cli.app", "select", "--runs", str(tmp_path / "run"),
                                 "--verifier", "llm", "--verifier-url", server.url, "--verifier-model-name", "judge",
                                 "--json", str(tmp_path / "s.json")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    data = json.loads((tmp_path / "s.json").read_text())
    assert data["picks"][real.instance_id]["sample"] == 1 and data["best_at"] == data["pass_at"]
    assert {r["model"] for r in server.requests} == {"judge"}
