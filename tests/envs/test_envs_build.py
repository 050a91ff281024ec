"""Real environment builds: the six 1.16.0 sdist from PyPI, built once inside the sandbox, used by
isolated copy-on-write episodes that run its real test suite.

Most tests share the persistent test cache (``~/.cache/sweworld-test``), where the smoke
environments are normally built already. Tests that must see a *cold* build (the file lock, ``rm``)
use a private ``SWEWORLD_HOME`` in tmp_path that shares only the repos and package caches.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import threading
from collections import Counter
from pathlib import Path
from typing import ClassVar

import pytest

import sweworld.datasets
from sweworld.core.errors import EnvBuildError
from sweworld.envs import EnvBuilder, episode_sandbox, list_envs, remove_env
from sweworld.envs.store import envs_root, read_meta
from sweworld.repos import RepoStore
from sweworld.tasks import load_tasks

pytestmark = [pytest.mark.bwrap, pytest.mark.network]

SIX_ID = "benjaminp__six-1.16.0"
SUITE = "python -m pytest -q -p no:cacheprovider -rf test_six.py"
MISSING_PKG = "this-package-does-not-exist-sweworld==0.0.1"


def smoke_row(instance_id: str = SIX_ID) -> dict:
    """The six row of the embedded smoke dataset, as a plain dict."""
    for line in sweworld.datasets.path_of("demo").read_text().splitlines():
        row = json.loads(line)
        if row["instance_id"] == instance_id:
            return row
    raise AssertionError(f"{instance_id} is not in the smoke dataset")


def write_tasks(path: Path, rows: list[dict]):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return load_tasks(path)


def tree_digest(*roots: Path) -> str:
    """Names, modes, sizes, mtimes and contents of every entry under ``roots``."""
    h = hashlib.sha256()
    for root in roots:
        h.update(f"<{root}>".encode())
        if root.is_file():
            h.update(root.read_bytes())
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(dirnames + filenames):
                p = os.path.join(dirpath, name)
                st = os.lstat(p)
                h.update(f"{os.path.relpath(p, root)}\0{st.st_mode}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
                if stat.S_ISREG(st.st_mode):
                    with open(p, "rb") as handle:
                        h.update(handle.read())
                elif stat.S_ISLNK(st.st_mode):
                    h.update(os.readlink(p).encode())
    return h.hexdigest()


@pytest.fixture(scope="module")
def six_task():
    return load_tasks(sweworld.datasets.path_of("demo")).by_id(SIX_ID)


@pytest.fixture(scope="module")
def six_layer(six_task):
    return EnvBuilder().instance(six_task)


@pytest.fixture
def fresh_home(tmp_path, monkeypatch):
    """A private, empty environment cache; repos and the uv/pip download caches are shared."""
    shared = Path(os.environ["SWEWORLD_HOME"])
    home = tmp_path / "home"
    home.mkdir()
    (shared / "cache").mkdir(exist_ok=True)
    (home / "cache").symlink_to(shared / "cache")
    monkeypatch.setenv("SWEWORLD_HOME", str(home))
    return RepoStore(root=shared / "repos")


class CountingBuilder(EnvBuilder):
    """A real EnvBuilder that counts how many builds it actually ran (shared across instances)."""

    calls: ClassVar[Counter] = Counter()
    _mu: ClassVar[threading.Lock] = threading.Lock()

    def _build_env(self, *args, **kwargs):
        with self._mu:
            self.calls["env"] += 1
        return super()._build_env(*args, **kwargs)

    def _build_instance(self, *args, **kwargs):
        with self._mu:
            self.calls["instance"] += 1
        return super()._build_instance(*args, **kwargs)


# -- episodes over the real six environment --------------------------------------------------------

@pytest.mark.slow
def test_two_episodes_run_the_real_test_suite(six_layer):
    assert six_layer.env.venv == six_layer.env.path / "venv"
    assert (six_layer.env.path / "env.json").is_file() and (six_layer.path / "meta.json").is_file()
    with episode_sandbox(six_layer, label="t-a") as a, episode_sandbox(six_layer, label="t-b") as b:
        assert a.episode_dir != b.episode_dir
        for sb in (a, b):
            result = sb.run(SUITE, timeout=600)
            counts = re.search(r"(\d+) passed", result.output)
            assert counts, result.output[-3000:]
            assert int(counts.group(1)) >= 150, result.output[-3000:]
            failed = re.findall(r"^FAILED (\S+)", result.output, re.M)
            # the only failure tolerated is host-specific: an interpreter built without dbm.ndbm
            assert all("dbm" in name for name in failed), failed
            assert result.exit_code == (1 if failed else 0)


def test_episode_uses_the_shared_venv_and_editable_install(six_layer):
    with episode_sandbox(six_layer) as sb:
        result = sb.run("echo $VIRTUAL_ENV; command -v python; python -c 'import sys; print(sys.prefix)'")
        assert result.output.split() == ["/sweworld/venv", "/sweworld/venv/bin/python", "/sweworld/venv"]
        result = sb.run("python -c 'import six; print(six.__file__)'")
        assert result.exit_code == 0 and result.output.strip() == "/testbed/six.py"
        # editable: an edit in /testbed is what `import six` sees
        sb.run("echo 'SWEWORLD_EDIT = 42' >> /testbed/six.py")
        result = sb.run("cd /tmp && python -c 'import six; print(six.SWEWORLD_EDIT)'")
        assert result.output.strip() == "42"
        # no network in an episode
        net = sb.run("python -c \"import socket; socket.create_connection(('pypi.org', 443), timeout=3)\"")
        assert net.exit_code != 0


def test_environment_is_built_once(six_task, six_layer):
    meta_before = json.loads((six_layer.env.path / "env.json").read_text())
    layer_meta_before = (six_layer.path / "meta.json").read_text()
    CountingBuilder.calls.clear()
    again = CountingBuilder().instance(six_task)
    assert CountingBuilder.calls == Counter()
    assert (again.key, again.path) == (six_layer.key, six_layer.path)
    assert (again.env.key, again.env.path) == (six_layer.env.key, six_layer.env.path)
    meta_after = json.loads((again.env.path / "env.json").read_text())
    assert meta_after["built_at"] == meta_before["built_at"]
    assert meta_after["complete"] is True and meta_after["key"] == again.env.key
    assert (again.path / "meta.json").read_text() == layer_meta_before


def test_tasks_with_the_same_env_key_share_env_and_layer(tmp_path, six_task, six_layer):
    row = smoke_row()
    twin_row = {**row, "instance_id": "sweworld-test__six-twin"}
    twin = write_tasks(tmp_path / "twin.jsonl", [twin_row]).by_id("sweworld-test__six-twin")
    builder = EnvBuilder()
    assert builder.key(twin) == builder.key(six_task) == six_layer.env.key
    built_at = json.loads((six_layer.env.path / "env.json").read_text())["built_at"]
    layers_before = sorted(p.name for p in (six_layer.env.path / "instances").iterdir())
    layer = builder.instance(twin)
    assert layer.env.path == six_layer.env.path
    assert (layer.key, layer.path) == (six_layer.key, six_layer.path)
    assert json.loads((six_layer.env.path / "env.json").read_text())["built_at"] == built_at
    assert sorted(p.name for p in (six_layer.env.path / "instances").iterdir()) == layers_before


def test_a_task_sharing_the_environment_installs_and_tests_with_its_own_recipe(tmp_path, six_task, six_layer):
    """The env key covers the env stage only: a task that shares it with another pre_install and
    test_cmd gets a layer of its own pre_install and its own test command, not the first builder's."""
    row = smoke_row()
    builder = EnvBuilder()
    first = builder.recipe(six_task)
    other = {**row, "instance_id": "sweworld-test__six-own-install",
             "pre_install": ["echo own-install > /testbed/sweworld-own-install.txt"],
             "test_cmd": first.test_cmd + " -x"}
    task = write_tasks(tmp_path / "own.jsonl", [other]).by_id("sweworld-test__six-own-install")
    assert builder.key(task) == six_layer.env.key
    layer = builder.instance(task)
    assert layer.env.path == six_layer.env.path and layer.key != six_layer.key
    assert layer.env.recipe.pre_install == other["pre_install"] and layer.env.recipe.test_cmd == other["test_cmd"]
    assert (layer.path / "testbed" / "sweworld-own-install.txt").read_text() == "own-install\n"
    again = builder.instance(six_task)
    assert (again.key, again.env.recipe.pre_install, again.env.recipe.test_cmd) == (six_layer.key, [], first.test_cmd)


def test_episode_writes_do_not_reach_the_shared_layers(six_layer):
    shared = [six_layer.path, six_layer.env.venv, six_layer.env.path / "env.json", six_layer.tree]
    before = tree_digest(*shared)
    with episode_sandbox(six_layer, label="writer") as a:
        site = a.run("python -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])'").output.strip()
        assert site.startswith("/sweworld/venv/lib/"), site
        a.write_file(f"{site}/sweworld_marker.py", "MARK = 'from episode A'\n")
        a.write_file("/testbed/six.py", "raise ImportError('broken by episode A')\n")
        wrote = a.run(f"touch /testbed/new_file.txt && rm /testbed/test_six.py && rm -r {site}/_pytest "
                      "&& echo done")
        assert wrote.output.strip() == "done", wrote.output
        seen = a.run("python -c 'import sweworld_marker; print(sweworld_marker.MARK)'; "
                     "ls /testbed/new_file.txt /testbed/test_six.py; python -c 'import six'")
        assert "from episode A" in seen.output and "broken by episode A" in seen.output
        assert "/testbed/new_file.txt" in seen.output
        assert "cannot access '/testbed/test_six.py': No such file" in seen.output
        assert a.diff() != ""
        with episode_sandbox(six_layer, label="reader") as b:
            assert b.run("python -c 'import sweworld_marker'").exit_code != 0
            assert b.run("test -e /testbed/new_file.txt").exit_code == 1
            assert b.run("test -f /testbed/test_six.py").exit_code == 0
            assert b.read_file("/testbed/six.py") == (six_layer.tree / "six.py").read_text()
            assert b.run("python -c 'import _pytest, six; print(six.__version__)'").output.strip() == "1.16.0"
            assert b.diff() == ""
    assert tree_digest(*shared) == before


def test_fresh_episode_has_an_empty_diff_and_clean_status(six_layer):
    with episode_sandbox(six_layer) as sb:
        assert sb.diff() == ""
        status = sb.run("git status --porcelain")
        assert status.exit_code == 0 and status.output.strip() == "", status.output
        # install artefacts exist in the workspace, but git does not see them
        listing = sb.run("ls -a /testbed").output.split()
        assert any(name.endswith(".egg-info") for name in listing), listing
        # running code and tests (bytecode, pytest's rewritten modules) does not dirty the diff either
        ran = sb.run("python -c 'import six' && python -m pytest -q -p no:cacheprovider test_six.py "
                     "-k test_lazy >/dev/null; echo ran")
        assert ran.output.strip().endswith("ran")
        assert sb.diff() == ""
        assert sb.run("git status --porcelain").output.strip() == ""
        # a real edit is all that shows
        sb.run("sed -i 's/^__version__ = .*/__version__ = \"9.9.9\"/' six.py")
        diff = sb.diff()
        assert diff.count("diff --git") == 1 and "diff --git a/six.py b/six.py" in diff
        assert '+__version__ = "9.9.9"' in diff and '-__version__ = "1.16.0"' in diff
        assert sb.run("git status --porcelain").output.strip() == "M six.py"


# -- the cache: list, remove, failures --------------------------------------------------------------

def test_list_envs_lists_the_six_env(six_layer):
    found = {meta["key"]: meta for meta in list_envs()}
    assert six_layer.env.key in found
    meta = found[six_layer.env.key]
    assert meta["complete"] is True and meta["repo"] == "benjaminp/six"
    assert meta["size_bytes"] > 0 and meta["instances"] >= 1
    assert Path(meta["path"]) == six_layer.env.path
    assert "locks" not in found


def test_remove_env_prefix_rules(tmp_path, fresh_home):
    base = {**smoke_row(), "install": "true", "test_cmd": "true"}
    rows = [{**base, "instance_id": "throwaway-a"},
            {**base, "instance_id": "throwaway-b", "packages": "pytest"}]
    tasks = write_tasks(tmp_path / "throwaway.jsonl", rows)
    builder = EnvBuilder(fresh_home)
    env_a = builder.environment(tasks.by_id("throwaway-a"))
    env_b = builder.environment(tasks.by_id("throwaway-b"))
    assert env_a.key != env_b.key and env_a.path.parent == envs_root()
    assert {m["key"] for m in list_envs()} == {env_a.key, env_b.key}

    with pytest.raises(EnvBuildError) as ambiguous:
        remove_env("")
    assert "matches 2 environments" in str(ambiguous.value)
    assert env_a.key in str(ambiguous.value) and env_b.key in str(ambiguous.value)
    with pytest.raises(EnvBuildError, match="matches 0 environments"):
        remove_env("zz-no-such-env")
    assert env_a.path.is_dir() and env_b.path.is_dir()

    n = next(n for n in range(1, 17) if not env_b.key.startswith(env_a.key[:n]))
    assert remove_env(env_a.key[:n]) == env_a.path
    assert not env_a.path.exists() and env_b.path.is_dir()
    assert [m["key"] for m in list_envs()] == [env_b.key]


def _failing_rows(variant: str = "") -> dict[str, dict]:
    """Rows that fail to build; each ``variant`` has its own keys, so tests never share a build."""
    base = smoke_row()
    missing = MISSING_PKG.replace("sweworld", f"sweworld{variant}")
    return {"bad-pip": {**base, "instance_id": "sweworld-test__bad-pip", "pip_packages": [missing]},
            "bad-install": {**base, "instance_id": "sweworld-test__bad-install",
                            "install": f"python -m pip install -e . && false{variant}"}}


def test_env_stage_failure_reports_the_log_and_publishes_nothing(tmp_path):
    task = write_tasks(tmp_path / "bad.jsonl", [_failing_rows()["bad-pip"]]).by_id("sweworld-test__bad-pip")
    builder = EnvBuilder()
    assert builder.recipe(task).pip_packages == [MISSING_PKG]
    key = builder.key(task)
    with pytest.raises(EnvBuildError) as info:
        builder.instance(task)
    exc = info.value
    message = str(exc)
    assert "environment build exited with status" in message
    assert "sweworld-test__bad-pip" in message and key in message
    assert exc.log_path and f"build log: {exc.log_path}" in message
    assert "this-package-does-not-exist-sweworld" in exc.log_tail
    assert exc.log_tail.splitlines()[-1].strip() in message
    assert "what to do:" in message
    assert key not in {m["key"] for m in list_envs()}
    assert not (envs_root() / key).exists()
    assert not (envs_root() / f".{key}.building").exists()


def test_env_stage_failure_log_path_exists(tmp_path):
    row = _failing_rows(variant="-2")["bad-pip"]
    task = write_tasks(tmp_path / "bad.jsonl", [row]).by_id("sweworld-test__bad-pip")
    with pytest.raises(EnvBuildError) as info:
        EnvBuilder().instance(task)
    log_path = Path(info.value.log_path)
    assert log_path.is_file()
    assert info.value.log_tail.splitlines()[-1] in log_path.read_text()


def test_install_failure_reports_the_log_and_leaves_no_layer(tmp_path):
    rows = _failing_rows()
    task = write_tasks(tmp_path / "bad.jsonl", [rows["bad-install"]]).by_id("sweworld-test__bad-install")
    builder = EnvBuilder()
    key = builder.key(task)
    with pytest.raises(EnvBuildError) as info:
        builder.instance(task)
    exc = info.value
    message = str(exc)
    assert "install exited with status 1" in message and "sweworld-test__bad-install" in message
    assert exc.log_path and f"build log: {exc.log_path}" in message
    assert "+ false" in exc.log_tail and "+ false" in message
    # the environment stage succeeded and is published; the failed install layer is not
    env = {m["key"]: m for m in list_envs()}[key]
    assert env["complete"] is True and env["instances"] == 0
    instances = envs_root() / key / "instances"
    assert [p.name for p in instances.iterdir() if not p.name.startswith(".")] == []
    assert list(instances.rglob("meta.json")) == []


def test_install_failure_log_path_exists(tmp_path):
    row = _failing_rows(variant=" # 2")["bad-install"]
    task = write_tasks(tmp_path / "bad.jsonl", [row]).by_id("sweworld-test__bad-install")
    with pytest.raises(EnvBuildError) as info:
        EnvBuilder().instance(task)
    assert Path(info.value.log_path).is_file()


@pytest.mark.slow
def test_concurrent_instance_calls_build_once(fresh_home):
    task = load_tasks(sweworld.datasets.path_of("demo")).by_id(SIX_ID)
    CountingBuilder.calls.clear()
    barrier = threading.Barrier(2)
    layers: list = [None, None]
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            builder = CountingBuilder(fresh_home)
            barrier.wait()
            layers[i] = builder.instance(task)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    a, b = layers
    assert a.path == b.path and a.env.path == b.env.path and a.path.is_relative_to(envs_root())
    assert CountingBuilder.calls == Counter(env=1, instance=1)
    log = Path(read_meta(a.env.path / "env.json")["log"]).read_text()
    assert log.count("### environment build") == 1
    assert Path(read_meta(a.path / "meta.json")["log"]).read_text().count("### install") == 1
    assert [m["key"] for m in list_envs()] == [a.env.key]
    with episode_sandbox(a) as sb:
        assert sb.run("python -c 'import six, pytest; print(six.__file__)'").output.strip() == "/testbed/six.py"
