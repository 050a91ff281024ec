"""``make_backend(BackendConfig)``: the configured backend with the run's command timeout, and a
``timeout`` given to ``open`` is the episode's command limit even with configured sandbox settings
(it was silently ignored with a ``sandbox_config``)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from sweworld.backends import BACKENDS, make_backend
from sweworld.backends import real as real_module
from sweworld.backends.real import RealBackend
from sweworld.core.config import RealBackendConfig, SandboxSettings, Timeouts
from sweworld.core.errors import ConfigError
from sweworld.core.types import Task
from sweworld.sandbox import SandboxConfig

TASK = Task(instance_id="org__repo-1", repo="org/repo", base_commit="0" * 40, patch="", problem_statement="bug")


class Builder:
    """Layers with no stand-ins and a plain test command: the episode needs no set-up."""

    def instance(self, task):
        return SimpleNamespace(services={}, env=SimpleNamespace(recipe=SimpleNamespace(test_cmd="pytest", python="3.11")))


@pytest.fixture
def opened(monkeypatch):
    configs: list[SandboxConfig] = []

    def episode_sandbox(layer, config, label="", wheels=None):
        configs.append(config)
        return object()

    monkeypatch.setattr(real_module, "episode_sandbox", episode_sandbox)
    return configs


def test_the_configured_real_backend_takes_the_runs_command_timeout(opened):
    config = RealBackendConfig(network=True, sandbox=SandboxSettings(isolation="none"))
    backend = make_backend(config, timeouts=Timeouts(command=42), builder=Builder())
    assert isinstance(backend, RealBackend) and backend.network and backend.command_timeout == 42
    backend.open(TASK)
    backend.open(TASK, timeout=5)
    assert [(c.timeout, c.isolation) for c in opened] == [(42, "none"), (5, "none")]


def test_open_without_sandbox_settings_has_no_cap_over_the_timeout_asked(opened):
    RealBackend(Builder()).open(TASK, timeout=1200)
    RealBackend(Builder()).open(TASK)
    assert [c.timeout for c in opened] == [1200, Timeouts().command]


def test_backends_by_name_are_a_registry():
    assert BACKENDS.names() == ["hybrid", "real", "sim"]
    assert isinstance(make_backend("real", builder=Builder()), RealBackend)
    with pytest.raises(ConfigError, match="unknown backend 'nope'"):
        make_backend("nope")


def test_sim_and_hybrid_by_name_without_a_world_are_the_embedded_world():
    """``make_backend("sim")`` as the CLI's ``--backend sim`` without ``--world-url``: the CPU models
    (it was a raw pydantic error: "urls: Field required")."""
    assert make_backend("sim").world.kind == "embedded"
    assert make_backend("hybrid").sim.world.kind == "embedded"
    with pytest.raises(ConfigError, match="cannot be built from \\['wrold'\\]"):
        make_backend("sim", wrold={})
