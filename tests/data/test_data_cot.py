"""Reverse-reasoning CoT through real local HTTP servers (scripted teacher and judge): what is kept,
what each check drops, and the export with a teacher end to end."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from data_traces import record

from chatserver import ChatServer
from sweworld.data.cot import ReverseReasoner, TeacherConfig, hindsight
from sweworld.data.world import swr_label, world_rows
from sweworld.world.parse import parse_swr, parse_swt
from sweworld.world.traces import EvalTrace, load_traces

GOOD = "The agent's add returns a + b, so add(1, 2) is 3 and test_add passes; test_zero still passes."
ACCEPT, REJECT = "Looks derived.\nJUDGEMENT: ACCEPT", "JUDGEMENT: REJECT (hindsight): it quotes the report"


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return record(tmp_path_factory.mktemp("traces"))


@pytest.fixture(scope="module")
def resolved(traces):
    """(world prompt, true JSON, label) of the resolved evaluation."""
    trace = next(t for t in load_traces(traces) if isinstance(t, EvalTrace) and t.resolved)
    rows, _ = world_rows([trace])
    return rows["swr"][0]["messages"][:-1], *swr_label(trace)


def reasoner(teacher: ChatServer, judge: ChatServer) -> ReverseReasoner:
    return ReverseReasoner.from_config(TeacherConfig(teacher_url=teacher.url, teacher_model="t",
                                                     judge_url=judge.url, judge_model="j", max_retries=0))


def duration(result: str) -> str:
    return re.search(r"\d+\.\d+s", json.loads(result)["test_report"]).group(0)


def test_each_check_keeps_or_drops_through_real_servers(resolved):
    world, result, label = resolved
    cases = [  # (teacher reply, judge reply or None when the judge is not asked, outcome)
        (f"{GOOD}\nVerdict: reward 1", ACCEPT, "accepted"),
        (f"<think>{GOOD}\nVerdict: reward 1</think>", ACCEPT, "accepted"),
        (f"The given result says it passes. {GOOD}\nVerdict: reward 1", None, "hindsight"),
        (f"{GOOD} The run takes {duration(result)}.\nVerdict: reward 1", None, "hindsight"),
        (f"{GOOD}\nVerdict: reward 0", None, "wrong_conclusion"),
        (GOOD, None, "no_verdict"),
        (f"{GOOD}\nVerdict: reward 1", REJECT, "judge_rejected"),
        (f"{GOOD}\nVerdict: reward 1", "I am not sure.", "judge_unreadable"),
        (500, None, "teacher_error"),
    ]
    with ChatServer([c[0] for c in cases]) as teacher, \
            ChatServer([c[1] for c in cases if c[1] is not None]) as judge:
        cot = reasoner(teacher, judge)
        outcomes = [cot.reason("swr", world, result, label) for _ in cases]
        cot.close()
    assert [o.outcome for o in outcomes] == [c[2] for c in cases]
    assert outcomes[0].reasoning == outcomes[1].reasoning == f"{GOOD}\nVerdict: reward 1"
    assert "reward 0" in outcomes[4].why and "it quotes the report" in outcomes[6].why
    assert len(judge.requests) == 4 and len(teacher.requests) == len(cases)
    system, user = (m["content"] for m in teacher.requests[0]["messages"])
    assert "Never cite" in system and "Verdict: reward 1" in system
    assert world[1]["content"] in user and result in user  # the world prompt and the true result
    assert f"{GOOD}\nVerdict: reward 1" in judge.requests[0]["messages"][1]["content"]


def follow_verdict(body: dict) -> str:
    """A teacher that ends with the verdict asked for, except on local/mul, where it claims a pass."""
    user = body["messages"][1]["content"]
    asked = re.findall(r'ending with the line "(Verdict: [^"]+)"', user)[-1]
    if "local/mul" in user and "reward" in asked:
        return "Tracing the change, every test passes.\nVerdict: reward 1"
    return f"Tracing what the command runs through the agent's change.\n{asked}"


def test_export_with_a_teacher_keeps_the_accepted_rows_with_think(traces, tmp_path):
    out = tmp_path / "world"
    with ChatServer(default=follow_verdict) as teacher, ChatServer(default=ACCEPT) as judge:
        result = subprocess.run([sys.executable, "-m", "sweworld.cli.app", "export", "world", "--traces", str(traces),
                                 "--out", str(out), "--max-steps-per-trajectory", "1", "--cot-swt",
                                 "--teacher-url", teacher.url, "--judge-url", judge.url, "--workers", "2"],
                                capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cot"]["swr"]["accepted"] == 1 and summary["cot"]["swr"]["wrong_conclusion"] == 1
    assert summary["cot"]["swt"]["accepted"] == 2 and summary["swr"]["rows"] == 1 and summary["swt"]["rows"] == 2
    assert len(teacher.requests) == 4 and len(judge.requests) == 3
    (row,) = [json.loads(line) for line in (out / "swr.jsonl").read_text().splitlines()]
    target = row["messages"][-1]["content"]
    assert row["cot"] == "teacher" and row["instance_id"] == "local__calc-1"
    assert target.startswith("<think>\nTracing what the command runs") and "\n</think>\n{" in target
    assert parse_swr(target).reward == 1 and parse_swr(target).reasoning.endswith("Verdict: reward 1")
    for line in (out / "swt.jsonl").read_text().splitlines():
        swt = json.loads(line)
        answer = parse_swt(swt["messages"][-1]["content"])
        assert swt["cot"] == "teacher" and answer.exit_code == swt["exit_code"]
        assert f"Verdict: exit code {swt['exit_code']}\n</think>" in swt["messages"][-1]["content"]


def test_hindsight_finds_a_result_line_quoted_before_it_was_reasoned_to(resolved):
    world, result, _ = resolved
    prompt = world[0]["content"] + "\n" + world[1]["content"]
    report = json.loads(result)["test_report"]
    line = next(x.strip() for x in report.splitlines() if x.startswith("platform "))
    assert line not in prompt and len(line) >= 40
    assert "opens with a line" in hindsight(f"{line}\n{GOOD}\n" + "More derivation. " * 20, result, prompt)
    assert hindsight(f"{GOOD}\n" + "More derivation. " * 20 + f"\nSo pytest prints {line}", result, prompt) is None
    assert hindsight(GOOD, result, prompt) is None
