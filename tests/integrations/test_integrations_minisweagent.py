"""mini-swe-agent's own DefaultAgent and deterministic model over a sweworld episode of a real task."""

from __future__ import annotations

import os
import uuid

import pytest

os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
pytest.importorskip("minisweagent")

from minisweagent.agents.default import DefaultAgent
from minisweagent.exceptions import Submitted
from minisweagent.models.test_models import DeterministicModel, make_output

from realtasks import FIRST_BUG, MODULE, sources
from sweworld.backends.real import evaluate_instance
from sweworld.harness.predictions import Prediction
from sweworld.integrations.minisweagent import SENTINEL, SweworldEnvironment, from_task

pytestmark = [pytest.mark.bwrap, pytest.mark.network]

AGENT = {"system_template": "You are on {{system}} {{machine}}; the repository is at {{workdir}}.",
         "instance_template": "Fix {{instance_id}} of {{repo}}: {{task}}", "step_limit": 10, "cost_limit": 0}


def fix_command() -> str:
    old, new = FIRST_BUG[1], FIRST_BUG[0]
    return (f"python3 - <<'EOF'\nimport pathlib\np = pathlib.Path({MODULE!r})\ns = p.read_text()\n"
            f"assert s.count({old!r}) == 1\np.write_text(s.replace({old!r}, {new!r}))\nEOF")


def test_default_agent_fixes_and_submits_the_diff(task, builder, backend, tmp_path):
    buggy, fixed = sources(task)
    assert buggy.replace(FIRST_BUG[1], FIRST_BUG[0]) == fixed
    model = DeterministicModel(outputs=[
        make_output("Fix the default check.", [{"command": fix_command()}]),
        make_output("Done.", [{"command": f"echo {SENTINEL}"}]),
    ])
    with from_task(task, backend, {"submission": "diff"}) as env:  # the diff, not what follows the sentinel
        assert isinstance(env, SweworldEnvironment)
        agent = DefaultAgent(model, env, **AGENT)
        result = agent.run(task.problem_statement)
        assert result["exit_status"] == "Submitted", agent.messages[-1]
        assert agent.messages[-1]["role"] == "exit" and agent.n_calls == 2
        assert "<returncode>0</returncode>" in agent.messages[3]["content"]
        assert agent.messages[1]["content"] == f"Fix {task.instance_id} of {task.repo}: {task.problem_statement}"
        submission = result["submission"]
        assert submission == env.diff() == env.executor.diff()
        assert "+    if default is _marker:" in submission
        saved = agent.serialize()
        assert saved["info"]["submission"] == submission
        assert saved["info"]["config"]["environment"]["instance_id"] == task.instance_id
    prediction = Prediction(instance_id=task.instance_id, model_name_or_path="mini", model_patch=submission)
    report = evaluate_instance(task, prediction, tmp_path / uuid.uuid4().hex[:8], builder=builder, timeout=600)
    assert report.resolved, report.model_dump()


def test_execute_and_template_vars(task, backend):
    with from_task(task, backend, {"env": {"GREETING": "hi there"}, "timeout": 5}) as env:
        out = env.execute({"command": "cd /tmp && pwd && echo $GREETING"})
        assert out == {"output": "/tmp\nhi there\n", "returncode": 0, "exception_info": ""}
        assert env.execute({"command": "pwd"})["output"].strip() == "/testbed"
        assert env.execute({"command": "pwd"}, cwd="/tmp")["output"].strip() == "/tmp"
        failing = env.execute({"command": "exit 3"})
        assert failing["returncode"] == 3 and failing["exception_info"] == ""
        slow = env.execute({"command": "sleep 5"}, timeout=1)
        assert slow["returncode"] == -1 and "timed out" in slow["exception_info"]
        # the sentinel with a failing exit code is not a submission (as in mini-swe-agent)
        assert env.execute({"command": f"echo {SENTINEL}; false"})["returncode"] == 1
        env.execute({"command": "echo new > added.txt"})
        with pytest.raises(Submitted) as raised:  # nothing after the sentinel: an empty submission (mini's protocol)
            env.execute({"command": f"echo {SENTINEL}"})
        extra = raised.value.messages[0]["extra"]
        assert extra["submission"] == extra["sentinel_output"] == "" and extra["submission_source"] == "output"
        env.config.submission = "diff"
        with pytest.raises(Submitted) as raised:  # submission: diff, the workspace's diff
            env.execute({"command": f"echo {SENTINEL}"})
        extra = raised.value.messages[0]["extra"]
        assert extra["submission"] == env.diff() and "added.txt" in extra["submission"]
        assert extra["submission_source"] == "diff" and extra["sentinel_output"] == ""
        env.config.submission = "output"
        with pytest.raises(Submitted) as raised:  # output after the sentinel: that output (mini's protocol)
            env.execute({"command": f"echo {SENTINEL} && echo printed"})
        extra = raised.value.messages[0]["extra"]
        assert extra["submission"] == extra["sentinel_output"] == "printed\n"
        tv = env.get_template_vars(extra_var=1)
        assert tv["instance_id"] == task.instance_id and tv["problem_statement"] == task.problem_statement
        assert tv["workdir"] == tv["cwd"] == "/testbed" and tv["extra_var"] == 1 and "system" in tv
        assert "patch" not in tv and "test_patch" not in tv and "FAIL_TO_PASS" not in tv
        assert env.serialize()["info"]["config"]["environment_type"].endswith("SweworldEnvironment")
