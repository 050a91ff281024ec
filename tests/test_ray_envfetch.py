"""On a real 3-node Ray cluster (``raycluster.ray_nodes``, each node with its own ``SWEWORLD_HOME``), a
node that lacks an environment another node built fetches it (``runs.envshare``) instead of
building it: node A builds the demo instance's environment and install layer through the Ray
runner's task body (``LocalCluster.on_node``: ``ray_runner.call``, which installs the source),
node B asks for the same instance and gets both by fetch (no build log on B, the same keys,
``fetched`` from A in the metadata), and a real sandbox episode on B imports the package from the
fetched layers."""

from __future__ import annotations

import json
import os
import sys

import pytest

from raycluster import demo_tasks, ray_nodes

pytestmark = [pytest.mark.ray, pytest.mark.bwrap, pytest.mark.network, pytest.mark.slow,
              pytest.mark.xdist_group("ray")]


TIMEOUT = 1200
"""Seconds one step on a node may take (a build from empty environment directories)."""


def prepared(task) -> dict:
    """The instance layer of ``task`` on this node (built, fetched or found) and its metadata."""
    from sweworld.envs import EnvBuilder
    layer = EnvBuilder().instance(task)
    return {"env": layer.env.key, "inst": layer.key, "home": os.environ["SWEWORLD_HOME"],
            "env_meta": json.loads((layer.env.path / "env.json").read_text()),
            "meta": json.loads((layer.path / "meta.json").read_text())}


def episode(task) -> tuple[int, str]:
    """A real episode of ``task`` on this node: the installed package imports at /testbed."""
    from sweworld.envs import EnvBuilder, episode_sandbox
    with episode_sandbox(EnvBuilder().instance(task), label="envfetch") as sandbox:
        result = sandbox.exec("cd /testbed && python -c 'import more_itertools, sys; "
                              "print(sys.prefix, more_itertools.__file__)'")
    return result.exit_code, result.output


def test_a_node_fetches_the_environment_and_layer_another_node_built(tmp_path, sweworld_home):
    task = demo_tasks()[0]
    with ray_nodes(tmp_path, sweworld_home, count=3, by_value=sys.modules[__name__]) as cluster:
        a, b = cluster.ids[1], cluster.ids[2]
        built = cluster.on_node(a, prepared, task, timeout=TIMEOUT)
        assert built["home"] == str(cluster.homes[1])
        assert "fetched" not in built["env_meta"] and "fetched" not in built["meta"]  # A built both
        got = cluster.on_node(b, prepared, task, timeout=TIMEOUT)
        assert got["home"] == str(cluster.homes[2])
        assert (got["env"], got["inst"]) == (built["env"], built["inst"])
        assert got["env_meta"]["key"] == built["env_meta"]["key"]
        assert got["env_meta"]["fetched"]["from"] == a and got["meta"]["fetched"]["from"] == a
        envs_b = cluster.homes[2] / "envs"
        assert (envs_b / got["env"] / "venv").is_dir()
        assert not (envs_b / "logs" / f"{got['env']}.log").exists()  # no environment build on B
        assert not (envs_b / got["env"] / "logs" / f"{got['inst']}.log").exists()  # no install on B
        assert not list(envs_b.rglob(".*.fetching")) and not list(envs_b.rglob(".*.building"))
        code, output = cluster.on_node(b, episode, task, timeout=TIMEOUT)
        assert code == 0 and output.split() == ["/sweworld/venv", "/testbed/more_itertools/__init__.py"], output
        assert not (cluster.homes[0] / "envs" / got["env"]).exists()  # node 0 was never asked
