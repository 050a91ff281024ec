"""Fixtures of the integration tests: the real more-itertools instance, an environment builder and
the real backend over it (what a user passes to ``SWEEnv`` and the mini-swe-agent adapter)."""

from __future__ import annotations

import pytest

from realtasks import real_tasks
from sweworld.backends import make_backend
from sweworld.envs import EnvBuilder


@pytest.fixture(scope="module")
def task():
    return real_tasks()["first"]


@pytest.fixture(scope="module")
def builder():
    return EnvBuilder()


@pytest.fixture(scope="module")
def backend(builder):
    return make_backend("real", builder=builder)
