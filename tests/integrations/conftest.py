"""Fixtures of the integration tests: the real more-itertools instance and an environment builder."""

from __future__ import annotations

import pytest

from realtasks import real_tasks
from sweworld.envs import EnvBuilder


@pytest.fixture(scope="module")
def task():
    return real_tasks()["first"]


@pytest.fixture(scope="module")
def builder():
    return EnvBuilder()
