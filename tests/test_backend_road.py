"""One road to a backend: ``make_backend`` takes a backend, a name, a mapping or a config, through the
one registry; each backend class owns its config; ``shared`` is the one process cache."""

from __future__ import annotations

import pytest

from sweworld.backends import BACKENDS, make_backend, shared
from sweworld.backends.real import RealBackend
from sweworld.core.config import BACKEND_CONFIGS, RealBackendConfig, WorldModelConfig, config_class
from sweworld.core.errors import ConfigError


def test_each_backend_class_owns_its_config():
    for name, config in BACKEND_CONFIGS.items():
        assert BACKENDS.get(name).Config is config and config_class(name) is config


def test_a_backend_a_name_a_mapping_and_a_config_take_the_same_road(tmp_path):
    built = make_backend({"kind": "real", "network": True, "repos_dir": str(tmp_path)})
    assert isinstance(built, RealBackend) and built.network is True
    assert make_backend(built) is built
    assert isinstance(make_backend(RealBackendConfig(wheels=["flake8"])), RealBackend)
    assert make_backend(RealBackendConfig(wheels=["flake8"])).wheels == ["flake8"]
    assert isinstance(make_backend("real", network=True), RealBackend)
    with pytest.raises(ConfigError, match="networkk"):
        make_backend({"kind": "real", "networkk": True})
    with pytest.raises(ConfigError, match="real, sim"):
        make_backend({"kind": "nope"})
    with pytest.raises(TypeError):
        make_backend(3)


def test_one_backend_per_configuration_in_a_process(tmp_path):
    first = shared({"kind": "real", "repos_dir": str(tmp_path)})
    assert shared(RealBackendConfig(repos_dir=tmp_path)) is first
    assert shared({"kind": "real", "repos_dir": str(tmp_path), "network": True}) is not first


def test_the_world_kind_default_is_the_config_s_own():
    assert WorldModelConfig().kind == "embedded" and WorldModelConfig().kind_defaulted
    assert WorldModelConfig(urls=["http://x/v1"]).kind == "openai"
    assert WorldModelConfig(kind="embedded", urls=["http://x/v1"]).kind_defaulted is False
    assert "kind_defaulted" not in WorldModelConfig().model_dump()
