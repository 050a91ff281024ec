"""``sweworld.integrations.trl``'s environment as TRL's ``GRPOTrainer`` sees it (the same listing of
methods TRL makes, the schemas transformers renders) and its options; a hybrid rollout end to end."""

from __future__ import annotations

import inspect
import pickle

import pytest

from sweworld.agents.policies import OraclePolicy
from sweworld.core.errors import ConfigError, DatasetError
from sweworld.integrations import trl as sw
from sweworld.tools import default_tools

IID = "cachetools-5.5.0__swap_call_args__62d96ed1"


def test_the_tools_are_the_agents_own_in_trls_order_with_their_schemas():
    pytest.importorskip("transformers")
    listed = [name for name, _ in inspect.getmembers(sw.SWEWorldEnv, predicate=inspect.isfunction)
              if name not in ("reset", "get_reward") and not name.startswith("_")]  # as GRPOTrainer lists them
    schemas = {s["function"]["name"]: s["function"] for s in default_tools().schemas()}
    assert listed == [t["function"]["name"] for t in sw.tools()] == sorted(schemas)
    for tool in sw.tools():
        own = schemas[tool["function"]["name"]]
        assert tool["function"]["description"] == own["description"]
        assert set(tool["function"]["parameters"]["properties"]) == set(own["parameters"]["properties"])
        assert tool["function"]["parameters"].get("required", []) == own["parameters"]["required"]
    editor = next(t for t in sw.tools() if t["function"]["name"] == "str_replace_editor")
    assert editor["function"]["parameters"]["properties"]["command"]["enum"] == schemas["str_replace_editor"][
        "parameters"]["properties"]["command"]["enum"]


def test_a_wrong_option_is_one_config_error_and_an_unknown_row_one_dataset_error():
    with pytest.raises(ConfigError, match="log_dirr"):
        sw.environment_factory("default", backend="sim", log_dirr="x")
    with pytest.raises(ConfigError, match="backend_options"):
        sw.environment_factory("default", backend="sim", backend_options={"world": {"urlz": 1}}, instance_ids=[IID])
    with pytest.raises(DatasetError, match="not found: nope"):
        sw.environment_factory("default", instance_ids=["nope"])
    env = sw.environment_factory("default", backend="sim", instance_ids=[IID])()
    with pytest.raises(DatasetError, match="'other'"):
        env.reset(instance_id="other")


def test_the_factory_pickles_without_its_backend_and_builds_it_again():
    factory = sw.environment_factory("default", backend="sim", instance_ids=[IID])
    assert factory.backend.name == "sim"
    copy = pickle.loads(pickle.dumps(factory))
    assert copy._backend is None and list(copy.tasks) == [IID]
    assert copy.backend.name == "sim"


def test_the_dataset_holds_the_agents_prompts_and_the_ids():
    pytest.importorskip("datasets")
    rows = sw.dataset("default", instance_ids=[IID])
    assert rows.column_names == ["prompt", "instance_id"] and rows[0]["instance_id"] == IID
    system, user = rows[0]["prompt"]
    assert system["role"] == "system" and "/testbed" in system["content"] and "submit" in system["content"]
    assert user["role"] == "user" and "<issue>" in user["content"]


@pytest.mark.bwrap
@pytest.mark.network
@pytest.mark.slow
def test_a_hybrid_rollout_is_graded_with_the_routed_verdict(tmp_path):
    factory = sw.environment_factory("default", backend="hybrid", instance_ids=[IID], record=tmp_path / "r.jsonl",
                                     backend_options={"audit_rate": 1.0})
    env = factory()
    assert env.reset(instance_id=IID) is not None  # no prompt in the row: the problem statement comes back
    for name, arguments, _ in OraclePolicy().actions(factory.tasks[IID]):
        getattr(env, name)(**arguments)
    assert env.submit() == "submitted" and env.result is None  # graded by get_reward, not before
    reward = env.get_reward()
    assert env.result is not None and env.result.backend == "hybrid" and env.result.submitted
    assert 0.5 < reward <= 1.0 and env.result.resolved is True
    assert (tmp_path / "r.jsonl").read_text().count("\n") == 1
    assert "ended" in env.execute_bash("ls")  # after submit, no further call acts on the episode
