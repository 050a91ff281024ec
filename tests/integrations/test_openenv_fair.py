"""sweworld's OpenEnv server shares fairly and says nothing of its host (issue 50): OpenEnv's stateless
``POST /reset`` is bounded like its sessions (one more gets 503 with ``Retry-After``), and an error sent
to OpenEnv's own client names no host directory. Real HTTP and WebSocket on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openenv")

from openenv.core.generic_client import GenericEnvClient
from tests.integrations.test_integrations_openenv import WAIT, ServerThread, real

from sweworld.integrations.episodes import EpisodeSpec
from sweworld.integrations.openenv import OpenEnvServer, create_app

HANG_GUARD = 120.0
"""Seconds before a request that is never answered fails the test instead of hanging it (not a speed bound)."""


def _reset(url: str) -> tuple[int, Any, dict]:
    request = urllib.request.Request(f"{url}/reset", data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=HANG_GUARD) as response:
            return response.status, response.headers, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, json.load(exc)


@real
def test_stateless_resets_are_bounded_and_errors_name_no_host_dir(dataset, backend, task):
    server = OpenEnvServer(EpisodeSpec(dataset=dataset), backend=backend, max_sessions=1, eval_timeout=600)
    entered, go, task_of = threading.Event(), threading.Event(), server.task

    def slow_task(*args, **kwargs):  # a slow reset: it waits here until the test lets it go on
        entered.set()
        go.wait(HANG_GUARD)
        return task_of(*args, **kwargs)
    server.task = slow_task
    with ServerThread(create_app(server)) as url:
        first: list = []
        running = threading.Thread(target=lambda: first.append(_reset(url)))
        running.start()
        try:
            assert entered.wait(HANG_GUARD)
            second = _reset(url)  # the one place is taken
        finally:
            go.set()
            running.join()
        with GenericEnvClient(base_url=url, message_timeout_s=WAIT).sync() as env, \
                pytest.raises(Exception, match="nope__nope-1") as unknown:
            env.reset(instance_id="nope__nope-1")
    assert server.wait_closed(WAIT) and server.open_episodes() == []
    assert first[0][0] == 200 and first[0][2]["observation"]["instance_id"] == task.instance_id
    status, headers, body = second
    assert status == 503 and int(headers["Retry-After"]) >= 1 and body["refused"]["reason"] == "server_saturated"
    said = str(unknown.value)
    assert Path(dataset).name in said and str(Path(dataset).parent) not in said

