"""Reading SWT/SWR replies, and rendering the prompt templates of both styles."""

from __future__ import annotations

import json
import re

import pytest

from sweworld.core.errors import WorldError
from sweworld.world import templates
from sweworld.world.context import FileText, HistoryStep, SWRContext, SWTContext, TaskInfo
from sweworld.world.parse import SimParseError, parse_swr, parse_swt

OK = {"stdout": "3\n", "stderr": "", "exit_code": 0}


@pytest.mark.parametrize("reply", [
    json.dumps(OK),
    "```json\n" + json.dumps(OK, indent=2) + "\n```",
    "The script prints the sum.\n\n```json\n" + json.dumps(OK) + "\n```\nThat is all.",
    "<think>add is fixed, so {x} prints 3</think>\n" + json.dumps(OK),
    "Reasoning first: {\"note\": 1} is not it.\n" + json.dumps(OK),
    json.dumps({**OK, "exit_code": 0.0}),
])
def test_parse_swt_accepts(reply):
    out = parse_swt(reply)
    assert (out.stdout, out.stderr, out.exit_code) == ("3\n", "", 0)


@pytest.mark.parametrize(("reply", "says"), [
    ("", "empty"),
    ("the command prints 3", "no JSON"),
    ('{"stdout": "3"', "no JSON"),
    (json.dumps({"stdout": "3", "exit_code": 0}), "'stderr'"),
    (json.dumps({**OK, "exit_code": "0"}), "exit_code must be an integer"),
    (json.dumps({**OK, "exit_code": True}), "exit_code must be an integer"),
    (json.dumps({**OK, "exit_code": 1.5}), "exit_code must be an integer"),
    (json.dumps({**OK, "stdout": ["3"]}), "stdout must be a string"),
    (json.dumps(["3", 0]), "no JSON"),
])
def test_parse_swt_refuses(reply, says):
    with pytest.raises(SimParseError, match=re.escape(says)):
        parse_swt(reply)


def test_parse_swr_reasoning_report_reward():
    out = parse_swr("<think>test_add now passes</think>\n" + json.dumps({"test_report": "PASSED t", "reward": 1}))
    assert (out.reasoning, out.test_report, out.reward, out.exit_code) == ("test_add now passes", "PASSED t", 1, None)
    plain = parse_swr("Both tests pass.\n```json\n" + json.dumps({"test_report": "r", "reward": True, "exit_code": 0}) + "\n```")
    assert (plain.reasoning, plain.reward, plain.exit_code) == ("Both tests pass.", 1, 0)


@pytest.mark.parametrize(("reply", "says"), [
    (json.dumps({"test_report": "r"}), "'reward'"),
    (json.dumps({"test_report": "r", "reward": 2}), "reward must be 0 or 1"),
    (json.dumps({"test_report": "r", "reward": "1"}), "reward must be an integer"),
    (json.dumps({"test_report": 3, "reward": 1}), "test_report must be a string"),
    ("<think>unfinished", "no JSON"),
])
def test_parse_swr_refuses(reply, says):
    with pytest.raises(SimParseError, match=re.escape(says)):
        parse_swr(reply)


TASK = TaskInfo(instance_id="o__r-1", repo="o/r", base_commit="abc", problem_statement="ISSUE-TEXT")
SWT_CTX = SWTContext(task=TASK, workdir="/testbed", command="python x.py", diff="DIFF-TEXT",
                     files=[FileText(path="x.py", content="FILE-TEXT")],
                     history=[HistoryStep(command="ls", output="HISTORY-OUT", exit_code=0)],
                     privileged=True, gold_patch="GOLD-TEXT", fail_to_pass=["F2P-ID"], pass_to_pass=["P2P-ID"])
SWR_CTX = SWRContext(task=TASK, test_command="pytest -rA t.py", patch="PATCH-TEXT", gold_patch="GOLD-TEXT",
                     test_files=[FileText(path="t.py", content="TEST-TEXT")], fail_to_pass=["F2P-ID"],
                     pass_to_pass=["P2P-ID"])
SWE_WORLD_SWT = ["### 1. Initial Analysis of the Problem", "### 2. Problem Description", "### 3. Human Discussion (Hints)",
                 "### 4. Command to Simulate", "### 5. Content of Code to be Executed",
                 "### 6. Original Content of Modified Files", "### 7. Agent's Current Code Modifications (Patch)",
                 "### 8. Gold Standard Patch (For Your Reference)", "### YOUR TASK"]
SWE_WORLD_SWR = ["### 1. Initial Analysis of the Problem", "### 2. Problem Description", "### 3. Command to Simulate",
                 "### 4. Content of Code to be Executed", "### 5. Agent's Current Code Modifications (Patch)",
                 "### 6. Gold Standard Patch (For Your Reference)",
                 "### 7. FAIL_TO_PASS Tests (Must All Pass for reward=1)",
                 "### 8. PASS_TO_PASS Tests (Must All Pass for reward=1)", "### YOUR TASK"]


def test_styles_are_listed():
    assert {"sweworld", "swe-world"} <= set(templates.styles())


@pytest.mark.parametrize(("kind", "context", "sections"), [("swt", SWT_CTX, SWE_WORLD_SWT), ("swr", SWR_CTX, SWE_WORLD_SWR)])
def test_swe_world_style_has_its_sections_in_order(kind, context, sections):
    system, user = templates.render("swe-world", kind, context)
    assert (system["role"], user["role"]) == ("system", "user")
    headings = [line for line in user["content"].splitlines() if line.startswith("### ")]
    assert headings == sections
    keys = ("stdout", "stderr", "exit_code") if kind == "swt" else ("test_report", "reward")
    assert all(f"'{k}'" in system["content"] or f'"{k}"' in system["content"] for k in keys)


@pytest.mark.parametrize("style", ["sweworld", "swe-world"])
@pytest.mark.parametrize(("kind", "context", "shown"), [
    ("swt", SWT_CTX, ["ISSUE-TEXT", "python x.py", "FILE-TEXT", "DIFF-TEXT", "GOLD-TEXT"]),
    ("swr", SWR_CTX, ["ISSUE-TEXT", "pytest -rA t.py", "TEST-TEXT", "PATCH-TEXT", "GOLD-TEXT", "F2P-ID", "P2P-ID"]),
])
def test_every_style_shows_the_context(style, kind, context, shown):
    text = "\n".join(m["content"] for m in templates.render(style, kind, context))
    assert all(item in text for item in shown), [item for item in shown if item not in text]
    assert templates.render(style, kind, context) == templates.render(style, kind, context.model_dump())


def test_sweworld_swt_shows_history_and_hides_gold_unless_privileged():
    open_ctx = SWT_CTX.model_copy(update={"privileged": False, "gold_patch": "", "fail_to_pass": [], "pass_to_pass": []})
    text = templates.render("sweworld", "swt", open_ctx)[1]["content"]
    assert "HISTORY-OUT" in text and "Reference fix" not in text and "FAIL_TO_PASS" not in text


def test_a_fence_is_longer_than_any_backtick_run_inside():
    ctx = SWT_CTX.model_copy(update={"command": "python - <<EOF\n```\nEOF"})
    user = templates.render("sweworld", "swt", ctx)[1]["content"]
    assert "````bash\npython - <<EOF\n```\nEOF\n````" in user


def test_missing_fields_and_unknown_names_are_errors():
    with pytest.raises(WorldError, match="undefined"):
        templates.render("sweworld", "swt", {"task": TASK.model_dump()})
    with pytest.raises(WorldError, match="unknown prompt style"):
        templates.render("nope", "swt", SWT_CTX)
    with pytest.raises(WorldError, match="unknown world-model kind"):
        templates.render("sweworld", "judge", SWT_CTX)
