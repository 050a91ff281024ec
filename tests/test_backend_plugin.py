"""One road to a backend: a backend a package registers through the ``sweworld.backends`` entry point
is named, configured and built as the built-ins are: from a YAML config file, from ``--backend``, and
from a framework seam's spec, each opening a real episode that carries the plugin's own option.

The plugin is a real installed distribution (a ``.dist-info`` with its ``entry_points.txt`` on the
path of a fresh interpreter), not a registration in code."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from raycluster import FIXED

pytestmark = [pytest.mark.bwrap, pytest.mark.network]

PLUGIN = '''
from typing import Literal

from sweworld.backends.real import RealBackend
from sweworld.core.config import RealBackendConfig
from sweworld.sandbox import SandboxConfig


class TaggedConfig(RealBackendConfig):
    """The real backend, with a tag every episode sees as $SWEWORLD_TAG."""

    kind: Literal["tagged"] = "tagged"
    tag: str = "plain"


class TaggedBackend(RealBackend):
    name = "tagged"
    Config = TaggedConfig

    @classmethod
    def from_config(cls, config, *, timeouts, builder=None):
        backend = super().from_config(config, timeouts=timeouts, builder=builder)
        backend.sandbox_config = SandboxConfig(env={"SWEWORLD_TAG": config.tag})
        return backend
'''

SEAM = f'''
from sweworld.integrations.episodes import EpisodeSpec, backend_for, load_task, resolve_backend
spec = EpisodeSpec(dataset="demo", backend="tagged", backend_options={{"tag": "from-a-seam"}})
backend = backend_for(spec)
assert backend is resolve_backend("tagged", backend_options={{"tag": "from-a-seam"}}, dataset="demo")
with backend.open(load_task("{FIXED}", "demo")) as episode:
    print(type(backend).__name__, episode.run("echo $SWEWORLD_TAG").output.strip())
'''

YAML = f'''
import sys
from sweworld.backends import make_backend
from sweworld.core.config import RolloutConfig, load
from sweworld.integrations.episodes import load_task
config = load(RolloutConfig, sys.argv[1])
with make_backend(config.backend).open(load_task("{FIXED}", "demo")) as episode:
    print(type(config.backend).__name__, episode.run("echo $SWEWORLD_TAG").output.strip())
'''


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("plugin")
    (root / "sweworld_tagged").mkdir()
    (root / "sweworld_tagged" / "__init__.py").write_text(PLUGIN)
    info = root / "sweworld_tagged-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sweworld-tagged\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[sweworld.backends]\ntagged = sweworld_tagged:TaggedBackend\n")
    return root


def python(plugin_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_path), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=900)


def test_a_registered_backend_is_configured_from_a_seams_spec(plugin_path):
    done = python(plugin_path, "-c", SEAM)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["TaggedBackend", "from-a-seam"]


def test_a_registered_backend_is_configured_from_a_yaml_file(plugin_path, tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text(textwrap.dedent("""\
        dataset: demo
        backend:
          kind: tagged
          tag: from-yaml
        """))
    done = python(plugin_path, "-c", YAML, str(config))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["TaggedConfig", "from-yaml"]
    config.write_text("dataset: demo\nbackend:\n  kind: tagged\n  tagg: x\n")
    wrong = python(plugin_path, "-c", YAML, str(config))
    assert wrong.returncode != 0 and "tagg" in wrong.stderr and "run.yaml" in wrong.stderr


def test_a_registered_backend_is_named_by_backend_on_the_command_line(plugin_path):
    done = python(plugin_path, "-m", "sweworld.cli.app", "exec", "--dataset", "demo", "--instance", FIXED,
                  "--backend", "tagged", "--", "echo $SWEWORLD_TAG")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "plain"  # the plugin's own default: --backend builds its Config
    unknown = python(plugin_path, "-m", "sweworld.cli.app", "exec", "--dataset", "demo", "--instance", FIXED,
                     "--backend", "taged", "--", "true")
    assert unknown.returncode == 2 and "tagged" in unknown.stdout + unknown.stderr  # the choices name it
