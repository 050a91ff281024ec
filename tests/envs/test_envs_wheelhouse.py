"""The wheelhouse: a framework's tool bundle that pip-installs (SWE-agent's ``windowed_edit_linting``
installs flake8) runs in an episode with no network, from wheels filled on the host, and nothing of
the host's paths shows inside."""

from __future__ import annotations

import logging

import pytest

from raycluster import FIXED, demo_tasks
from sweworld.backends.real import RealBackend
from sweworld.core.errors import EnvBuildError
from sweworld.envs import wheelhouse

pytestmark = [pytest.mark.bwrap, pytest.mark.network]

INSTALL_SH = """#!/usr/bin/env bash
# SWE-agent's tools/windowed_edit_linting/install.sh
pip install flake8
"""


@pytest.fixture(scope="module")
def task():
    return next(t for t in demo_tasks() if t.instance_id == FIXED)


def run_bundle(sandbox) -> object:
    sandbox.write_file("/tmp/tools/windowed_edit_linting/install.sh", INSTALL_SH)
    return sandbox.run("cd /tmp/tools/windowed_edit_linting && bash install.sh && flake8 --version", timeout=300)


def test_a_bundles_install_sh_pip_installs_offline_from_the_wheelhouse(task):
    backend = RealBackend(wheels=["flake8"])
    with backend.open(task) as sandbox:
        done = run_bundle(sandbox)
        assert done.ok, done.output
        assert "pyflakes" in done.output  # flake8 --version names its plugins: the dependencies came too
        host = str(wheelhouse.ensure(["flake8"], backend.builder.instance(task).env.interpreter))
        seen = sandbox.run(f"cat /proc/self/mountinfo; env; ls {wheelhouse.MOUNT}")
        assert host not in seen.output and f"PIP_FIND_LINKS={wheelhouse.MOUNT}" in seen.output
        assert "flake8-" in seen.output and wheelhouse.MANIFEST in seen.output
        assert sandbox.run(f"touch {wheelhouse.MOUNT}/x").exit_code != 0  # read-only


def test_without_the_wheelhouse_the_same_install_fails_offline(task):
    with RealBackend().open(task) as sandbox:
        done = run_bundle(sandbox)
        assert not done.ok and "No matching distribution found for flake8" in done.output


def test_the_manifest_records_the_requirements_and_each_wheels_digest(task):
    interpreter = RealBackend().builder.instance(task).env.interpreter
    filled = wheelhouse.ensure(["flake8"], interpreter)
    recorded = wheelhouse.manifest(filled)
    assert recorded["requirements"] == ["flake8"] and recorded["python"] == interpreter.full_version
    assert sorted(recorded["wheels"]) == sorted(p.name for p in filled.glob("*.whl"))
    assert any(name.startswith("pyflakes-") for name in recorded["wheels"])
    assert wheelhouse.ensure([" flake8 ", "flake8"], interpreter) == filled  # the same list: the same wheelhouse


def test_a_requirement_pip_cannot_get_is_one_error_and_episodes_open_without(task, tmp_path, caplog):
    interpreter = RealBackend().builder.instance(task).env.interpreter
    with pytest.raises(EnvBuildError, match="no-such-package-sweworld") as info:
        wheelhouse.ensure(["no-such-package-sweworld==0.0.1"], interpreter, root=tmp_path)
    assert "what to do" in str(info.value) and list(tmp_path.iterdir()) == []  # nothing half-filled is left
    backend = RealBackend(wheels=["no-such-package-sweworld==0.0.1"])
    with caplog.at_level(logging.WARNING), backend.open(task) as sandbox:
        assert sandbox.run("echo ok").ok
    assert "open without the wheelhouse" in caplog.text
