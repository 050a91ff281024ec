"""Fixtures of the integration tests: the real more-itertools instance, an environment builder and
the real backend over it (what a user passes to ``SWEEnv`` and the mini-swe-agent adapter), and that
instance as a one-row dataset file (what a server is started on)."""

from __future__ import annotations

import pytest

from realtasks import real_tasks
from sweworld.backends import make_backend
from sweworld.envs import EnvBuilder
from sweworld.tasks import save_tasks


@pytest.fixture(scope="module")
def task():
    return real_tasks()["first"]


@pytest.fixture(scope="module")
def builder():
    return EnvBuilder()


@pytest.fixture(scope="module")
def backend(builder):
    return make_backend("real", builder=builder)


@pytest.fixture(scope="module")
def dataset(task, tmp_path_factory) -> str:
    return str(save_tasks([task], tmp_path_factory.mktemp("one-task") / "tasks.jsonl"))


BRANCH_STATE = ("pwd; echo \"mark=$MARK\"; cat /testbed/note.txt; "
                "for f in child later; do [ -e /testbed/$f.txt ] && echo has-$f || echo no-$f; done")
"""What the branching tests of the servers compare: cwd, an export, a file, and which files exist."""
