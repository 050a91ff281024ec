"""Test runs of candidate bugs inside one isolated episode of the release's environment.

A :class:`CandidateRun` is a copy-on-write episode over the release's install layer. ``apply``
writes a candidate's files, ``restore`` puts the release back (tracked files checked out,
untracked ones removed; install artefacts are excluded from git and stay), so one episode serves
many candidates in turn. ``statuses`` runs some tests (the covering ones, to screen; failing ones
again, to catch flaky ones); ``suite`` runs the whole suite with the eval script's environment and
grades it with the harness's parser and crash rule, so the ids and statuses are what ``sweworld
eval`` sees (the shipped dataset is validated by the harness itself afterwards).

By default pytest runs through a fork server inside the episode (``forkserver.py``): the
interpreter start and the pytest import are paid once per episode, not per run.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from importlib import resources

from sweworld.core.errors import SandboxError
from sweworld.core.types import Task
from sweworld.envs import InstanceLayer, episode_sandbox
from sweworld.harness import grade
from sweworld.harness.evalscript import env_exports
from sweworld.sandbox import Sandbox, SandboxConfig
from sweworld.synth.coverage import pytest_command

PASS = ("PASSED", "XFAIL")
WORK = "/tmp/.sweworld-synth"
IDS_FILE = f"{WORK}/ids.json"
MEMORY = 4 * 1024**3
OUTPUT_CAP = 8 * 1024 * 1024
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
    """An episode of ``release`` (a task at the release commit), reused for candidate after candidate."""

    def __init__(self, release: Task, layer: InstanceLayer, files: dict[str, str] | None = None, *,
                 timeout: float, label: str = "", fork_server: bool = True):
        self.release, self.layer, self.timeout, self.fork_server = release, layer, timeout, fork_server
        config = SandboxConfig(timeout=timeout, memory=MEMORY, env={"PYTHONDONTWRITEBYTECODE": "1"})
        self.sb: Sandbox = episode_sandbox(layer, config, label=label or release.instance_id)
        self._originals: dict[str, str] = {}
        self._runs = 0
        self._budgets: str | None = None
        words = shlex.split(layer.env.recipe.test_cmd)
        self.args = shlex.split(pytest_command(layer.env.recipe.test_cmd))[3:]
        self.path0 = "" if words[:3] == ["python", "-m", "pytest"] else "/sweworld/venv/bin"
        self.apply(files or {})

    # ---- the tree ---------------------------------------------------------------------------
    def apply(self, files: dict[str, str]) -> None:
        """Write ``files`` (path -> text) over the tree; ``restore`` undoes it."""
        for path, text in files.items():
            if path not in self._originals:
                self._originals[path] = self.sb.read_file(f"{self.sb.workdir}/{path}")
            self.sb.write_file(f"{self.sb.workdir}/{path}", text)

    def restore(self) -> None:
        """The release again: applied files back, tracked files checked out, untracked files removed."""
        for path, text in self._originals.items():
            self.sb.write_file(f"{self.sb.workdir}/{path}", text)
        self._originals.clear()
        self.sb.exec("git checkout -q -- . && git clean -fdq", cwd=self.sb.workdir, timeout=60)

    def set_budgets(self, seconds: dict[str, float], default: float) -> None:
        """Per-test time budgets for every later run (fork server only): a test past its budget
        ends the run as a timeout."""
        self._budgets = f"{WORK}/budgets.json"
        self.sb.write_file(self._budgets, json.dumps({"tests": seconds, "default": default}))

    # ---- running pytest ---------------------------------------------------------------------
    def _server_alive(self) -> bool:
        check = self.sb.exec(f"kill -0 $(cat {WORK}/server.pid 2>/dev/null) 2>/dev/null", timeout=30)
        return check.exit_code == 0

    def _start_server(self) -> None:
        source = resources.files("sweworld.synth").joinpath("forkserver.py").read_text(encoding="utf-8")
        self.sb.write_file(f"{WORK}/forkserver.py", source)
        exports = "; ".join([*env_exports(self.layer.env.recipe.env_vars),
                             f"export SWEWORLD_PATH0={shlex.quote(self.path0)}"])
        command = (f"cd {WORK} && rm -f req resp && mkfifo req resp && cd {shlex.quote(self.sb.workdir)} && "
                   f"({exports}; exec setsid python {WORK}/forkserver.py {WORK}/req {WORK}/resp "
                   f"> {WORK}/server.log 2>&1 < /dev/null & echo $! > {WORK}/server.pid)")
        started = self.sb.exec(command, timeout=60)
        if started.exit_code != 0:
            raise SandboxError(f"the pytest fork server did not start (exit {started.exit_code}): "
                               f"{started.output.strip()[-2000:]}", where=self.release.instance_id,
                               hint="the candidate is retried by a rerun; SynthOptions(fork_server=False) runs "
                                    "a fresh interpreter per pytest run instead")

    def _pytest(self, args: list[str], timeout: float | None = None) -> tuple[int | None, str, bool]:
        """(exit code, output, timed out) of one pytest run with ``args`` in the tree."""
        timeout = timeout or self.timeout
        self._runs += 1
        out = f"{WORK}/out-{self._runs}.txt"
        if not self.fork_server:
            exports = "; ".join(env_exports(self.layer.env.recipe.env_vars))
            runner = "pytest" if self.path0 else "python -m pytest"
            command = (f"mkdir -p {WORK}; ({exports}; exec timeout -s KILL {timeout} {runner} {shlex.join(args)}) "
                       f"> {out} 2>&1 < /dev/null; code=$?; [ $code = 137 ] && echo timeout || echo $code")
        else:
            if not self._server_alive():
                self._start_server()
            request = json.dumps({"args": args, "cwd": self.sb.workdir, "out": out, "timeout": timeout,
                                  "budgets": self._budgets})
            command = f"printf '%s\\n' {shlex.quote(request)} > {WORK}/req && read -r code < {WORK}/resp && echo $code"
        result = self.sb.exec(command, cwd=self.sb.workdir, timeout=timeout + 30)
        verdict = result.output.strip().splitlines()[-1] if result.output.strip() else ""
        output = self.sb.exec(f"head -c {OUTPUT_CAP} {out}; rm -f {out}", timeout=60).output
        if result.timed_out or verdict == "timeout":
            return None, output, True
        return (int(verdict) if verdict.lstrip("-").isdigit() else None), output, False

    def _ids_args(self, tests: list[str], options: list[str]) -> list[str]:
        return [*self.args, *options, "-p", "no:cacheprovider", *tests]

    def statuses(self, tests: list[str], timeout: float | None = None) -> tuple[str, dict[str, str]]:
        """Run ``tests`` once: (``"fails"`` | ``"passes"`` | ``"timeout"`` | ``"broken"``, status per test)."""
        code, output, timed_out = self._pytest(self._ids_args(tests, ["-rA", "--tb=no"]), timeout)
        if timed_out:
            return "timeout", {}
        if code not in grade.ACCEPTED_EXIT_CODES:
            return "broken", {}
        statuses = grade.parse_status(self.release, output)
        if code == 1 and not any(s in grade.FAILED_STATUSES for s in statuses.values()):
            return "broken", {}  # the crash rule of the harness
        return ("fails" if code == 1 else "passes"), statuses

    def details(self, tests: list[str]) -> str:
        """The output of ``tests`` with short tracebacks (for the problem statement)."""
        return self._pytest(self._ids_args(tests, ["-rA", "--tb=short"]))[1]

    def suite(self) -> SuiteRun:
        """The whole suite (the test command, ``-rA``), graded as ``sweworld eval`` grades it. Without
        tracebacks: rendering hundreds of failures (assertion diffs of long strings) can take ten
        times as long as the tests; ``details`` gets them for the few tests a statement shows."""
        code, output, timed_out = self._pytest([*self.args, "-rA", "--tb=no", "-p", "no:cacheprovider"])
        statuses = grade.parse_status(self.release, output) if not timed_out else {}
        crashed = timed_out or grade.is_crashed(code, statuses)
        return SuiteRun(statuses={} if crashed else statuses, output=output, crashed=crashed,
                        timed_out=timed_out, exit_code=code)

    def close(self) -> None:
        self.sb.close()

    def __enter__(self) -> CandidateRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
