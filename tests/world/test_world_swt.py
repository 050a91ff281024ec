"""SWT through a real local OpenAI-compatible server with scripted replies, in both prompt styles;
the world-model registry, round-robin, retries and the response cache."""

from __future__ import annotations

import pytest
from world_tasks import SCRIPT, calc_task, swt_reply, world_model

from chatserver import ChatServer
from sweworld.core.errors import ConfigError
from sweworld.world.swt import SIM_FAILURE_EXIT_CODE, SWT, SimExecResult, SWTConfig
from sweworld.world.worldmodels import OpenAIWorldModel, WorldModel, create_model, model_names, register_model

MARK = {"sweworld": "## Command (run in", "swe-world": "### 4. Command to Simulate"}


@pytest.mark.parametrize("style", ["sweworld", "swe-world"])
def test_predict_sends_the_rendered_context_and_returns_an_exec_result(tmp_path, style):
    executor, task = calc_task(tmp_path)
    reply = "```json\n" + swt_reply("-1\n", "warning: deprecated\n", 0) + "\n```"
    with ChatServer([reply]) as server:
        swt = SWT(world_model(server.url), SWTConfig(style=style))
        result = swt.predict(task, "python reproduce.py", executor, [("ls", "reproduce.py")])
        context = swt.context(task, "python reproduce.py", executor, [("ls", "reproduce.py")])
    assert isinstance(result, SimExecResult) and result.simulated and not result.sim_failure
    assert (result.output, result.exit_code, result.sim_attempts) == ("-1\nwarning: deprecated\n", 0, 1)
    (request,) = server.requests
    assert request["messages"] == swt.messages(context)  # inference renders what training rows will
    user = request["messages"][1]["content"]
    assert MARK[style] in user and SCRIPT in user and "python reproduce.py" in user
    assert request["temperature"] == 0.0 and task.patch not in user  # not privileged by default


@pytest.mark.parametrize("style", ["sweworld", "swe-world"])
def test_malformed_replies_are_retried_then_become_a_simulation_failure(tmp_path, style):
    executor, task = calc_task(tmp_path)
    malformed = ["the script prints -1", '{"stdout": "-1\\n", "exit_code": 0}',
                 '{"stdout": "-1\\n", "stderr": "", "exit_code": "zero"}']
    with ChatServer(malformed) as server:
        result = SWT(world_model(server.url), SWTConfig(style=style)).predict(task, "python reproduce.py", executor)
    assert result.sim_failure and result.exit_code == SIM_FAILURE_EXIT_CODE and result.sim_attempts == 3
    assert "exit_code must be an integer" in result.sim_error and "could not produce" in result.output
    assert len(server.requests) == 3
    assert [r["temperature"] for r in server.requests] == [0.0, 0.7, 0.7]  # retries sample


def test_a_valid_retry_wins(tmp_path):
    executor, task = calc_task(tmp_path)
    with ChatServer(["not json at all", swt_reply("", "Traceback ...\nNameError: x\n", 1)]) as server:
        result = SWT(world_model(server.url)).predict(task, "python -c 'x'", executor)
    assert (result.sim_failure, result.exit_code, result.output, result.sim_attempts) == (
        False, 1, "Traceback ...\nNameError: x\n", 2)


def test_http_errors_are_retried_by_the_client(tmp_path):
    executor, task = calc_task(tmp_path)
    with ChatServer([429, 503, swt_reply("ok\n")]) as server:
        result = SWT(world_model(server.url)).predict(task, "python reproduce.py", executor)
    assert (result.output, len(server.requests)) == ("ok\n", 3)


def test_two_endpoints_are_used_round_robin(tmp_path):
    executor, task = calc_task(tmp_path)
    with ChatServer(default=swt_reply("a\n")) as one, ChatServer(default=swt_reply("b\n")) as two:
        swt = SWT(world_model(one.url, two.url))
        outputs = [swt.predict(task, f"python -c 'print({i})'", executor).output for i in range(4)]
    assert outputs == ["a\n", "b\n", "a\n", "b\n"]
    assert (len(one.requests), len(two.requests)) == (2, 2)


def test_the_cache_answers_a_repeated_prompt_without_a_request(tmp_path):
    executor, task = calc_task(tmp_path)
    cache = tmp_path / "cache"
    with ChatServer(default=swt_reply("-1\n")) as one, ChatServer(default=swt_reply("other\n")) as two:
        first = SWT(world_model(one.url, cache_dir=cache))
        again = SWT(world_model(two.url, cache_dir=cache))  # a new process, another URL: same prompt, same key
        results = [first.predict(task, "python reproduce.py", executor),
                   first.predict(task, "python reproduce.py", executor),
                   again.predict(task, "python reproduce.py", executor)]
    assert [r.output for r in results] == ["-1\n"] * 3
    assert (len(one.requests), len(two.requests)) == (1, 0)
    assert (first.model.calls, first.model.cache_hits, again.model.cache_hits) == (1, 1, 1)


def test_an_invalid_cached_reply_is_not_served_to_the_retry(tmp_path):
    executor, task = calc_task(tmp_path)
    cache = tmp_path / "cache"
    with ChatServer(["garbage", swt_reply("fixed\n")]) as server:
        swt = SWT(world_model(server.url, cache_dir=cache))
        assert swt.predict(task, "python reproduce.py", executor).output == "fixed\n"
        assert swt.predict(task, "python reproduce.py", executor).output == "fixed\n"  # both from the cache
    assert len(server.requests) == 2


def test_registry_builds_models_by_name(tmp_path):
    with ChatServer(default=swt_reply("x\n")) as server:
        model = create_model("openai", {"urls": [server.url], "model": "swt", "cache": False})
        assert isinstance(model, OpenAIWorldModel) and isinstance(model, WorldModel)
        assert model.complete([{"role": "user", "content": "hi"}], 2) == [swt_reply("x\n")] * 2
    assert {"openai", "embedded"} <= set(model_names())
    with pytest.raises(ConfigError, match="unknown world model"):
        create_model("nope", {})
    with pytest.raises(ConfigError, match="already registered"):
        register_model("openai", lambda config: model)


def test_an_option_a_world_model_does_not_take_is_an_error_naming_it():
    with pytest.raises(ConfigError, match="openai world model does not take 'url'") as info:
        create_model("openai", {"url": "http://h/v1", "model": "swt"})
    assert "urls" in info.value.hint
    with pytest.raises(ConfigError, match="embedded world model does not take 'trace'"):
        create_model("embedded", {"trace": "t.jsonl"})


def test_a_registered_factory_is_found_by_name_and_lazily_by_path():
    class Echo:
        def complete(self, messages, n=1, *, attempt=0):
            return [swt_reply(messages[-1]["content"][:3])] * n

    register_model("test-echo", lambda config: Echo(), replace=True)
    register_model("test-lazy", "sweworld.world.worldmodels:_openai", replace=True)
    assert create_model("test-echo").complete([{"role": "user", "content": "abcdef"}]) == [swt_reply("abc")]
    assert isinstance(create_model("test-lazy", {"urls": ["http://x/v1"], "model": "m"}), OpenAIWorldModel)
