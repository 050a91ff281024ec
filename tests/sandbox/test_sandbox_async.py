"""``Sandbox.arun``: the episode's shell awaited on an event loop, as the framework seams call it."""

from __future__ import annotations

import asyncio

import pytest

from sweworld.core.protocols import AsyncRun

pytestmark = pytest.mark.bwrap


def test_arun_is_run_awaited_and_commands_of_one_episode_take_turns(sandbox):
    assert isinstance(sandbox, AsyncRun)

    async def go():
        first = await sandbox.arun("export WHO=me; cd /tmp; echo $WHO")
        both = await asyncio.gather(sandbox.arun("sleep 0.2; echo one"), sandbox.arun("echo two; pwd"),
                                    asyncio.to_thread(sandbox.run, "echo three"))
        return first, both

    first, (one, two, three) = asyncio.run(go())
    assert first.output == "me\n" and first.ok
    assert one.output == "one\n" and two.output == "two\n/tmp\n" and three.output == "three\n"  # one shell


def test_arun_times_out_as_run_does(sandbox):
    result = asyncio.run(sandbox.arun("sleep 30", timeout=1))
    assert result.timed_out and result.exit_code == 124
    assert asyncio.run(sandbox.arun("echo alive")).output == "alive\n"


def test_a_cancelled_arun_leaves_the_next_command_its_own_reply(sandbox):
    async def go():
        task = asyncio.ensure_future(sandbox.arun("sleep 0.5; echo late"))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return await sandbox.arun("echo mine"), sandbox.run("echo sync")

    mine, sync = asyncio.run(go())
    assert mine.output == "mine\n" and sync.output == "sync\n"
