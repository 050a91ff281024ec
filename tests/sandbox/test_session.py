"""Sessions: persistent shell semantics, stateless mode, file operations, diff."""

from __future__ import annotations

import os

import pytest

from sweworld.core.executor import Executor
from sweworld.sandbox import Layers, Sandbox, SandboxConfig

pytestmark = pytest.mark.bwrap


def test_sandbox_is_an_executor(sandbox):
    assert isinstance(sandbox, Executor)
    assert sandbox.workdir == "/testbed"


def test_cwd_and_exports_persist(sandbox):
    assert sandbox.run("pwd").output.strip() == "/testbed"
    sandbox.run("cd pkg && export GREETING='hello world' && LOCAL=1")
    assert sandbox.run("pwd; echo $GREETING").output.split("\n")[:2] == ["/testbed/pkg", "hello world"]


def test_per_command_cwd_does_not_move_the_session(sandbox):
    assert sandbox.run("pwd", cwd="/tmp").output.strip() == "/tmp"
    assert sandbox.run("pwd").output.strip() == "/testbed"


def test_exit_code_and_failing_command_is_a_result(sandbox):
    result = sandbox.run("echo out; echo err >&2; false")
    assert result.exit_code == 1 and not result.timed_out
    assert "out" in result.output and "err" in result.output
    assert sandbox.run("(exit 7)").exit_code == 7
    assert sandbox.run("nonexistent-command-xyz").exit_code == 127


def test_shell_exit_restarts_the_session_and_says_so(sandbox):
    sandbox.run("cd /tmp && export KEEP=yes")
    result = sandbox.run("exit 5")
    assert result.exit_code == 5 and result.restarted
    assert "new shell" in result.output
    assert sandbox.run("pwd; echo $KEEP").output.split() == ["/tmp", "yes"]


def test_timeout_restarts_and_keeps_state(sandbox):
    sandbox.run("cd pkg && export KEEP=1")
    result = sandbox.run("sleep 30", timeout=1)
    assert result.timed_out and result.restarted
    assert sandbox.run("pwd; echo $KEEP").output.split() == ["/testbed/pkg", "1"]


def test_syntax_error_is_a_result_not_a_hang(sandbox):
    result = sandbox.run("if then fi (", timeout=20)
    assert result.exit_code != 0 and not result.timed_out
    assert sandbox.run("echo ok").output.strip() == "ok"


def test_stdin_is_not_the_protocol(sandbox):
    result = sandbox.run("cat; read x; echo done", timeout=20)
    assert result.output.strip() == "done" and not result.timed_out


def test_background_process_survives_between_commands(sandbox):
    sandbox.run("sleep 300 & echo $! > /tmp/bg.pid")
    assert sandbox.run("kill -0 $(cat /tmp/bg.pid) && echo running").output.strip() == "running"


def test_stateless_mode_forgets_cwd(small_tree):
    tree, commit = small_tree
    with Sandbox({"/testbed": Layers([tree])}, base_commit=commit,
                 config=SandboxConfig(persistent=False)) as sb:
        sb.run("cd /tmp && export X=1")
        assert sb.run("pwd; echo \"[$X]\"").output.split() == ["/testbed", "[]"]
        assert sb.run("sleep 20", timeout=1).timed_out


def test_files_roundtrip_and_missing_file(sandbox):
    sandbox.write_file("/testbed/new/dir/f.txt", "h\u00e9llo\n")
    assert sandbox.read_file("new/dir/f.txt") == "h\u00e9llo\n"
    assert sandbox.run("cat /testbed/new/dir/f.txt").output == "h\u00e9llo\n"
    with pytest.raises(FileNotFoundError):
        sandbox.read_file("/testbed/missing.txt")


def test_diff_is_against_base_commit_and_skips_caches(sandbox):
    sandbox.run("sed -i 's/a + b/a - b/' pkg/__init__.py && echo new > added.txt && rm README")
    sandbox.run("python3 -c 'import compileall; compileall.compile_dir(\"pkg\", quiet=1)'")
    sandbox.run("mkdir -p .pytest_cache && echo x > .pytest_cache/v")
    diff = sandbox.diff()
    assert "-    return a + b\n+    return a - b" in diff
    assert "b/added.txt" in diff and "deleted file mode" in diff
    assert "__pycache__" not in diff and ".pyc" not in diff and ".pytest_cache" not in diff
    status = sandbox.run("git status --porcelain").output
    assert "added.txt" in status  # the session's own index is untouched by diff()


def test_diff_of_a_tree_whose_gitignore_ignores_a_build_cache(sandbox):
    """Regression: with `.eggs` ignored and present (setup_requires leaves it), the exclude pathspec
    `.eggs/**` made `git add -A` exit 1 and the diff failed."""
    sandbox.run("echo .eggs >> .gitignore && mkdir -p .eggs && echo x > .eggs/pkg.egg")
    sandbox.run("sed -i 's/a + b/a * b/' pkg/__init__.py")
    diff = sandbox.diff()
    assert "+    return a * b" in diff and "pkg.egg" not in diff


def test_a_server_that_stops_answering_is_killed_and_the_error_says_so(small_tree, monkeypatch):
    """The reply's deadline is a wait on the server's pipe (no watchdog thread): a stopped server
    is killed once the command's timeout and the grace have passed, and the error names it."""
    import signal
    import subprocess

    from sweworld.core.errors import SandboxError
    from sweworld.sandbox import session

    monkeypatch.setattr(session, "GRACE", 0.5)
    sandbox = Sandbox({"/testbed": Layers([small_tree[0]])}, base_commit=small_tree[1])
    try:
        assert sandbox.run("echo up").output.strip() == "up"
        server = sandbox._live().proc.pid
        children = subprocess.run(["pgrep", "-P", str(server)], capture_output=True, text=True).stdout.split()
        for pid in [server, *map(int, children)]:
            os.kill(int(pid), signal.SIGSTOP)
        with pytest.raises(SandboxError, match="stopped answering"):
            sandbox.run("echo never", timeout=1)
    finally:
        sandbox.close()
