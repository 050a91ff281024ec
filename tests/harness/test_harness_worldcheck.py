"""``harness.worldcheck``: a world that cannot run is an infrastructure failure with its cause; what a
patch does to its own package stays the patch's verdict."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sweworld.core.errors import InfraError, WorldBrokenError
from sweworld.core.types import ExecResult, Task
from sweworld.harness import grade, worldcheck
from sweworld.harness.evalscript import (
    END_MARKER,
    EXIT_CODE_MARKER,
    PATCH_APPLIED_MARKER,
    PATCH_FAILED_MARKER,
    START_MARKER,
    marker,
)
from sweworld.harness.patches import apply_patch

NONCE = "0123456789abcdef"
TASK = Task(instance_id="local__pkg-1", repo="local/pkg", base_commit="0" * 40,
            FAIL_TO_PASS=["tests/test_add.py::test_add"], PASS_TO_PASS=["tests/test_add.py::test_zero"])
PATCH = "--- a/pkg/add.py\n+++ b/pkg/add.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
COLLECTION_ERROR = ("==================================== ERRORS ====================================\n"
                    "_____________________ ERROR collecting tests/test_add.py ______________________\n"
                    "ImportError while importing test module '/testbed/tests/test_add.py'.\n"
                    "E   ModuleNotFoundError: No module named 'pkg.missing'\n"
                    "=========================== short test summary info ============================\n"
                    "ERROR tests/test_add.py\n!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!")


def _script_output(test_output: str | None, exit_code: int) -> str:
    """What the eval script prints: its markers around ``test_output`` (None: it never got there)."""
    if test_output is None:
        return "/tmp/sweworld-eval.sh: line 3: git: command not found\n"
    if test_output == "git":
        return f"/tmp/sweworld-eval.sh: line 12: git: command not found\n{marker(PATCH_FAILED_MARKER, NONCE)}\n"
    return "\n".join([marker(PATCH_APPLIED_MARKER, NONCE), marker(START_MARKER, NONCE), test_output, "",
                      marker(END_MARKER, NONCE), f"{marker(EXIT_CODE_MARKER, NONCE)} {exit_code}", ""])


def _cause(test_output: str | None, exit_code: int, *, test_cmd: str = "pytest -rA", touched=()):
    output = _script_output(test_output, exit_code)
    run = grade.extract_test_run(output, NONCE)
    graded = grade.grade(TASK, run) if run.markers_found else None
    script = ExecResult(output=output, exit_code=127 if test_output is None else 0)  # the eval script's own status
    return worldcheck.eval_failure(TASK, run, script, graded, test_cmd=test_cmd, touched=list(touched),
                                   workdir="/testbed")


@pytest.mark.parametrize(("test_output", "exit_code", "kwargs", "broken"), [
    (None, 127, {}, "never reached the test command (exit 127)"),  # no shell, no loader: no marker at all
    ("git", 97, {}, "git: command not found"),  # the test patch refused because git cannot run
    ("/tmp/sweworld-eval.sh: line 31: pytest: command not found", 127, {}, "pytest: command not found"),
    ("bash: line 1: /opt/env/bin/pytest: cannot execute: required file not found", 126, {}, "cannot execute"),
    ("python: error while loading shared libraries: libpython3.11.so.1.0: cannot open shared object file: "
     "No such file or directory", 127, {"test_cmd": "python -m pytest -rA"}, "error while loading shared"),
    ("", 127, {}, "printed nothing and exited 127"),
    ("/usr/bin/python3: No module named pytest", 1, {"test_cmd": "python -m pytest -rA"}, "not installed"),
    # the patch's own doing: an import it broke, a runner script it deleted, tests that ran and failed
    (COLLECTION_ERROR, 2, {}, None),
    ("/tmp/sweworld-eval.sh: line 31: ./tests/runtests.py: No such file or directory", 127,
     {"test_cmd": "./tests/runtests.py", "touched": ["tests/runtests.py"]}, None),
    ("FAILED tests/test_add.py::test_add - assert 1 == 3\nPASSED tests/test_add.py::test_zero", 1, {}, None),
    ("Segmentation fault (core dumped)", 139, {}, None),
])
def test_eval_failure_tells_a_broken_world_from_the_patch(test_output, exit_code, kwargs, broken):
    cause = _cause(test_output, exit_code, **kwargs)
    assert (cause is None) if broken is None else (cause is not None and broken in cause), cause


class ShellGone:
    """An episode over a real directory whose shell is gone: every command is started, for real, through
    an interpreter that does not exist, which ``env`` answers with exit 127 (as an image whose loader or
    ``/bin/bash`` is missing answers every command)."""

    def __init__(self, root: Path):
        self.root, self.workdir = root, "/testbed"

    def run(self, command: str, *, cwd: str | None = None, timeout: float | None = None) -> ExecResult:
        done = subprocess.run(["env", "-i", "/nonexistent/bin/bash", "-c", command], cwd=self.root,
                              capture_output=True, text=True)
        return ExecResult(output=done.stdout + done.stderr, exit_code=done.returncode)

    def write_file(self, path: str, content: str) -> None:
        (self.root / Path(path).name).write_text(content)


def test_a_patch_checker_that_cannot_run_is_a_broken_world_not_a_refusal(tmp_path):
    with pytest.raises(WorldBrokenError, match=r"symlinks could not run \(exit 127\).*No such file") as caught:
        apply_patch(ShellGone(tmp_path), PATCH, workdir="/testbed", label="model")
    assert isinstance(caught.value, InfraError) and "not the patch" in caught.value.hint
