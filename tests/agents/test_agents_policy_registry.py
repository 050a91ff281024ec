"""The policies by name: ``POLICIES`` (a ``Registry``) and ``policy_factory``'s options."""

from __future__ import annotations

import pytest

from sweworld.agents.explorer import ExplorerPolicy
from sweworld.agents.policies import POLICIES, NoopPolicy, policy_factory
from sweworld.core.errors import ConfigError
from sweworld.core.protocols import Bindable, Policy


def test_every_policy_of_the_cli_is_registered_and_makes_policies():
    assert {"oracle", "oracle-tests", "noop", "replay", "openai", "perturb", "explorer", "explorer-oracle",
            "explorer-perturb"} <= set(POLICIES.names())
    assert policy_factory("noop") is NoopPolicy
    made = policy_factory("explorer-oracle", fix="oracle", seed=3)()
    assert isinstance(made, ExplorerPolicy) and isinstance(made, Policy) and isinstance(made, Bindable)


def test_an_option_a_policy_does_not_take_is_an_error_naming_it():
    with pytest.raises(ConfigError, match="the noop policy does not take 'seed'") as info:
        policy_factory("noop", seed=1)
    assert info.value.hint == "it takes no options"
    with pytest.raises(ConfigError, match="unknown policy 'nope'"):
        policy_factory("nope")
