"""The install layer of a task on SWE-bench's specs holds what SWE-bench's image holds: the tree as
the set-up left it, committed as "SWE-bench" on the base commit (so an agent's ``git diff`` shows
only its own work, and ``git apply --3way`` can merge a patch that repeats the set-up), while
sweworld's own diff is still taken against the base commit. The SWE-bench-shaped requests 2.31
instance, built for real (PyPI)."""

from __future__ import annotations

import pytest

from swebench_shaped import requests_task
from sweworld.envs import EnvBuilder, episode_sandbox

pytestmark = [pytest.mark.bwrap, pytest.mark.network, pytest.mark.slow]


def test_the_set_up_state_is_a_commit_on_the_base_as_in_swebenchs_images():
    task = requests_task()
    builder = EnvBuilder()
    layer = builder.instance(task)
    assert layer.env.recipe.source == "swebench" and layer.env.recipe.commits_setup()
    with episode_sandbox(layer) as sb:
        head = sb.run("git log -1 --format='%s|%an <%ae>|%P' && git status --porcelain", cwd="/testbed").output
        assert head.splitlines() == [f"SWE-bench|SWE-bench <setup@swebench.config>|{task.base_commit}"], head
        assert sb.diff() == ""
        sb.run("echo '# changed' >> requests/utils.py", cwd="/testbed")
        assert sb.diff().count("diff --git") == 1 and "+# changed" in sb.diff()
    again = EnvBuilder().instance(task)  # the same key: built once
    assert again.path == layer.path
