"""swe-rex's own ``RemoteRuntime`` (real HTTP on 127.0.0.1, a real uvicorn server on a thread) against
``sweworld runtime serve``'s app, over episodes of a real instance (more-itertools from PyPI, its
real environment and tests), on the real backend and the sim backend."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import random
import shlex
import subprocess
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

pytest.importorskip("swerex")

import aiohttp
from swerex.exceptions import (
    BashIncorrectSyntaxError,
    CommandTimeoutError,
    DeploymentStartupError,
    NonZeroExitCodeError,
    SessionDoesNotExistError,
    SessionExistsError,
    SwerexException,
)
from swerex.runtime.abstract import (
    BashAction,
    BashInterruptAction,
    BashObservation,
    CloseBashSessionRequest,
    Command,
    CommandResponse,
    CreateBashSessionRequest,
    ReadFileRequest,
    UploadRequest,
    WriteFileRequest,
)
from swerex.runtime.remote import RemoteRuntime
from typer.testing import CliRunner

from infra_failure import DIE, dies_on_marker
from sweworld.cli.app import app as cli
from sweworld.integrations.episodes import EpisodeSpec
from sweworld.integrations.swerex import RexServer, ServerThread, create_app
from sweworld.integrations.swerex_shell import parse_exports, plainly_valid
from sweworld.tasks import save_tasks
from sweworld.testing.isolation import check_isolation

KEY = "sweworld-test-key"


def real(test):
    """A test that opens real episodes: bubblewrap, and PyPI for the instance's first build."""
    return pytest.mark.network(pytest.mark.bwrap(test))


@pytest.fixture(scope="module")
def broken_id(task) -> str:
    return f"{task.instance_id}-broken-env"


@pytest.fixture(scope="module")
def dataset(task, broken_id, tmp_path_factory) -> str:
    """The instance, and a copy of it whose environment cannot build (its install fails)."""
    broken = task.model_copy(update={"instance_id": broken_id, "install": "echo the install fails on purpose >&2; exit 3"})
    return str(save_tasks([task, broken], tmp_path_factory.mktemp("swerex") / "tasks.jsonl"))


@contextlib.contextmanager
def serving(dataset: str, backend=None, instance_ids=None, kind: str = "real"):
    server = RexServer(EpisodeSpec(dataset=dataset, backend=kind), instance_ids=instance_ids, backend=backend,
                       command_timeout=300)
    with ServerThread(create_app(server, KEY)) as thread:
        yield thread.url


@pytest.fixture(scope="module")
def root(dataset, task, backend):
    """A server of one instance: its root routes serve it."""
    with serving(dataset, backend, [task.instance_id]) as url:
        yield url


@pytest.fixture(scope="module")
def many(dataset, backend):
    """A server of every instance of the dataset, addressed as /<instance_id>/..."""
    with serving(dataset, backend) as url:
        yield url


def rex(url: str, key: str = KEY) -> RemoteRuntime:
    return RemoteRuntime(host=url, auth_token=key)


def run(coro):
    return asyncio.run(coro)


async def bash(rt: RemoteRuntime, command: str, session: str, **kw) -> BashObservation:
    return await rt.run_in_session(BashAction(command=command, session=session, **kw))


@real
def test_sessions_keep_their_cwd_and_exports(root):
    rt = rex(root)

    async def go():
        await rt.create_session(CreateBashSessionRequest(session="one", startup_source=["/root/.bashrc"]))
        assert (await rt.is_alive(timeout=60)).is_alive
        await bash(rt, "cd /tmp && export GREETING='hello there'", "one")
        assert (await bash(rt, "pwd; echo $GREETING", "one")).output == "/tmp\nhello there\n"
        await rt.create_session(CreateBashSessionRequest(session="two"))
        assert (await bash(rt, 'pwd; echo "[$GREETING]"', "two")).output == "/testbed\n[]\n"
        await bash(rt, "cd /usr && export ODD=\"it's \\\"quoted\\\" \\$x\"$'\\n'\"line two\" && unset HOME", "two")
        odd = await bash(rt, 'pwd; printf "%s|" "$ODD" "${HOME-unset}"', "two")
        assert odd.output == "/usr\nit's \"quoted\" $x\nline two|unset|"
        assert (await bash(rt, "pwd; echo $GREETING $HOME", "one")).output == "/tmp\nhello there /tmp/home\n"
        with pytest.raises(SessionExistsError, match="POST /close") as exists:  # says what to do
            await rt.create_session(CreateBashSessionRequest(session="one"))
        assert "did not close it" in str(exists.value)
        await rt.close_session(CloseBashSessionRequest(session="two"))
        with pytest.raises(SessionDoesNotExistError):
            await bash(rt, "pwd", "two")
        await rt.close_session(CloseBashSessionRequest(session="one"))
    run(go())


@real
def test_timeout_then_interrupt(root):
    rt = rex(root)

    async def go():
        for session in ("slow", "slow-too"):  # the episode's shell, then a wrapped session
            await rt.create_session(CreateBashSessionRequest(session=session))
        for session in ("slow", "slow-too"):
            with pytest.raises(CommandTimeoutError, match=r"timeout after 1\.0 seconds") as raised:
                await bash(rt, "echo started; sleep 60; echo never", session, timeout=1)
            assert "started" in raised.value.extra_info["output"]
            interrupted = await rt.run_in_session(BashInterruptAction(session=session))
            assert interrupted.exit_code == 0 and "started" in interrupted.output and "never" not in interrupted.output
            assert (await rt.run_in_session(BashInterruptAction(session=session))).output == ""
            assert (await bash(rt, "echo after", session)).output == "after\n"
            await rt.close_session(CloseBashSessionRequest(session=session))
    run(go())


@real
def test_check_modes_syntax_and_expect(root):
    rt = rex(root)

    async def go():
        await rt.create_session(CreateBashSessionRequest(session="check"))
        await rt.create_session(CreateBashSessionRequest(session="check-too"))
        with pytest.raises(NonZeroExitCodeError, match="failed with exit code 3"):
            await bash(rt, "echo out; (exit 3)", "check", check="raise")
        with pytest.raises(NonZeroExitCodeError, match=r"^could not: Command 'false'"):
            await bash(rt, "false", "check", check="raise", error_msg="could not")
        assert (await bash(rt, "(exit 3)", "check", check="silent")).exit_code == 3
        assert (await bash(rt, "(exit 3)", "check", check="ignore")).exit_code is None
        marker = f"/tmp/ran-{uuid.uuid4().hex}"
        with pytest.raises(BashIncorrectSyntaxError) as raised:
            await bash(rt, f"touch {marker} && if true; then", "check")
        assert "syntax error" in raised.value.extra_info["bash_stderr"]
        assert (await bash(rt, f"test -e {marker}; echo $?", "check")).output == "1\n"  # nothing ran
        for session in ("check", "check-too"):  # an unterminated here-document is valid bash
            assert (await bash(rt, "cat <<EOF\nheredoc body", session)).output == "heredoc body\n"
        seen = await bash(rt, "echo first; echo second", "check", expect=["second", "first"])
        assert seen.expect_string == "first" and seen.output == "first\nsecond\n"
        assert (await bash(rt, "echo plain", "check", expect=["absent"])).expect_string == "SHELLPS1PREFIX"
        with pytest.raises(NotImplementedError, match="interactive"):
            await bash(rt, "python3", "check", is_interactive_command=True)
        for session in ("check", "check-too"):
            await rt.close_session(CloseBashSessionRequest(session=session))
    run(go())


@real
def test_read_write_and_upload(root, tmp_path):
    rt = rex(root)
    blob = bytes(range(256)) * 64
    (tmp_path / "blob.bin").write_bytes(blob)
    tree = tmp_path / "tree"
    (tree / "sub" / "deeper").mkdir(parents=True)
    (tree / "empty").mkdir()
    (tree / "sub" / "a.txt").write_text("text ✓\n")
    (tree / "sub" / "deeper" / "b.bin").write_bytes(blob[::-1])

    async def go():
        await rt.write_file(WriteFileRequest(path="/tmp/rex/notes.txt", content="héllo\nworld\n"))
        assert (await rt.read_file(ReadFileRequest(path="/tmp/rex/notes.txt"))).content == "héllo\nworld\n"
        with pytest.raises(FileNotFoundError):
            await rt.read_file(ReadFileRequest(path="/tmp/rex/missing.txt"))
        await rt.upload(UploadRequest(source_path=str(tmp_path / "blob.bin"), target_path="/tmp/up/blob.bin"))
        await rt.upload(UploadRequest(source_path=str(tree), target_path="/tmp/up/tree"))
        listing = await rt.execute(Command(command="cd /tmp/up/tree && find . | sort && sha256sum sub/deeper/b.bin "
                                           "/tmp/up/blob.bin", shell=True))
        lines = listing.stdout.splitlines()
        assert lines[:6] == [".", "./empty", "./sub", "./sub/a.txt", "./sub/deeper", "./sub/deeper/b.bin"]
        assert lines[6].split()[0] == hashlib.sha256(blob[::-1]).hexdigest()
        assert lines[7].split()[0] == hashlib.sha256(blob).hexdigest()
        assert (await rt.read_file(ReadFileRequest(path="/tmp/up/tree/sub/a.txt"))).content == "text ✓\n"
    run(go())


@real
def test_swe_agents_root_is_the_episodes_own(dataset, task, tmp_path):
    """SWE-agent uploads its tool bundles to /root/tools and writes /root/state.json: a server that
    builds its backend from the spec gives each episode a writable /root of its own."""
    (tmp_path / "bundle" / "bin").mkdir(parents=True)
    (tmp_path / "bundle" / "bin" / "tool").write_text("#!/bin/sh\necho tool\n")

    async def go(url):
        rt = rex(url)
        await rt.upload(UploadRequest(source_path=str(tmp_path / "bundle"), target_path="/root/tools/bundle"))
        await rt.write_file(WriteFileRequest(path="/root/state.json", content="{}"))
        listed = await rt.execute(Command(command="cat /root/state.json; ls /root/tools/bundle/bin", shell=True))
        assert listed.stdout == "{}tool\n", listed

    with serving(dataset, None, [task.instance_id]) as url:
        run(go(url))


@real
def test_execute_like_subprocess(root):
    rt = rex(root)

    async def go():
        assert (await rt.execute(Command(command=["printf", "%s|", "a b", "c"]))).stdout == "a b|c|"
        apart = await rt.execute(Command(command="echo out; echo err >&2; exit 4", shell=True))
        assert (apart.stdout, apart.stderr, apart.exit_code) == ("out\n", "err\n", 4)
        merged = await rt.execute(Command(command="echo out; echo err >&2", shell=True, merge_output_streams=True))
        assert (merged.stdout, merged.stderr) == ("out\nerr\n", "")
        only = await rt.execute(Command(command="env", shell=True, env={"ONLY": "1"}))
        assert "ONLY=1" in only.stdout.splitlines() and "HOME=" not in only.stdout
        assert (await rt.execute(Command(command="pwd", shell=True, cwd="/tmp"))).stdout == "/tmp\n"
        with pytest.raises(NonZeroExitCodeError, match="exit code 2"):
            await rt.execute(Command(command="exit 2", shell=True, check=True))
        with pytest.raises(CommandTimeoutError):
            await rt.execute(Command(command="sleep 60", shell=True, timeout=1))
    run(go())


def _post(url: str, body: dict, headers: dict) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


@real
def test_wrong_api_key_is_401_and_runs_nothing(root):
    marker = f"/tmp/never-{uuid.uuid4().hex}"
    touch = Command(command=f"touch {marker}", shell=True).model_dump()
    for headers in ({}, {"X-API-Key": "wrong"}):
        status, body = _post(f"{root}/execute", touch, headers)
        assert status == 401 and json.loads(body) == {"detail": "Invalid API Key"}
    wrong = rex(root, "wrong")
    alive = run(wrong.is_alive(timeout=60))
    assert not alive.is_alive and "401" in alive.message
    with pytest.raises(aiohttp.ClientResponseError) as raised:
        run(wrong.execute(Command(command=f"touch {marker}", shell=True)))
    assert raised.value.status == 401
    assert run(rex(root).execute(Command(command=f"test -e {marker}; echo $?", shell=True))).stdout == "1\n"


@real
def test_a_request_id_is_answered_once(root):
    counter = f"/tmp/count-{uuid.uuid4().hex}"
    command = Command(command=f"echo x >> {counter}; wc -l < {counter}", shell=True).model_dump()
    headers = {"X-API-Key": KEY, "X-Request-ID": uuid.uuid4().hex}
    first, again = _post(f"{root}/execute", command, headers), _post(f"{root}/execute", command, headers)
    assert first == again and json.loads(first[1])["stdout"] == "1\n"
    assert json.loads(_post(f"{root}/execute", command, {"X-API-Key": KEY})[1])["stdout"] == "2\n"


@real
def test_unknown_or_unserved_instance_is_a_clear_error(many, root, dataset, broken_id):
    with pytest.raises(DeploymentStartupError) as raised:
        run(rex(f"{many}/nope__nope-1").create_session(CreateBashSessionRequest()))
    message = str(raised.value)
    assert "'nope__nope-1'" in message and "what to do" in message
    assert Path(dataset).name in message and dataset not in message  # the file, not where the server keeps it
    with pytest.raises(SwerexException, match="address one as http://HOST:PORT/<instance_id>"):
        run(rex(many).create_session(CreateBashSessionRequest()))
    assert "<instance_id>" in run(rex(many).is_alive(timeout=60)).message
    with pytest.raises(DeploymentStartupError, match="is not served here"):
        run(rex(f"{root}/{broken_id}").execute(Command(command="true", shell=True)))


@real
def test_an_environment_that_does_not_build(many, broken_id):
    rt = rex(f"{many}/{broken_id}")
    with pytest.raises(DeploymentStartupError) as raised:
        run(rt.create_session(CreateBashSessionRequest()))
    assert f"could not open an episode of {broken_id}" in str(raised.value)
    assert "install exited with status 3" in str(raised.value)
    alive = run(rt.is_alive(timeout=60))
    assert not alive.is_alive and broken_id in alive.message


@real
def test_instance_prefix_and_the_root_of_one_instance(many, root, task):
    prefixed = rex(f"{many}/{task.instance_id}")

    async def go():
        await prefixed.create_session(CreateBashSessionRequest(session="p"))
        await bash(prefixed, "echo added > /testbed/added.txt", "p")
        assert "?? added.txt" in (await bash(prefixed, "git status --short", "p")).output
        await prefixed.close()  # /<instance_id>/close: the episode is gone, a fresh one opens on the next use
        with pytest.raises(SessionDoesNotExistError):
            await bash(prefixed, "pwd", "p")
        fresh = await prefixed.execute(Command(command="test -e /testbed/added.txt; echo $?", shell=True))
        assert fresh.stdout == "1\n"
        shared = f"/tmp/shared-{uuid.uuid4().hex}"
        await rex(root).write_file(WriteFileRequest(path=shared, content="one episode"))
        assert (await rex(f"{root}/{task.instance_id}").read_file(ReadFileRequest(path=shared))).content == "one episode"
    run(go())


@real
def test_isolation_probes_through_execute(root):
    rt = rex(root)

    def probe(command: str) -> tuple[int, str]:
        done = run(rt.execute(Command(command=command, shell=True, merge_output_streams=True, timeout=120)))
        return done.exit_code, done.stdout
    assert probe("echo inside")[1] == "inside\n"
    assert check_isolation(probe) == []


@real
def test_a_dead_episode_says_so_until_closed(dataset, backend, task):
    with serving(dataset, backend, [task.instance_id]) as url:
        rt = rex(url)

        async def go():
            await rt.create_session(CreateBashSessionRequest())
            with dies_on_marker(), pytest.raises(SwerexException, match=f"the episode of {task.instance_id} died"):
                await bash(rt, DIE, "default")
            with pytest.raises(SwerexException, match="died"):
                await rt.execute(Command(command="true", shell=True))
            await rt.close()
            await rt.create_session(CreateBashSessionRequest())
            assert (await bash(rt, "echo alive again", "default")).output == "alive again\n"
        run(go())


@real
def test_the_sim_backend_answers_in_the_same_shapes(dataset, root, task):
    with serving(dataset, None, [task.instance_id], kind="sim") as url:
        sim, real_rt = rex(url), rex(root)

        async def go():
            await sim.create_session(CreateBashSessionRequest())
            await real_rt.create_session(CreateBashSessionRequest(session="shape"))
            said = await bash(sim, "echo hi && pwd", "default")
            assert (said.output, said.exit_code) == ("hi\n/testbed\n", 0)
            predicted = await bash(sim, "python -c 'print(6 * 7)'", "default", check="silent")
            actual = await bash(real_rt, "python -c 'print(6 * 7)'", "shape", check="silent")
            assert type(predicted) is type(actual) is BashObservation and isinstance(predicted.exit_code, int)
            assert predicted.model_dump().keys() == actual.model_dump().keys() and actual.output == "42\n"
            await sim.write_file(WriteFileRequest(path="/testbed/sim.txt", content="written"))
            assert (await sim.read_file(ReadFileRequest(path="/testbed/sim.txt"))).content == "written"
            listed = await sim.execute(Command(command=["ls", "/testbed/sim.txt"]))
            assert isinstance(listed, CommandResponse) and listed.stdout == "/testbed/sim.txt\n"
            await real_rt.close_session(CloseBashSessionRequest(session="shape"))
        run(go())


PLAIN = ["echo hi", "ls -la", "cd /tmp && ls", "python -m pytest tests/test_x.py -k 'a and b' -q",
         'grep -rn "def first" more_itertools | head -5', "git diff > /tmp/patch.txt 2>&1", "A=1 B=2 env",
         "echo a; echo b;", "sleep 1 &", "echo a ||\n echo b", "cat < in.txt >> out.txt", "echo done", "> empty",
         "echo 'it''s' \"x\"y", "", "  \n\n", "ls *.py ?.txt ~/x"]
NOT_PLAIN = ["fi", "then echo", "echo a |", "echo a &&", "echo 'open", "if true", "echo a;;", "; echo", "echo $HOME",
             "echo `date`", "echo $(date)", "cat <<EOF\nx\nEOF", "(cd /tmp)", "{ echo; }", "echo a # c", "x=(a b)",
             "echo a |& cat", "! true", "echo > ", "for x in a; do echo; done", "time ls", "echo \\n"]


def _bash_accepts(command: str) -> bool:
    return subprocess.run(["bash", "-n"], input=command.encode() + b"\n", capture_output=True).returncode == 0


def test_plainly_valid_commands_are_valid_bash():
    assert all(plainly_valid(c) for c in PLAIN) and not any(plainly_valid(c) for c in NOT_PLAIN)
    assert all(_bash_accepts(c) for c in PLAIN)
    pieces = ["echo", "ls", "fi", "do", "a=b", "'q x'", '"d q"', "|", "||", "&&", ";", "&", "\n", ">", ">>", "2>&1",
              "<", "x.txt", "-n", "*", "then", "$x", "(", ")", "'", "\"", "#", "{", "}", "2>", "&>", "=", "!"]
    draw = random.Random(34)
    accepted = 0
    for _ in range(600):
        command = " ".join(draw.choice(pieces) for _ in range(draw.randint(1, 7)))
        if plainly_valid(command):
            accepted += 1
            assert _bash_accepts(command), command  # never a command bash refuses
    assert accepted > 50


def test_export_lines_round_trip_through_bash():
    values = {"PLAIN": "x", "QUOTED": "it's \"q\" $HOME `x` \\", "MULTI": "a\nb\tc", "EMPTY": ""}
    script = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in values.items()) + "export BARE\nexport -p\n"
    exported = parse_exports(subprocess.run(["bash", "--norc", "-c", script], capture_output=True, text=True).stdout)
    assert exported["BARE"] is None and {"PWD", "SHLVL"}.isdisjoint(exported)
    assert exported["MULTI"].startswith("$'")  # bash's ANSI-C quoting, kept as bash wrote it
    replay = "".join(f"export {k}={exported[k]}\n" for k in values) + "".join(
        f'printf "%s\\0" "${k}"\n' for k in values)
    back = subprocess.run(["bash", "--norc", "-c", replay], capture_output=True, text=True).stdout
    assert back.split("\0")[:-1] == list(values.values())


def test_serve_refuses_an_unknown_instance_before_listening():
    result = CliRunner().invoke(cli, ["runtime", "serve", "--api-key", "k", "--dataset", "lite",
                                      "--instance-ids", "nope__nope-1"])
    assert result.exit_code == 2
    assert "nope__nope-1" in result.output and "lite" in result.output
