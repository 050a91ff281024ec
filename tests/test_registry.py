"""The one registry: dotted targets loaded on first use, entry points for third-party entries."""

from __future__ import annotations

import sys

import pytest

from sweworld.core.errors import ConfigError
from sweworld.core.registry import Registry, load


def test_a_target_loads_on_first_use_and_unknown_names_list_the_known_ones():
    reg = Registry("widget", {"path": "os.path:join", "direct": len}, group="sweworld.widgets")
    assert reg.names() == ["direct", "path"]
    assert reg.get("path") is load("os.path:join")
    assert reg.create("direct", [1, 2]) == 2
    with pytest.raises(ConfigError, match="unknown widget 'nope'") as info:
        reg.get("nope")
    assert "direct, path" in info.value.hint


def test_register_refuses_a_taken_name_unless_replacing():
    reg = Registry("widget", {"a": "os:getcwd"}, group="sweworld.widgets")
    with pytest.raises(ConfigError, match="already registered"):
        reg.register("a", "os:getpid")
    reg.register("a", "os:getpid", replace=True)
    assert reg.get("a") is load("os:getpid")


@pytest.mark.parametrize("target", ["os.getcwd", "no_such_module_x:f", "os:no_such_attr"])
def test_a_bad_target_is_one_config_error(target):
    with pytest.raises(ConfigError, match=target.split(":")[0]):
        load(target)


def test_entry_points_of_the_kind_s_group_are_registered(tmp_path, monkeypatch):
    dist = tmp_path / "sweworld_plugin_x-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: sweworld-plugin-x\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[sweworld.widgets]\nthird = json:dumps\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    reg = Registry("widget", {"own": "json:loads"}, group="sweworld.widgets")
    assert reg.names() == ["own", "third"]
    assert reg.create("third", [1]) == "[1]"
