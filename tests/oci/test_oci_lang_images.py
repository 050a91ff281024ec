"""The three instance images of ``tests/oci_lang_images.py`` as environments: each is pulled from its
OCI layout (no registry needed here), an episode is opened on it as ``test_oci_episode`` does, and its
row's tests are run in ``/testbed`` and read by swebench's own log parser: on the base tree the
FAIL_TO_PASS tests fail and the PASS_TO_PASS tests pass; with the gold patch applied, all pass.
For the Python image this is SWE-bench's own evaluation script (``make_test_spec(row).eval_script``:
``conda activate testbed``, ``python -m pip install .`` offline, ``pytest -rA`` on the test patch's
files). As root and as an ordinary user."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from oci_lang_images import go_image, js_image, python_image

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A store of this module's own; the images themselves stay cached in the test home."""
    if shutil.which("skopeo") is None:
        pytest.skip("skopeo is not installed (apt-get install skopeo): images are pulled with it")
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        pytest.skip("apt-get and dpkg-deb are needed to build the images from Debian's packages")
    return tmp_path_factory.mktemp("store")


def _episode(image, store: Path, monkeypatch):
    from sweworld.oci.pull import pull
    from sweworld.sandbox import Layers, Sandbox, SandboxConfig

    monkeypatch.setenv("SWEWORLD_HOME", str(store))
    record = pull(image.reference)
    assert record.workdir == "/testbed"
    return Sandbox({"/": Layers(record.layer_dirs())}, workdir=record.workdir,
                   config=SandboxConfig(env=record.env, timeout=600))


def _statuses(parser_name: str, module: str, log: str, instance_id: str) -> dict[str, str]:
    """The statuses swebench's ``parser_name`` reads from ``log``, called as the harness calls it."""
    import importlib
    parser = getattr(importlib.import_module(f"swebench.harness.log_parsers.{module}"), parser_name)
    return parser(log, SimpleNamespace(instance_id=instance_id))


def _check(statuses: dict[str, str], fail: list[str], passing: list[str]) -> None:
    assert all(statuses.get(t) == "FAILED" for t in fail), {t: statuses.get(t) for t in fail}
    assert all(statuses.get(t) == "PASSED" for t in passing), {t: statuses.get(t) for t in passing}


def _lang_round(image, store, monkeypatch, module: str) -> None:
    """The row's test command on the base tree, then with the gold patch, read by its parser."""
    row = image.row
    fail, passing = json.loads(row["FAIL_TO_PASS"]), json.loads(row["PASS_TO_PASS"])
    config = row["install_config"]
    with _episode(image, store, monkeypatch) as episode:
        assert episode.run("git status --porcelain && git rev-parse HEAD").output.split() == [row["base_commit"]]
        started = time.monotonic()
        before = episode.run(config["test_cmd"])
        print(f"{row['instance_id']}: cold test run {time.monotonic() - started:.1f}s")
        _check(_statuses(config["log_parser"], module, before.output, row["instance_id"]), fail, passing)
        out = episode.run(f"git apply -v - <<'EOF_GOLD'\n{row['patch']}\nEOF_GOLD")
        assert out.exit_code == 0, out.output
        after = episode.run(config["test_cmd"])
        _check(_statuses(config["log_parser"], module, after.output, row["instance_id"]), [], fail + passing)


def test_go_instance(store, monkeypatch):
    image = go_image()
    assert image.row["install_config"]["log_parser"] == "parse_log_gotest"
    _lang_round(image, store, monkeypatch, "go")


def test_javascript_instance(store, monkeypatch):
    image = js_image()
    assert image.row["install_config"]["log_parser"] == "parse_log_tap"
    _lang_round(image, store, monkeypatch, "javascript")


def test_python_instance_runs_swebench_eval_script(store, monkeypatch, tmp_path):
    """SWE-bench's evaluation script for the row, on the image named as SWE-bench names it."""
    from swebench.harness.grading import get_logs_eval
    from swebench.harness.test_spec.test_spec import make_test_spec

    image = python_image()
    row = image.row
    spec = make_test_spec(row, namespace="swebench")
    assert f"{spec.instance_image_key}" == image.name
    fail, passing = json.loads(row["FAIL_TO_PASS"]), json.loads(row["PASS_TO_PASS"])
    with _episode(image, store, monkeypatch) as episode:
        assert episode.run("git status --porcelain && git rev-parse HEAD").output.split() == [row["base_commit"]]
        shim = episode.run("(cd / && source /opt/miniconda3/bin/activate && conda activate testbed && "
                           "python -c 'import sys, requests; print(sys.prefix, requests.__file__)')")
        assert shim.output.split() == ["/opt/miniconda3/envs/testbed",
                                       "/opt/miniconda3/envs/testbed/lib/python3.11/site-packages/requests/__init__.py"]
        for patched in (False, True):
            if patched:
                out = episode.run(f"git apply -v - <<'EOF_GOLD'\n{row['patch']}\nEOF_GOLD")
                assert out.exit_code == 0, out.output
            started = time.monotonic()
            episode.run(f"cat > /eval.sh <<'EOF_EVAL_SCRIPT'\n{spec.eval_script}\nEOF_EVAL_SCRIPT")
            run = episode.run("/bin/bash /eval.sh")
            print(f"{row['instance_id']}: eval script {time.monotonic() - started:.1f}s (patched={patched})")
            assert "Successfully uninstalled requests-2.31.0" in run.output, run.output[-3000:]
            assert "Successfully installed requests-2.31.0" in run.output, run.output[-3000:]
            log = tmp_path / f"eval-{patched}.log"
            log.write_text(run.output)
            statuses, found = get_logs_eval(spec, str(log))
            assert found, run.output[-3000:]
            _check(statuses, [] if patched else fail, fail + passing if patched else passing)
