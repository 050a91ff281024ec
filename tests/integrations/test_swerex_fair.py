"""A sweworld SWE-ReX runtime shares fairly and says nothing of its host (issue 50): a flood of requests
on one episode is refused with 429 while ``/is_alive`` answers, and an error reply names no host path
while swe-rex's own ``RemoteRuntime`` still re-raises the error. Real HTTP on 127.0.0.1, a real episode
of the real more-itertools instance."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sysconfig
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("swerex")

import aiohttp
from swerex.exceptions import DeploymentStartupError
from swerex.runtime.abstract import BashAction, CreateBashSessionRequest, ReadFileRequest
from tests.integrations.test_integrations_swerex import KEY, real, rex, run

import sweworld
from sweworld.integrations.admission import AdmissionConfig, Gate, Refused
from sweworld.integrations.episodes import EpisodeSpec
from sweworld.integrations.swerex import RexServer, ServerThread, create_app

FLOOD = 50
"""Requests at once on one episode: more than starlette's thread pool (40) had threads."""
HANG_GUARD = 120.0
"""Seconds before a server that answers nothing fails the test instead of hanging it (not a speed bound)."""


@contextlib.contextmanager
def serving(dataset: str, backend, instance_ids: list[str] | None = None):
    server = RexServer(EpisodeSpec(dataset=dataset, backend="real"), instance_ids=instance_ids, backend=backend,
                       command_timeout=300)
    with ServerThread(create_app(server, KEY)) as thread:
        yield server, thread.url


async def _post(http: aiohttp.ClientSession, url: str, body: dict) -> tuple[int, dict, dict]:
    async with http.post(url, json=body, headers={"X-API-Key": KEY}) as response:
        return response.status, dict(response.headers), await response.json()


@real
def test_a_flood_on_one_episode_is_refused_while_is_alive_answers(dataset, backend, task):
    with serving(dataset, backend, [task.instance_id]) as (server, url):
        rt = rex(url)
        run(rt.create_session(CreateBashSessionRequest(session="flooded")))
        busy = server.episode(task.instance_id).sessions["flooded"].busy
        busy.acquire()  # as a command that runs for long: every request on the session waits for it

        async def go():
            action = BashAction(command="echo hi", session="flooded").model_dump()
            async with aiohttp.ClientSession() as http:
                flood = [asyncio.create_task(_post(http, f"{url}/run_in_session", action)) for _ in range(FLOOD)]
                prompt = []
                for answer in asyncio.as_completed(flood, timeout=HANG_GUARD):  # the refusals come at once
                    prompt.append(await answer)
                    if len(prompt) == FLOOD - 10:
                        break
                alive = await rt.is_alive(timeout=HANG_GUARD)
                busy.release()
                rest = await asyncio.gather(*flood)
            return prompt, alive, rest

        try:
            prompt, alive, answers = run(go())
        finally:
            if busy.locked():
                busy.release()
    assert alive.is_alive, alive.message
    refused = [a for a in answers if a[0] == 429]
    assert len(refused) == FLOOD - 10 and all(a[0] == 429 for a in prompt)  # 2 running + 8 waiting were served
    assert [a[2]["output"] for a in answers if a[0] == 200] == ["hi\n"] * 10
    _, headers, body = refused[0]
    assert int(headers["Retry-After"]) >= 1
    assert body["refused"]["reason"] == "episode_queue_full" and body["refused"]["episode"] == task.instance_id
    assert body["refused"]["route"] == "run_in_session" and "retry after" in body["detail"]


def _raw(url: str, body: dict) -> tuple[int, str]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "X-API-Key": KEY})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@real
def test_an_error_reply_names_no_host_path(dataset, backend, task):
    source = str(Path(sweworld.__file__).resolve().parents[1])
    hidden = [source, sysconfig.get_paths()["purelib"], str(Path(dataset).parent)]
    with serving(dataset, backend) as (_, url):
        missing = {"path": "/tmp/no/such/file.txt"}
        status, body = _raw(f"{url}/{task.instance_id}/read_file", missing)
        unknown_status, unknown = _raw(f"{url}/nope__nope-1/create_session",
                                         CreateBashSessionRequest().model_dump())
        with pytest.raises(FileNotFoundError, match=r"/tmp/no/such/file\.txt"):  # swe-rex's client re-raises it
            run(rex(f"{url}/{task.instance_id}").read_file(ReadFileRequest(**missing)))
        with pytest.raises(DeploymentStartupError, match="nope__nope-1") as raised:
            run(rex(f"{url}/nope__nope-1").create_session(CreateBashSessionRequest()))
    assert status == unknown_status == 511
    sent = json.loads(body)["swerexception"]
    assert sent["class_path"] == "builtins.FileNotFoundError" and "/tmp/no/such/file.txt" in sent["message"]
    assert "sweworld.integrations.swerex_episode, line" in sent["traceback"]  # frames kept, by module
    assert Path(dataset).name in json.loads(unknown)["swerexception"]["message"]
    for path in hidden:
        assert path not in body and path not in unknown and path not in str(raised.value)


def test_a_saturated_server_refuses_with_503_and_keeps_room_for_other_episodes():
    """The gate alone (no sandbox): one episode holds at most its share of the pool; past the server's
    queue a request is refused with 503 at once, and a freed thread goes to the next waiter."""
    gate = Gate(AdmissionConfig(threads=3, episode_threads=2, episode_queue=1, queue=1))
    hold = threading.Event()

    async def go():
        held = [asyncio.create_task(gate.run("flooded", hold.wait)) for _ in range(2)]
        waiting = asyncio.create_task(gate.run("flooded", lambda: "third"))  # its episode's share is taken
        await asyncio.sleep(0)
        assert await gate.run("other", lambda: "other ran") == "other ran"  # the pool's last thread is free
        blocker = asyncio.create_task(gate.run("other", hold.wait))
        await asyncio.sleep(0)
        with pytest.raises(Refused) as refused:  # all 3 threads busy, the one place in the queue taken
            await gate.run("third-episode", lambda: "never")
        hold.set()
        return refused.value, await asyncio.gather(*held, waiting, blocker)

    refused, done = asyncio.run(go())
    gate.shutdown()
    assert refused.status == 503 and refused.reason == "server_saturated" and refused.retry_after >= 1
    assert done[2] == "third" and refused.facts["running"] == 3 and refused.facts["waiting"] == 1
