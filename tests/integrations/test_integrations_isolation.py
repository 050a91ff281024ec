"""The isolation probes (``check_isolation``: no network, no host files or processes, host read-only,
limits, no planted secret and no cache path in the episode's /proc, no CAP_SYS_ADMIN, /proc/sys
read-only) through the seams whose own tests do not run them: gymnasium, mini-swe-agent, TRL's
environment class, SkyRL-Gym and an OpenEnv server with OpenEnv's own client. (inspect, SWE-ReX,
OpenHands and Harbor run them in their own test modules; verl drives the same episodes as TRL, from a
model's tool calls.) Each command goes through the seam's own call, as an agent's would."""

from __future__ import annotations

import pytest

from sweworld.testing.isolation import check_isolation

pytestmark = [pytest.mark.bwrap, pytest.mark.network]


def test_through_gymnasium(task, backend):
    from sweworld.integrations.gym import SWEEnv
    env = SWEEnv.make([task], backend=backend, step_limit=100)  # gymnasium.make, with its wrappers
    try:
        env.reset(options={"task": task})

        def run(command: str) -> tuple[int, str]:
            obs, _reward, _terminated, _truncated, info = env.step(
                {"tool": "execute_bash", "arguments": {"command": command}})
            return info.get("exit_code", 0), obs
        assert check_isolation(run) == []
    finally:
        env.close()


def test_through_mini_swe_agent(task, backend):
    pytest.importorskip("minisweagent")
    from sweworld.integrations.minisweagent import from_task
    with from_task(task, backend, {"timeout": 120}) as env:
        def run(command: str) -> tuple[int, str]:
            out = env.execute({"command": command})
            return out["returncode"], out["output"]
        assert check_isolation(run) == []


def test_through_trls_environment_class(task, backend):
    pytest.importorskip("trl")
    from sweworld.integrations import trl as sw
    env = sw.environment_factory([task], backend=backend)()
    env.reset(instance_id=task.instance_id)
    try:
        assert check_isolation(lambda command: (0, env.execute_bash(command))) == []
    finally:
        env.get_reward()


def test_through_skyrl_gym(task):
    pytest.importorskip("skyrl_gym")
    from sweworld.agents.actions import render_text_action
    from sweworld.rl import SWEWorldTextEnv
    env = SWEWorldTextEnv(env_config={"backend": "real", "max_turns": 100}, extras={"task": task.model_dump()})
    try:
        env.init([])

        def run(command: str) -> tuple[int, str]:
            output = env.step(render_text_action("execute_bash", {"command": command}, "probe"))
            return 0, "\n".join(o["content"] for o in output["observations"])
        assert check_isolation(run) == []
    finally:
        env.close()


def test_through_an_openenv_server_and_its_client(task, backend, tmp_path):
    pytest.importorskip("openenv")
    from openenv.core.generic_client import GenericEnvClient
    from test_integrations_openenv import ServerThread

    from sweworld.integrations.episodes import EpisodeSpec
    from sweworld.integrations.openenv import OpenEnvServer, create_app
    from sweworld.tasks import save_tasks
    dataset = str(save_tasks([task], tmp_path / "tasks.jsonl"))
    server = OpenEnvServer(EpisodeSpec(dataset=dataset), backend=backend, max_sessions=1, step_limit=100)
    with ServerThread(create_app(server)) as url, GenericEnvClient(base_url=url, message_timeout_s=600).sync() as env:
        env.reset(instance_id=task.instance_id)

        def run(command: str) -> tuple[int, str]:
            observation = env.step({"tool": "execute_bash", "arguments": {"command": command}}).observation
            return observation.get("exit_code", 0), observation["output"]
        assert check_isolation(run) == []
    assert server.wait_closed(600)
