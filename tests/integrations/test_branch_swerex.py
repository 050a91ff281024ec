"""Snapshot, fork and restore through a sweworld SWE-ReX runtime (issue 45): sweworld's own routes,
called by ``BranchingRuntime`` (swe-rex's ``RemoteRuntime`` and its request helper, real HTTP on
127.0.0.1), on real episodes of a real instance; the fork is an episode any swerex client addresses,
swe-rex's own ``RemoteRuntime`` included."""

from __future__ import annotations

import pytest

pytest.importorskip("swerex")

from swerex.exceptions import SwerexException
from swerex.runtime.abstract import CreateBashSessionRequest, ReadFileRequest, WriteFileRequest
from tests.integrations.conftest import BRANCH_STATE
from tests.integrations.test_integrations_swerex import KEY, bash, real, rex, run, serving

from sweworld.integrations.swerex_branch import BranchingRuntime


@pytest.fixture(scope="module", params=["root", "instance"])
def url(request, dataset, backend, task):
    """A server of one instance, addressed at its root, and one addressed as /<instance_id>."""
    if request.param == "root":
        with serving(dataset, backend, [task.instance_id]) as served:
            yield served
    else:
        with serving(dataset, backend) as served:
            yield f"{served}/{task.instance_id}"


def branching(url: str) -> BranchingRuntime:
    return BranchingRuntime(host=url, auth_token=KEY)


@real
def test_fork_and_restore_through_the_runtime(url):
    rt = branching(url)

    async def go():
        await rt.create_session(CreateBashSessionRequest(session="main"))
        await rt.create_session(CreateBashSessionRequest(session="side"))
        await bash(rt, "echo one > /testbed/note.txt && export MARK=one && cd /tmp", "main")
        await bash(rt, "cd /usr && export SIDE=then", "side")
        snap = await rt.snapshot()
        await bash(rt, "echo two > /testbed/note.txt && touch /testbed/later.txt && export MARK=two", "main")
        await bash(rt, "cd /etc && export SIDE=later", "side")
        child = await rt.fork(snap)
        assert child._api_url != rt._api_url and "@" in child._api_url
        try:
            await child.create_session(CreateBashSessionRequest(session="main"))  # a fork starts with no session
            seen = (await bash(child, f"{BRANCH_STATE}; touch /testbed/child.txt", "main")).output
            assert seen.startswith("/tmp\nmark=one\none\nno-child\nno-later\n"), seen
            mine = (await bash(rt, BRANCH_STATE, "main")).output
            assert mine.startswith("/tmp\nmark=two\ntwo\nno-child\nhas-later\n"), mine
            plain = rex(child._api_url)  # swe-rex's own client reaches the fork as any episode
            assert (await plain.read_file(ReadFileRequest(path="/testbed/note.txt"))).content == "one\n"
            with pytest.raises(SwerexException, match="no snapshot"):  # a fork restores its own snapshots only
                await child.restore(snap)
        finally:
            await child.close()
        with pytest.raises(SwerexException, match="was closed"):
            await rex(child._api_url).read_file(ReadFileRequest(path="/testbed/note.txt"))
        await rt.restore(snap)
        back = (await bash(rt, BRANCH_STATE, "main")).output
        assert back.startswith("/tmp\nmark=one\none\nno-child\nno-later\n"), back
        assert (await bash(rt, "pwd; echo $SIDE", "side")).output == "/usr\nthen\n"  # a further session's state too
        await rt.release(snap)
        with pytest.raises(SwerexException, match="no snapshot"):
            await rt.restore(snap)
        await rt.close()
    run(go())


@real
def test_a_fork_of_now_goes_apart(url):
    rt = branching(url)

    async def go():
        await rt.write_file(WriteFileRequest(path="/testbed/note.txt", content="parent\n"))
        child = await rt.fork()
        try:
            await child.write_file(WriteFileRequest(path="/testbed/note.txt", content="child\n"))
            assert (await rt.read_file(ReadFileRequest(path="/testbed/note.txt"))).content == "parent\n"
            grandchild = await child.fork()
            assert grandchild._api_url.count("@") == 1  # named after the instance, not after its parent
            try:
                assert (await grandchild.read_file(ReadFileRequest(path="/testbed/note.txt"))).content == "child\n"
            finally:
                await grandchild.close()
        finally:
            await child.close()
        with pytest.raises(SwerexException, match="no snapshot 'nope'"):
            await rt.restore("nope")
        await rt.close()
    run(go())
