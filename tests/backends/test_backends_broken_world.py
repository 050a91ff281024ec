"""A world that cannot run gives an infrastructure failure with its cause and an infrastructure 0,
never a verdict on the patch, on every backend: an image whose ``/lib`` symlink was replaced by an
empty directory (nothing can run in it: eval and validation), a recipe's environment whose test
command cannot start, a simulated world whose SWR cannot be reached. A patch that breaks its own
package's import stays the model's failure."""

from __future__ import annotations

import pytest
from tests.conftest import git, make_git_tree

from oci_images import Entry, Registry, debian_rootfs, layer, opaque, write_layout
from realtasks import MODULE, real_tasks, sources, unified
from sweworld.backends.real import RealBackend
from sweworld.backends.sim import SimBackend
from sweworld.core.config import EvalConfig
from sweworld.core.types import Task
from sweworld.envs import EnvBuilder
from sweworld.harness.predictions import Prediction
from sweworld.runs.eval import evaluate_run
from sweworld.runs.validate import validate_instance
from sweworld.seam import grade
from sweworld.world.swr import SWR
from sweworld.world.swt import SWT
from sweworld.world.worldmodels import OpenAIWorldConfig, OpenAIWorldModel

pytestmark = pytest.mark.bwrap

BUGGY, FIXED = "def add(a, b):\n    return a - b\n", "def add(a, b):\n    return a + b\n"


@pytest.fixture
def broken_image(tmp_path, monkeypatch) -> Task:
    """A task whose image is Debian's libc and bash with ``/lib`` replaced by an empty directory (no
    loader: no shell runs), served by a real registry on 127.0.0.1."""
    rootfs = debian_rootfs()  # in the shared test cache, before this test's own store
    tree, commit = make_git_tree(tmp_path / "image" / "testbed", {"pkg/__init__.py": BUGGY,
                                                                  "tests/test_add.py": "def test_add(): pass\n"})
    (tree / "pkg" / "__init__.py").write_text(FIXED)
    gold = git(tree, "diff") + "\n"
    git(tree, "checkout", "-q", "--", ".")
    top = layer(None, [Entry("lib", "dir", mode=0o755), opaque("lib")])
    layout = write_layout(tmp_path / "layout", "1", [layer(rootfs), layer(tmp_path / "image"), top],
                          {"Env": ["PATH=/usr/bin:/bin"], "WorkingDir": "/testbed"})
    registry = Registry(tmp_path / "registry")
    registry.push(layout, "1", "team/broken:1")
    monkeypatch.setenv("SWEWORLD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CONTAINERS_REGISTRIES_CONF", str(registry.conf))
    yield Task(instance_id="local__broken-1", repo="local/broken", base_commit=commit, patch=gold,
               FAIL_TO_PASS=["tests/test_add.py::test_add"], test_cmd="pytest -rA",
               image_name=f"{registry.address}/team/broken:1")
    registry.close()


def test_the_gold_patch_on_a_broken_image_is_an_infrastructure_error_with_its_cause(broken_image, tmp_path):
    task, backend = broken_image, RealBackend(env_source="image")
    gold = {task.instance_id: Prediction(instance_id=task.instance_id, model_name_or_path="m", model_patch=task.patch)}
    summary, _ = evaluate_run([task], gold, EvalConfig(run_id="r", logs_dir=tmp_path / "logs", out=tmp_path),
                              backend=backend)
    assert (summary["error_instances"], summary["infra_error_ids"], summary["resolved_instances"],
            summary["unresolved_instances"]) == (1, [task.instance_id], 0, 0), summary
    graded = grade(backend, task, task.patch)
    assert graded.outcome == "infra" and graded.reward == 0.0 and graded.report.error_kind == "infra"
    assert "WorldBrokenError" in graded.error and "symlinks could not run (exit 127)" in graded.error
    verdict = validate_instance(task, backend, runs=1)  # the same checks: no "no FAIL_TO_PASS"
    assert verdict.infra and not verdict.kept, verdict.reason
    assert verdict.reason.startswith("infrastructure: the world cannot run the tests: the eval script never reached")


@pytest.mark.network
def test_a_test_command_that_cannot_start_is_infrastructure_and_a_broken_import_is_the_model(tmp_path):
    task = real_tasks()["first"]
    backend = RealBackend(EnvBuilder())
    no_runner = task.model_copy(update={"test_cmd": "sweworld-no-such-runner -rA"})
    graded = grade(backend, no_runner, task.patch, timeout=600)
    assert graded.outcome == "infra" and graded.reward == 0.0 and not graded.resolved
    assert "the test command could not start (exit 127)" in graded.error
    assert "sweworld-no-such-runner: command not found" in graded.error
    buggy, _ = sources(task)
    broken = grade(backend, task, unified(MODULE, buggy, "import sweworld_no_such_module\n" + buggy), timeout=600)
    assert broken.outcome == "verdict" and broken.error is None and broken.resolved is False
    assert broken.report.crashed and broken.report.error_kind is None and broken.report.patch_successfully_applied


@pytest.mark.network
def test_a_simulated_world_whose_swr_cannot_be_reached_is_infrastructure(tmp_path):
    task = real_tasks()["first"]
    dead = OpenAIWorldModel(OpenAIWorldConfig(urls=["http://127.0.0.1:9/v1"], model="w", backoff=0.0, max_retries=0,
                                              cache=False))
    backend = SimBackend(swt=SWT(dead), swr=SWR(dead))
    report = backend.evaluate(task, Prediction(instance_id=task.instance_id, model_patch=task.patch), tmp_path / "e")
    assert report.error_kind == "infra" and not report.resolved and "ModelError" in report.error
    graded = grade(backend, task, task.patch)
    assert graded.outcome == "infra" and graded.reward == 0.0 and graded.resolved is False
