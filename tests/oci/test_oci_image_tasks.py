"""A row that names an image runs, is graded and is simulated, docker-free: Python (a SWE-bench instance
image), Go and JavaScript instances pulled from a real registry on 127.0.0.1 through
``registries.conf`` (SWE-bench's and SWE-rebench's names served by a docker.io mirror), as root and as
an ordinary user."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oci_images import Registry
from oci_lang_images import go_image, js_image, python_image
from sweworld.backends.real import RealBackend
from sweworld.backends.sim import SimBackend
from sweworld.harness.predictions import Prediction
from sweworld.tasks import validate_rows

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]

BUILDERS = {"python": python_image, "go": go_image, "javascript": js_image}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The three instance images, pushed under the names their rows give (or SWE-bench's name)."""
    images, skipped = {}, {}
    for language, build in BUILDERS.items():
        try:
            images[language] = build()
        except pytest.skip.Exception as exc:  # one language's packages out of reach: its tests skip, not all
            skipped[language] = str(exc)
    registry = Registry(tmp_path_factory.mktemp("lang-registry"))
    for image in images.values():
        registry.push(image.layout, image.tag, image.name)
    images["skipped"] = skipped
    yield registry, images
    registry.close()


@pytest.fixture
def home(tmp_path, monkeypatch, served) -> Path:
    registry, _ = served
    monkeypatch.setenv("SWEWORLD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CONTAINERS_REGISTRIES_CONF", str(registry.conf))
    return tmp_path / "home"


def _task(served, language: str):
    _, images = served
    if language in images["skipped"]:
        pytest.skip(images["skipped"][language])
    row = dict(images[language].row)
    if language != "python":  # rows of other families name their image as pushed (through the docker.io mirror)
        row["image_name"] = images[language].name
    [task] = validate_rows([row])
    return task


def _evaluate(backend, task, patch: str, log_dir: Path):
    return backend.evaluate(task, Prediction(instance_id=task.instance_id, model_patch=patch,
                                             model_name_or_path="t"), log_dir)


@pytest.mark.parametrize("language", ["python", "go", "javascript"])
def test_the_gold_patch_resolves_on_the_image_and_no_patch_does_not(home, served, tmp_path, language):
    task = _task(served, language)
    backend = RealBackend(env_source="image" if language == "python" else "auto")
    gold = _evaluate(backend, task, task.patch, tmp_path / "gold")
    log = (tmp_path / "gold" / "run_instance.log").read_text()
    assert gold.resolved, log + (tmp_path / "gold" / "test_output.txt").read_text()[-3000:]
    assert "image " in log and "repository at /testbed" in log
    none = _evaluate(backend, task, "", tmp_path / "none")
    assert not none.resolved and none.patch_successfully_applied is False
    bug_only = _evaluate(backend, task, "diff --git a/x.txt b/x.txt\nnew file mode 100644\n--- /dev/null\n"
                         "+++ b/x.txt\n@@ -0,0 +1 @@\n+x\n", tmp_path / "bug")
    assert bug_only.patch_successfully_applied and not bug_only.resolved
    assert set(task.FAIL_TO_PASS) <= set(bug_only.tests_status["FAIL_TO_PASS"]["failure"])


def test_an_agent_episode_on_the_image_is_the_repository_at_its_base(home, served):
    task = _task(served, "go")
    with RealBackend().open(task) as episode:
        assert episode.run("pwd; git rev-parse HEAD").output.split() == ["/testbed", task.base_commit]
        assert episode.run("go version").output.startswith("go version go1.19")
        episode.write_file("/testbed/NOTES", "seen\n")
        assert "NOTES" in episode.diff()


def test_sim_reads_the_base_tree_from_the_image_and_runs_nothing(home, served, tmp_path):
    task = _task(served, "javascript")
    backend = SimBackend(env_source="auto")
    tree = backend.base_tree(task)
    assert (tree / ".git").is_dir() and (tree / "index.js").is_file()
    with backend.open(task) as episode:
        assert "index.js" in episode.run("ls").output
    report = _evaluate(backend, task, task.patch, tmp_path / "sim")
    assert report.error is None and (tmp_path / "sim" / "report.json").is_file()


def test_eval_from_the_command_line_with_images(home, served, tmp_path):
    from typer.testing import CliRunner

    from sweworld.cli.app import app
    task = _task(served, "python")
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(served[1]["python"].row) + "\n")  # as published: no image field
    result = CliRunner().invoke(app, ["eval", "--dataset", str(rows), "--predictions", "gold", "--env-source", "image",
                                      "--logs-dir", str(tmp_path / "logs"), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    summary = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert summary["resolved_ids"] == [task.instance_id]


@pytest.mark.parametrize("backend", ["real", "sim"])
def test_a_rollout_from_the_command_line_on_an_image_row(home, served, tmp_path, backend):
    """What a user types for a SWE-rebench V2 row in Go: the row names its image; nothing to build."""
    from typer.testing import CliRunner

    from sweworld.cli.app import app
    task = _task(served, "go")
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({**served[1]["go"].row, "image_name": served[1]["go"].name}) + "\n")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["rollout", "--dataset", str(rows), "--policy", "oracle", "--backend", backend,
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["trajectories"] == 1 and summary["backend"] == backend
    if backend == "real":
        assert summary["resolve_rate"] == 1.0 and summary["errors"] == 0, summary
    [prediction] = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert prediction["instance_id"] == task.instance_id and prediction["model_patch"].strip()


def test_a_row_whose_image_is_missing_fails_alone_with_one_clear_error(home, served, tmp_path):
    registry, _ = served
    task = _task(served, "go").model_copy(update={"image_name": f"{registry.address}/nobody/absent:1"})
    report = _evaluate(RealBackend(), task, task.patch, tmp_path / "missing")
    assert not report.resolved and report.error_kind == "infra"
    assert "absent" in report.error and "no such repository or tag" in report.error
    assert task.instance_id in (tmp_path / "missing" / "run_instance.log").read_text()


def test_an_episode_on_the_image_forks_and_restores_its_whole_root(home, served):
    from sweworld.testing.branching import check_branching
    task = _task(served, "go")
    with RealBackend().open(task) as episode:
        episode.run("echo kept > /etc/branch-kept")  # outside the repository: the image's root layer
        handle = episode.snapshot()
        episode.run("rm /etc/branch-kept; echo later > /usr/local/branch-later")
        with episode.fork(handle) as child:
            assert child.run("cat /etc/branch-kept").output == "kept\n"
            assert "branch-later" not in child.run("ls /usr/local").output
            assert child.run("go version").output.startswith("go version go1.19")
        episode.restore(handle)
        assert episode.run("cat /etc/branch-kept; test -e /usr/local/branch-later || echo gone").output.split() == [
            "kept", "gone"]
        episode.release(handle)
        episode.run("rm /etc/branch-kept")
        check_branching(episode, workdir_file="go.mod")
