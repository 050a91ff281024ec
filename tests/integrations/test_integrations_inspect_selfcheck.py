"""inspect-ai's own sandbox conformance suite (``inspect_ai/util/_sandbox/self_check.py``) against a
real sweworld episode of a shipped instance, opened the way inspect opens it (``sample_init``).

Every check runs; the ones a sweworld episode cannot satisfy are xfailed here with their reason
(docs/inspect.md lists them)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai.util._sandbox.self_check import *  # noqa: F403  (inspect's checks, collected here)

from sweworld.integrations.inspect_sandbox import SweworldSandboxEnvironment

pytestmark = [pytest.mark.anyio, pytest.mark.bwrap, pytest.mark.network]

INSTANCE = {"instance_id": "boltons-24.0.0__change_arith_op__a5f686dc", "dataset": "lite"}

#: The checks a sweworld episode does not pass, and why (docs/inspect.md).
XFAIL = {
    "test_exec_as_user": "a sweworld episode has one user (root inside its own user namespace; /etc is the host's, "
                         "read-only): adduser cannot add one, and exec(user=other) raises SandboxUserUnsupportedError",
}


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def episode():
    envs = asyncio.run(SweworldSandboxEnvironment.sample_init("self-check", None, INSTANCE))
    yield envs["default"]
    asyncio.run(SweworldSandboxEnvironment.sample_cleanup("self-check", None, envs, False))


@pytest.fixture
def sandbox_env(request, episode):
    reason = XFAIL.get(request.node.originalname)
    if reason:
        request.node.add_marker(pytest.mark.xfail(reason=reason, strict=True))
    return episode


def test_the_episode_is_sweworlds(episode):
    assert isinstance(episode, SweworldSandboxEnvironment)
    assert episode.task.instance_id == INSTANCE["instance_id"] and episode.backend == "real"
    assert episode.executor.workdir == "/testbed"
