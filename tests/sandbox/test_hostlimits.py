"""The host process's limits for many episodes at once (``sandbox.hostlimits``), and ``sweworld doctor``
on this host. The process reserve is an ordinary user's matter (the kernel does not count root's
processes): the CI's ordinary-user run exercises it, for real, with a small ``ulimit -u``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.bwrap

FORK = ("import os, sys, time\nn = 0\nfor _ in range({n}):\n    try:\n        pid = os.fork()\n"
        "    except OSError:\n        break\n    if pid == 0:\n        time.sleep(30)\n        os._exit(0)\n"
        "    n += 1\nprint('forked', n, flush=True)\nsys.stdin.read() if {wait} else None\n")
CHILD = """
import resource, subprocess, sys, tempfile
from pathlib import Path
from sweworld.sandbox import Dir, Sandbox, hostlimits
FORK = sys.argv[2]
if sys.argv[1] == "without":
    hostlimits.reserve_for_user = lambda *a, **k: None
# the user's own shell, started before sweworld opens anything: it keeps the user's whole limit
shell = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.readline(); " + FORK.format(n=100, wait=0)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
sandboxes = [Sandbox({"/testbed": Dir(Path(tempfile.mkdtemp()))}) for _ in range(3)]
for sb in sandboxes:  # 1,500 processes wanted, more than the user may have
    sb.write_file("/tmp/fork.py", FORK.format(n=500, wait=0))
    sb.run("python3 /tmp/fork.py", timeout=120)
print(shell.communicate("go\\n", timeout=120)[0].strip(), resource.getrlimit(resource.RLIMIT_NPROC))
for sb in sandboxes:
    sb.close()
"""


def _my_processes() -> int:
    return int(subprocess.run(["ps", "-u", str(os.geteuid()), "-o", "pid="], capture_output=True,
                              text=True).stdout.count("\n"))


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() == 0, reason="the kernel counts no process limit for root")
def test_all_episodes_together_leave_the_users_own_shell_its_processes():
    limit = _my_processes() + 1200
    runs = {}
    for mode in ("with", "without"):
        done = subprocess.run(["prlimit", f"--nproc={limit}:{limit}", "--", sys.executable, "-c", CHILD, mode, FORK],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        runs[mode] = done.stdout
    assert "forked 100 " in runs["with"], runs  # the episodes stopped 256 short of the user's limit
    assert f"({limit - 256}, {limit})" in runs["with"]
    forked_without = int(runs["without"].split("forked ")[1].split()[0])
    assert forked_without < 100, runs  # without the reserve they took what the shell needed


def test_open_files_are_raised_to_the_hard_limit_before_the_first_episode():
    done = subprocess.run([sys.executable, "-c", "import resource\nfrom sweworld.sandbox import hostlimits\n"
                           "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
                           "resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))\n"
                           "print(hostlimits.raise_open_files() == (hard, hard))"],
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "True", done.stderr


def test_doctor_reports_this_host_and_exits_0_where_episodes_are_isolated():
    done = subprocess.run([sys.executable, "-m", "sweworld.cli.app", "doctor", "--json"], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    assert report["isolated"] is True
    assert checks["route"]["detail"].startswith("userns") and checks["workspace"]["detail"].startswith("overlay")
    assert checks["episode"]["ok"] is True and "no host environment or cache path visible" in checks["episode"]["detail"]
    assert checks["keyring"]["ok"] is True and "fresh session keyring" in checks["keyring"]["detail"]
    assert checks["seccomp"]["ok"] is True and checks["seccomp"]["detail"].startswith("filter docker-default")
    assert checks["disk bound"]["ok"] is True and "was ended at" in checks["disk bound"]["detail"]
    assert checks["user"]["detail"].endswith(", root)" if os.geteuid() == 0 else ", no root)")
    expected = "cgroup" if os.geteuid() == 0 else "rlimit"
    assert f"processes by {expected}" in checks["process limit"]["detail"]
