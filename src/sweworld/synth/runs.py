"""Test runs of one candidate bug inside an isolated episode of the release's environment.

A :class:`CandidateRun` is one fresh copy-on-write episode over the release's install layer with
the mutated file written into it. ``statuses`` runs some tests (the covering ones, to screen;
the failing ones again, to catch flaky ones); ``suite`` runs the eval script of the harness on the whole suite and grades it
with the harness's parser, so the ids and statuses are exactly what ``sweworld eval`` will see.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass

from sweworld.envs import InstanceLayer, episode_sandbox
from sweworld.harness import grade
from sweworld.harness.evaluate import run_tests
from sweworld.sandbox import Sandbox, SandboxConfig
from sweworld.synth.coverage import pytest_command
from sweworld.types import Task

PASS = ("PASSED", "XFAIL")
IDS_FILE = "/tmp/.sweworld-synth/ids.json"
MEMORY = 4 * 1024**3
RUNNER = ("import json, sys, pytest; "
          "sys.exit(pytest.main(sys.argv[1:] + json.load(open({ids!r}, encoding='utf-8'))))")


@dataclass
class SuiteRun:
    """The graded statuses of one whole-suite run (``{}`` when it crashed or timed out)."""

    statuses: dict[str, str]
    output: str
    crashed: bool
    timed_out: bool
    exit_code: int | None

    def passed(self, test: str) -> bool:
        return self.statuses.get(test) in PASS


def passing(statuses: dict[str, str]) -> set[str]:
    return {test for test, status in statuses.items() if status in PASS}


class CandidateRun:
    """An episode of ``release`` (a task at the release commit) with ``files`` written over the tree."""

    def __init__(self, release: Task, layer: InstanceLayer, files: dict[str, str] | None = None, *,
                 timeout: float, label: str = ""):
        self.release, self.layer, self.timeout = release, layer, timeout
        config = SandboxConfig(timeout=timeout, memory=MEMORY, env={"PYTHONDONTWRITEBYTECODE": "1"})
        self.sb: Sandbox = episode_sandbox(layer, config, label=label or release.instance_id)
        for path, text in (files or {}).items():
            self.sb.write_file(f"{self.sb.workdir}/{path}", text)

    def _pytest(self, tests: list[str], options: str) -> tuple[int | None, str, bool]:
        """Run pytest on node ids (read from a file: ids may hold any character)."""
        self.sb.write_file(IDS_FILE, json.dumps(tests))
        base = shlex.split(pytest_command(self.layer.env.recipe.test_cmd))[3:]
        argv = [*base, *shlex.split(options), "-p", "no:cacheprovider"]
        command = f"python -c {shlex.quote(RUNNER.format(ids=IDS_FILE))} {shlex.join(argv)}"
        result = self.sb.exec(command, cwd=self.sb.workdir, timeout=self.timeout, cap=8 * 1024 * 1024)
        return result.exit_code, result.output, result.timed_out

    def statuses(self, tests: list[str]) -> tuple[str, dict[str, str]]:
        """Run ``tests`` once: (``"fails"`` | ``"passes"`` | ``"timeout"`` | ``"broken"``, status per test)."""
        code, output, timed_out = self._pytest(tests, "-rA --tb=no")
        if timed_out:
            return "timeout", {}
        if code not in grade.ACCEPTED_EXIT_CODES:
            return "broken", {}
        statuses = grade.parse_status(self.release, output)
        if code == 1 and not any(s in grade.FAILED_STATUSES for s in statuses.values()):
            return "broken", {}  # the crash rule of the harness
        return ("fails" if code == 1 else "passes"), statuses

    def suite(self) -> SuiteRun:
        """The whole suite through the harness's eval script, graded as ``sweworld eval`` grades."""
        run, result = run_tests(self.sb, self.release, self.layer.env.recipe, timeout=self.timeout)
        graded = grade.grade(self.release, run)
        return SuiteRun(statuses=dict(graded.status_map), output=run.test_output, crashed=graded.crashed,
                        timed_out=result.timed_out, exit_code=graded.exit_code)

    def close(self) -> None:
        self.sb.close()

    def __enter__(self) -> CandidateRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
