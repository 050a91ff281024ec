"""OpenEnv's own client (``GenericEnvClient`` and its ``.sync()`` wrapper, over WebSocket on
127.0.0.1) against ``sweworld openenv serve``'s app (OpenEnv's ``create_fastapi_app`` over
``SWEWorldEnvironment``, uvicorn on a thread), over episodes of a real instance (more-itertools from
PyPI, its real environment and tests) on the real backend and the sim backend."""

from __future__ import annotations

import contextlib
import json
import threading
import time
import urllib.error
import urllib.request

import pytest

pytest.importorskip("openenv")

from openenv.core.env_server.types import Action, Observation, State
from openenv.core.generic_client import GenericEnvClient
from typer.testing import CliRunner
from websockets.exceptions import ConnectionClosed

from infra_failure import DIE, dies_on_marker
from realtasks import FIRST_BUG, MODULE
from sweworld.cli.app import app as cli
from sweworld.core.errors import ConfigError
from sweworld.integrations.episodes import EpisodeSpec
from sweworld.integrations.openenv import OpenEnvServer, SWEWorldEnvironment, create_app
from sweworld.integrations.openenv_models import SWEAction, SWEObservation, SWEState
from sweworld.tasks import save_tasks

WAIT = 600  # seconds a closing session may take on the server (a safety net, not a bound under test)


def real(test):
    """A test that opens real episodes: bubblewrap, and PyPI for the instance's first build."""
    return pytest.mark.network(pytest.mark.bwrap(test))


class ServerThread:
    """uvicorn serving an app on a thread of this process: ``url`` once it listens (a free port)."""

    def __init__(self, app):
        import uvicorn
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        while not self.server.started:
            assert self.thread.is_alive(), "the server thread stopped before it listened"
            time.sleep(0.01)
        return f"http://127.0.0.1:{self.server.servers[0].sockets[0].getsockname()[1]}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join()


@pytest.fixture(scope="module")
def dataset(task, tmp_path_factory) -> str:
    return str(save_tasks([task], tmp_path_factory.mktemp("openenv") / "tasks.jsonl"))


@contextlib.contextmanager
def serving(server: OpenEnvServer):
    with ServerThread(create_app(server)) as url:
        yield url
    assert server.wait_closed(WAIT) and server.open_episodes() == []


@pytest.fixture(scope="module")
def real_server(dataset, backend):
    server = OpenEnvServer(EpisodeSpec(dataset=dataset), backend=backend, max_sessions=2, eval_timeout=600)
    with serving(server) as url:
        yield server, url


@contextlib.contextmanager
def session(url: str, server: OpenEnvServer | None = None):
    """One OpenEnv session (OpenEnv's generic client, its sync wrapper), closed on the way out; with
    ``server``, wait until the server closed its episode too."""
    client = GenericEnvClient(base_url=url, message_timeout_s=1800).sync()
    try:
        with client:
            yield client
    finally:
        if server is not None:
            assert server.wait_closed(WAIT)


def bash(client, command: str):
    return client.step({"tool": "execute_bash", "arguments": {"command": command}})


def gold_by_heredoc(task) -> str:
    patch = task.patch if task.patch.endswith("\n") else task.patch + "\n"
    return f"cd /testbed && git apply <<'SWEWORLD_PATCH'\n{patch}SWEWORLD_PATCH"


@real
def test_the_gold_patch_is_rewarded_one(real_server, task):
    server, url = real_server
    with session(url, server) as env:
        first = env.reset(instance_id=task.instance_id, episode_id="gold-1")
        obs = first.observation
        assert obs["output"] == task.problem_statement and first.reward is None and not first.done
        assert obs["instance_id"] == task.instance_id and obs["workdir"] == "/testbed" and obs["backend"] == "real"
        assert {t["function"]["name"] for t in obs["tools"]} == {"execute_bash", "str_replace_editor", "search", "submit"}
        assert env.state() == {"episode_id": "gold-1", "step_count": 0, "instance_id": task.instance_id,
                               "backend": "real", "done": False}
        applied = bash(env, gold_by_heredoc(task))
        assert applied.observation["exit_code"] == 0 and applied.reward == 0.0 and not applied.done, applied
        done = env.step({"tool": "submit", "arguments": {}})
        assert done.done and done.reward == 1.0
        assert done.observation["report"]["resolved"] is True and done.observation["error"] is None
        assert "+    if default is _marker:" in done.observation["patch"]
        assert env.state()["step_count"] == 2 and env.state()["done"] is True
        assert server.open_episodes() == []  # submitting closed the episode
        after = bash(env, "true")
        assert after.done and after.reward is None and "call reset" in after.observation["error"]


@real
def test_an_empty_patch_is_rewarded_zero(real_server, task):
    server, url = real_server
    with session(url, server) as env:
        assert env.reset(seed=0).observation["instance_id"] == task.instance_id
        done = env.step({"tool": "submit", "arguments": {}})
        assert done.done and done.reward == 0.0
        assert done.observation["patch"] == "" and done.observation["report"]["resolved"] is False


@real
def test_two_sessions_stay_apart_and_closing_leaves_no_episode_open(real_server, task):
    server, url = real_server
    with session(url) as one, session(url) as two:
        one.reset(instance_id=task.instance_id)
        two.reset(instance_id=task.instance_id)
        assert one.state()["episode_id"] != two.state()["episode_id"]
        assert sorted(e["instance_id"] for e in server.open_episodes()) == [task.instance_id] * 2
        assert bash(one, "echo mine > /testbed/only_one.txt && cd /tmp && export MARK=one").observation["exit_code"] == 0
        seen = bash(two, "pwd; echo \"[$MARK]\"; cat /testbed/only_one.txt").observation
        assert seen["exit_code"] == 1 and seen["output"].startswith("/testbed\n[]\n"), seen
        assert bash(one, "pwd; echo $MARK; cat /testbed/only_one.txt").observation["output"].startswith("/tmp\none\nmine\n")
        with session(url) as third, pytest.raises((RuntimeError, ConnectionClosed)) as refused:
            third.reset()  # max_sessions=2: OpenEnv's server sends CAPACITY_REACHED and closes the socket
        # the client reads the error, or (when the close comes first, under load) finds the socket closed
        assert isinstance(refused.value, ConnectionClosed) or "CAPACITY_REACHED" in str(refused.value)
        assert len(server.open_episodes()) == 2
        assert one.state()["step_count"] == 2 and two.state()["step_count"] == 1
    assert server.wait_closed(WAIT) and server.open_episodes() == []


@real
def test_bad_actions_are_observations_with_an_error(real_server, task):
    server, url = real_server
    with session(url, server) as env:
        env.reset(instance_id=task.instance_id)
        unknown = env.step({"tool": "rm_rf", "arguments": {}})
        assert not unknown.done and "Unknown tool 'rm_rf'" in unknown.observation["error"]
        missing = env.step({"tool": "execute_bash", "arguments": {}})
        assert "Missing required argument" in missing.observation["error"] and not missing.done
        garbled = env.step({"tool": "execute_bash", "arguments": "{not json"})
        assert "not valid JSON" in garbled.observation["error"]
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):  # not an action at all: OpenEnv refuses it
            env.step({"command": "ls"})
        with pytest.raises(RuntimeError, match="nope__nope-1"):
            env.reset(instance_id="nope__nope-1")
        with pytest.raises(RuntimeError, match="unknown argument"):
            env.reset(instance_id=task.instance_id, difficulty="hard")
        call = env.step({"id": "call_1", "type": "function",  # an OpenAI tool call, as the model wrote it
                         "function": {"name": "execute_bash", "arguments": json.dumps({"command": "ls more_itertools"})}})
        assert call.observation["error"] is None and "more.py" in call.observation["output"]
        assert env.state()["step_count"] == 4  # the refused payload and resets were no steps


@real
def test_an_infrastructure_failure_ends_the_episode_and_the_server_goes_on(real_server, task):
    server, url = real_server
    with session(url, server) as env:
        env.reset(instance_id=task.instance_id)
        with dies_on_marker():
            died = bash(env, DIE)
        assert died.done and died.reward == 0.0 and "infrastructure failure" in died.observation["error"], died
        assert server.open_episodes() == []
        env.reset(instance_id=task.instance_id)
        assert bash(env, "echo alive again").observation["output"].startswith("alive again\n")


@real
def test_the_step_limit_truncates(dataset, backend, task):
    server = OpenEnvServer(EpisodeSpec(dataset=dataset), backend=backend, step_limit=2)
    with serving(server) as url, session(url, server) as env:
        env.reset()
        assert not bash(env, "echo one").done
        last = bash(env, "echo two > /testbed/new.txt")
        assert last.done and last.reward == 0.0 and last.observation["truncated"] is True
        assert "new.txt" in last.observation["patch"] and last.observation["report"] is None


@real
def test_the_sim_backend_rewards_a_probability(dataset, task):
    server = OpenEnvServer({"dataset": dataset, "backend": "sim"})
    with serving(server) as url, session(url, server) as env:
        obs = env.reset(instance_id=task.instance_id).observation
        assert obs["backend"] == "sim" and obs["output"] == task.problem_statement
        fixed = env.step({"tool": "str_replace_editor", "arguments": {
            "command": "str_replace", "path": f"/testbed/{MODULE}", "old_str": FIRST_BUG[1], "new_str": FIRST_BUG[0]}})
        assert fixed.observation["error"] is None, fixed
        done = env.step({"tool": "submit", "arguments": {}})
        report = done.observation["report"]
        assert done.done and 0.0 <= done.reward <= 1.0 and done.reward == report["sim_probability"]
        assert "+    if default is _marker:" in done.observation["patch"]
        env.reset(instance_id=task.instance_id)
        empty = env.step({"tool": "submit", "arguments": {}})
        assert empty.done and empty.observation["patch"] == "" and empty.reward < done.reward


@real
def test_stopping_the_server_closes_the_episodes_of_open_sessions(dataset, backend, task):
    server = OpenEnvServer(EpisodeSpec(dataset=dataset), backend=backend)
    with contextlib.ExitStack() as clients:
        with serving(server) as url:  # serving() asserts on the way out that no episode is left open
            env = clients.enter_context(GenericEnvClient(base_url=url, message_timeout_s=1800).sync())
            env.reset(instance_id=task.instance_id)
            assert bash(env, "echo left open").observation["exit_code"] == 0
            assert [e["instance_id"] for e in server.open_episodes()] == [task.instance_id]
        assert server.open_episodes() == []  # the client has not closed its session: the server did


@real
def test_openenvs_stateless_http_reset_opens_and_closes_an_episode(real_server, task):
    server, url = real_server
    request = urllib.request.Request(f"{url}/reset", data=json.dumps({"instance_id": task.instance_id}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request) as response:
        answer = json.load(response)
    assert answer["observation"]["output"] == task.problem_statement and answer["done"] is False
    assert server.open_episodes() == []


@real
def test_schema_and_metadata_are_sweworlds(real_server):
    _, url = real_server
    with urllib.request.urlopen(f"{url}/schema") as response:
        schema = json.load(response)
    assert {"tool", "arguments"} <= set(schema["action"]["properties"])
    assert {"output", "patch", "report", "error", "tools"} <= set(schema["observation"]["properties"])
    with urllib.request.urlopen(f"{url}/metadata") as response:
        assert json.load(response)["name"] == "sweworld"


def test_the_models_are_openenvs():
    assert issubclass(SWEAction, Action) and issubclass(SWEObservation, Observation) and issubclass(SWEState, State)
    assert SWEWorldEnvironment.SUPPORTS_CONCURRENT_SESSIONS is True
    call = SWEAction.model_validate({"type": "function", "id": "c", "function": {"name": "submit", "arguments": None}})
    assert (call.tool, call.arguments) == ("submit", {})
    assert SWEAction.model_validate({"name": "search", "arguments": "{}"}).tool == "search"


def test_wrong_options_are_one_config_error():
    with pytest.raises(ConfigError, match=r"world\.urlz"):
        OpenEnvServer({"backend": "sim", "backend_options": {"world": {"urlz": []}}})
    with pytest.raises(ConfigError, match="backend"):
        OpenEnvServer({"backend": "docker"})
    with pytest.raises(ConfigError, match="datset"):
        OpenEnvServer({"datset": "lite"})


def test_serve_refuses_an_unknown_instance_before_listening():
    result = CliRunner().invoke(cli, ["openenv", "serve", "--dataset", "lite", "--backend", "sim",
                                      "--instance-ids", "nope__nope-1"])
    assert result.exit_code == 2
    assert "nope__nope-1" in result.output and "lite" in result.output


@real
def test_a_key_in_the_url_path_lets_openenv_clients_in_and_no_one_else(dataset, backend, task):
    from sweworld.integrations.keyed import KeyedPath
    server = OpenEnvServer(EpisodeSpec(dataset=dataset), backend=backend, max_sessions=1, eval_timeout=600)
    with ServerThread(KeyedPath(create_app(server), "s3cret-key")) as url:
        with session(f"{url}/k/s3cret-key", server) as env:  # OpenEnv's own client, unchanged
            env.reset(instance_id=task.instance_id)
            assert bash(env, "echo keyed").observation["output"].startswith("keyed\n")
        for wrong in ("", "/k/wrong-key", "/k/s3cret-ke", "/k/s3cret-keyX"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(f"{url}{wrong}/health", timeout=30)
            assert refused.value.code == 401 and b"key" in refused.value.read()
            with pytest.raises((ConnectionError, ConnectionClosed, OSError)), \
                    GenericEnvClient(base_url=f"{url}{wrong}", message_timeout_s=30).sync() as intruder:
                intruder.reset(instance_id=task.instance_id)
        assert urllib.request.urlopen(f"{url}/k/s3cret-key/health", timeout=30).status == 200
    assert server.wait_closed(WAIT) and server.open_episodes() == []


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "example.invalid"])
def test_serving_beyond_loopback_without_a_key_is_refused(host, dataset):
    result = CliRunner().invoke(cli, ["openenv", "serve", "--host", host, "--dataset", dataset], env={"SWEWORLD_API_KEY": ""})
    assert result.exit_code == 2 and "--api-key" in result.output and "127.0.0.1" in result.output, result.output


def test_loopback_names_this_machine_only():
    from sweworld.integrations.keyed import loopback
    assert loopback("127.0.0.1") and loopback("localhost") and loopback("::1") and loopback("127.0.0.2")
    assert not loopback("0.0.0.0") and not loopback("::") and not loopback("example.invalid")
