"""The ``sweworld`` command line, in process (typer's CliRunner) and as the installed console script.

Commands run real episodes of the embedded smoke task (six 1.16.0 from PyPI) over the persistent
test cache, where its environment is normally built already.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sweworld import __version__
from sweworld.cli.app import app
from sweworld.datasets import path_of
from sweworld.envs import EnvBuilder
from sweworld.tasks import load_tasks

pytestmark = [pytest.mark.bwrap, pytest.mark.network]

SIX_ID = "benjaminp__six-1.16.0"
MISSING_ID = "nope__no-such-instance-1"
FIX_ID = "more-itertools__first-default"  # a demo instance with a gold patch


@pytest.fixture
def cli():
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None):
        return runner.invoke(app, list(args), input=input)
    return invoke


def console_script() -> str:
    beside = Path(sys.executable).parent / "sweworld"
    found = str(beside) if beside.exists() else shutil.which("sweworld")
    assert found, "the sweworld console script is not installed"
    return found


def run_script(*args: str, columns: int | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return subprocess.run([console_script(), *args], capture_output=True, text=True, env=env, timeout=900)


def test_version(cli):
    result = cli("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"sweworld {__version__}"


def test_no_arguments_prints_help(cli):
    result = cli()
    assert result.exit_code in (0, 2)
    assert "exec" in result.output and "env" in result.output and "shell" in result.output


def test_exec_prints_output_and_exits_0(cli):
    result = cli("exec", "--dataset", "demo", "--instance", SIX_ID, "--", "python -c 'print(6*7)'")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "42"
    words = cli("exec", "--dataset", "demo", "--instance", SIX_ID, "--", "echo", "six", "times", "seven")
    assert words.exit_code == 0 and words.stdout.strip() == "six times seven"


def test_exec_keeps_argument_boundaries(cli):
    result = cli("exec", "--dataset", "demo", "--instance", SIX_ID, "--", "python", "-c", "print(6*7)")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "42"


def test_exec_runs_in_the_testbed_with_the_venv(cli):
    result = cli("exec", "--dataset", "demo", "--instance", SIX_ID, "--", "pwd; python -c 'import six; print(six.__file__)'")
    assert result.exit_code == 0, result.output
    assert result.stdout.split() == ["/testbed", "/testbed/six.py"]


def test_exec_propagates_a_failing_exit_code(cli):
    result = cli("exec", "--dataset", "demo", "--instance", SIX_ID, "--", "echo before; false")
    assert result.exit_code == 1
    assert "before" in result.stdout
    result = cli("exec", "--dataset", "demo", "--instance", SIX_ID, "--", "(exit 5)")
    assert result.exit_code == 5


def test_exec_exit_ends_the_shell_but_keeps_the_status(cli):
    result = cli("exec", "--dataset", "demo", "--instance", SIX_ID, "--", "exit", "3")
    assert result.exit_code == 3, result.output
    assert "status 3" in result.output


def test_exec_without_a_command_is_a_usage_error(cli):
    result = cli("exec", "--dataset", "demo", "--instance", SIX_ID)
    assert result.exit_code == 2
    assert "no command given" in result.output


def test_exec_unknown_instance_is_a_clear_error(cli):
    result = cli("exec", "--instance", MISSING_ID, "--", "echo", "hi")
    assert result.exit_code == 2
    assert isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert result.stdout == ""
    assert result.stderr.startswith("error:")
    assert MISSING_ID in result.stderr and "not found" in result.stderr


def test_exec_malformed_dataset_names_file_and_line(cli, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"instance_id": "a", "repo": "x/y", "base_commit": "abc"}\n{not json\n')
    result = cli("exec", "--dataset", str(bad), "--instance", "a", "--", "echo", "hi")
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert result.stderr.startswith("error:")
    assert f"{bad}:2:" in "".join(result.stderr.split())  # rich wraps long lines
    assert "invalid JSON" in " ".join(result.stderr.split())


def test_shell_keeps_cwd_and_exports(cli):
    result = cli("shell", "--dataset", "demo", "--instance", SIX_ID, input="cd /tmp\npwd\nexport X=1\necho $X\nexit\n")
    assert result.exit_code == 0, result.output
    lines = [line.rsplit("$ ", 1)[-1].strip() for line in result.stdout.splitlines()]
    assert "/tmp" in lines and "1" in lines
    assert lines.index("/tmp") < lines.index("1")
    assert "/tmp$ " in result.stdout  # the prompt follows the shell's cwd
    assert "isolated episode" in result.stderr


def test_shell_diff_shows_changes(cli):
    result = cli("shell", "--dataset", "demo", "--instance", SIX_ID,
                 input="echo '# edited' >> six.py\ndiff\n")  # EOF leaves as well
    assert result.exit_code == 0, result.output
    assert "diff --git a/six.py b/six.py" in result.stdout and "+# edited" in result.stdout


def test_env_build_reports_ready(cli):
    result = cli("env", "build", "--dataset", "demo", "--instance-ids", SIX_ID, "--workers", "2")
    assert result.exit_code == 0, result.output
    assert "1/1 instances ready" in result.stdout
    assert f"ok {SIX_ID}" in result.stderr


@pytest.fixture(scope="module")
def six_env():
    return EnvBuilder().environment(load_tasks(path_of("demo")).by_id(SIX_ID))


def test_env_ls_shows_the_six_env(cli, six_env):
    result = cli("env", "ls")
    assert result.exit_code == 0, result.output
    # narrow consoles shorten cells (see the xfail below): match a prefix of the key
    row = next((line for line in result.stdout.splitlines() if six_env.key[:6] in line), None)
    assert row is not None, result.stdout
    assert "benjaminp" in row and six_env.interpreter.version in row and "MB" in row


def test_console_script_env_ls_prints_full_keys(six_env):
    result = run_script("env", "ls", columns=80)
    assert result.returncode == 0
    row = next((line for line in result.stdout.splitlines() if six_env.key in line), None)
    assert row is not None, result.stdout
    assert "benjaminp/six" in row


def test_env_rm_unknown_key_is_a_clear_error(cli):
    result = cli("env", "rm", "zz-no-such-env-key")
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "matches 0 environments" in " ".join(result.stderr.split())


# -- the installed console script, as a user runs it ------------------------------------------------

def test_console_script_version_and_exec():
    version = run_script("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"sweworld {__version__}"
    result = run_script("exec", "--dataset", "demo", "--instance", SIX_ID, "--", "python -c 'print(6*7)'")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "42"
    failed = run_script("exec", "--dataset", "demo", "--instance", SIX_ID, "--", "exit", "3")
    assert failed.returncode == 3


def test_console_script_exec_separate_arguments():
    result = run_script("exec", "--dataset", "demo", "--instance", SIX_ID, "--", "python", "-c", "print(6*7)")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "42"


def test_console_script_unknown_instance_error_names_the_id():
    result = run_script("exec", "--instance", MISSING_ID, "--", "true", columns=80)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert MISSING_ID in result.stderr


def test_console_script_unknown_instance_error_is_one_line():
    result = run_script("exec", "--instance", MISSING_ID, "--", "true", columns=80)
    assert result.returncode == 2
    first = result.stderr.splitlines()[0]
    assert first.startswith("error:") and MISSING_ID in first


def test_datasets_ls_shows_the_embedded_default():
    from typer.testing import CliRunner

    from sweworld.cli.app import app
    result = CliRunner().invoke(app, ["datasets", "ls"])
    assert result.exit_code == 0, result.output
    assert "(default)" in result.output and "demo" in result.output and "smoke" in result.output
    assert "pypi:more-itertools==10.5.0" in result.output


def test_eval_prints_agreement_with_verdicts_from_the_dataset_or_compare_to(cli, tmp_path):
    """Reference verdicts carried by the rows (``gold_resolved``), or given with ``--compare-to``,
    give an agreement line naming the instances that disagree."""
    import json

    rows = [{**task.model_dump(mode="json", exclude_none=True), "gold_resolved": False}
            for task in load_tasks(path_of("demo")) if task.instance_id == FIX_ID]
    data = tmp_path / "with-verdicts.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    common = ["eval", "-d", str(data), "--logs-dir", str(tmp_path / "logs"), "--out", str(tmp_path / "out")]
    result = cli(*common, "--run-id", "from-rows")
    assert result.exit_code == 0, result.output
    assert f"agreement with the reference: 0/1; resolved here only: {FIX_ID}" in result.output
    verdicts = tmp_path / "verdicts.json"
    verdicts.write_text(json.dumps({FIX_ID: {"gold_resolved": True}}))
    result = cli(*common, "--run-id", "from-file", "--compare-to", str(verdicts))
    assert result.exit_code == 0, result.output
    assert "agreement with the reference: 1/1" in result.output
