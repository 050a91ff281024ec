"""A pytest fork server (runs INSIDE the sandbox, started by ``runs.CandidateRun``).

Candidates are checked by running pytest many times in one episode. Starting the interpreter and
importing pytest costs about a third of a small suite's run, so this process pays it once and
forks a child per run: the child chdirs, redirects stdout/stderr to a file, runs ``pytest.main``
and exits with its code. The library under test is never imported by the server, so each child
imports the current (mutated or restored) sources afresh.

Protocol, over two FIFOs given on the command line: one JSON request per line on the request
FIFO (``{"args": [...], "cwd": ..., "out": ..., "timeout": seconds}``); one line on the response
FIFO per request: the exit code, or ``timeout`` (the child's whole session was killed, or a test
ran past its budget). ``"budgets"`` (optional) names a JSON file ``{"tests": {node id: seconds},
"default": seconds}``: each test gets an alarm for its budget, and a test past it ends the run at
once (a hang is found in about one test's time, not the whole run's).
Start it with the environment of the eval script (``PYTHONHASHSEED``, ``TZ``, locale): children
inherit the hash seed of the server. ``SWEWORLD_PATH0`` sets ``sys.path[0]`` as the ``pytest``
console script would have it.
"""

import json
import os
import signal
import sys
import time
import traceback

OVER_BUDGET = 124


class Budgets:
    """A pytest plugin: an alarm per test (setup + call + teardown); past it, the run exits."""

    def __init__(self, path):
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        self.tests, self.default = data["tests"], float(data["default"])

    def pytest_runtest_logstart(self, nodeid, location):
        signal.setitimer(signal.ITIMER_REAL, float(self.tests.get(nodeid, self.default)))

    def pytest_runtest_logfinish(self, nodeid, location):
        signal.setitimer(signal.ITIMER_REAL, 0)


def over_budget(signum, frame):
    os._exit(OVER_BUDGET)


def child(request):
    code = 3
    try:
        os.setsid()
        out = os.open(request["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.chdir(request["cwd"])
        sys.argv = ["pytest", *request["args"]]
        import pytest

        plugins = []
        if request.get("budgets"):
            signal.signal(signal.SIGALRM, over_budget)
            plugins.append(Budgets(request["budgets"]))
        code = int(pytest.main(list(request["args"]), plugins=plugins))
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def run(request):
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        child(request)
    deadline = time.monotonic() + float(request.get("timeout", 300))
    delay = 0.002
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            return "timeout" if code == OVER_BUDGET and request.get("budgets") else str(code)
        if time.monotonic() > deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            return "timeout"
        time.sleep(delay)
        delay = min(delay * 2, 0.02)


def main():
    requests, responses = sys.argv[1], sys.argv[2]
    if os.environ.get("SWEWORLD_PATH0") is not None:
        sys.path[0] = os.environ["SWEWORLD_PATH0"]
    import pytest  # noqa: F401  (the cost paid once)

    while True:
        with open(requests, encoding="utf-8") as handle:
            lines = [line for line in handle.read().splitlines() if line.strip()]
        for line in lines:
            code = run(json.loads(line))
            with open(responses, "w", encoding="utf-8") as handle:
                handle.write(code + "\n")


if __name__ == "__main__":
    main()
