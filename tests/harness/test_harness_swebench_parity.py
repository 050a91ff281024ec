"""Regression tests for what kept the docker-free harness from grading real SWE-bench as Docker does.

Each test reproduces one cause on a source CI can get (a real pytest run, a real virtualenv, a small
git repository it builds) and fails on the code before the fix.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.harness.test_harness_grade import frame

from sweworld.core.types import Task
from sweworld.envs import services
from sweworld.envs.recipe import from_spec
from sweworld.harness.evalscript import make_eval_script, new_nonce, tox_current_env_shims
from sweworld.harness.evaluate import is_editable, needs_reinstall
from sweworld.harness.grade import extract_test_run, grade, parse_status, strip_ansi
from sweworld.harness.report import InstanceReport

COLOR_MODULE = '''\
import pytest

@pytest.mark.parametrize("text", ["a b", "c"])
def test_space(text):
    assert text

def test_plain():
    assert True

def test_broken():
    assert False
'''


def _pytest(root: Path, *args: str) -> tuple[str, int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", *args], cwd=root,
                          env=env, capture_output=True, text=True)
    return proc.stdout + proc.stderr, proc.returncode


@pytest.fixture(scope="module")
def colored_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, int]:
    """A real pytest run of a project whose configuration forces colour, with ids holding spaces."""
    root = tmp_path_factory.mktemp("colored")
    (root / "pytest.ini").write_text("[pytest]\naddopts = --color=yes\n")
    (root / "test_mod.py").write_text(COLOR_MODULE)
    return _pytest(root, "test_mod.py")


def _task(f2p: list[str], p2p: list[str]) -> Task:
    return Task(instance_id="local__mod-1", repo="local/mod", base_commit="abc123", FAIL_TO_PASS=f2p,
                PASS_TO_PASS=p2p)


def test_forced_colour_is_stripped_before_parsing(colored_run: tuple[str, int]) -> None:
    output, rc = colored_run
    assert "\x1b[" in output and rc == 1
    status = parse_status(_task([], []), output)
    assert status["test_mod.py::test_plain"] == "PASSED"
    assert status["test_mod.py::test_broken"] == "FAILED"
    assert "\x1b" not in strip_ansi(output)


def test_ids_with_spaces_match_whole_and_cut(colored_run: tuple[str, int]) -> None:
    output, rc = colored_run
    nonce = new_nonce()
    run = extract_test_run(frame(output, rc, nonce), nonce)
    full_id = "test_mod.py::test_space[a b]"
    graded = grade(_task([full_id], ["test_mod.py::test_space[c]", "test_mod.py::test_plain"]), run)
    assert graded.resolved and graded.missing == []
    cut = grade(_task(["test_mod.py::test_space[a"], ["test_mod.py::test_plain"]), run)  # SWE-bench's own form
    assert cut.resolved


def test_missing_tests_are_named_in_the_report(colored_run: tuple[str, int]) -> None:
    output, rc = colored_run
    nonce = new_nonce()
    run = extract_test_run(frame(output, rc, nonce), nonce)
    graded = grade(_task(["test_mod.py::test_gone"], ["test_mod.py::test_plain"]), run)
    assert not graded.resolved and graded.missing == ["test_mod.py::test_gone"]
    report = InstanceReport.build("local__mod-1", "diff", patch_applied=True, graded=graded)
    assert report.to_swebench()["local__mod-1"]["tests_missing"] == ["test_mod.py::test_gone"]
    fine = InstanceReport.build("local__mod-1", "diff", patch_applied=True,
                                graded=grade(_task([], ["test_mod.py::test_plain"]), run))
    assert "tests_missing" not in fine.to_swebench()["local__mod-1"]  # SWE-bench's bytes otherwise


def test_tox_current_env_shims_keep_python_inside_the_venv(tmp_path: Path) -> None:
    """tox-current-env links .tox/<env>/bin/python to the venv's python, itself a link: Python then
    starts outside the venv. The shims put a working python there first (the plugin keeps it)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    expected = subprocess.run([str(venv / "bin/python"), "-c", "import sys; print(sys.prefix)"],
                              capture_output=True, text=True, check=True).stdout.strip()
    linked = tmp_path / "linked/bin"
    linked.mkdir(parents=True)
    (linked / "python").symlink_to(venv / "bin/python")  # what tox-current-env does
    plain = subprocess.run([str(linked / "python"), "-c", "import sys; print(sys.prefix)"],
                           capture_output=True, text=True, check=True).stdout.strip()
    assert plain != expected  # the cause: the second link loses the venv

    lines = tox_current_env_shims("tox --current-env -epy39 -v --", "3.9", venv=str(venv))
    assert lines and not tox_current_env_shims("pytest -rA", "3.9")
    subprocess.run(["bash", "-c", "\n".join(lines)], cwd=tmp_path, check=True)
    shim = tmp_path / ".tox/py39/bin/python"
    assert (tmp_path / ".tox/py39/bin/python3.9").exists()
    prefix = subprocess.run([str(shim), "-c", "import sys; print(sys.prefix)"], capture_output=True, text=True,
                            check=True).stdout.strip()
    assert prefix == expected


def test_non_editable_installs_are_redone_after_any_patch() -> None:
    code_only = "diff --git a/pkg/mod.py b/pkg/mod.py\n--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1 +1 @@\n-a\n+b\n"
    assert needs_reinstall(code_only, "python -m pip install .")
    assert not needs_reinstall(code_only, "python -m pip install -e .")
    assert not needs_reinstall(code_only, "python setup.py develop")
    assert is_editable("python -m pip install -e .[test]") and is_editable("pip install --editable=.")
    assert not is_editable("python -m pip install .")


def test_swebench_specs_get_era_tooling_and_stand_ins() -> None:
    recipe = from_spec({"python": "3.9", "packages": "pytest", "install": "python -m pip install .",
                        "test_cmd": "pytest -rA"}, "psf/requests", None)
    assert "pip==24.2" in recipe.seed_packages and any(p.startswith("setuptools==75") for p in recipe.seed_packages)
    assert recipe.exclude_newer and recipe.services == ["httpbin"]
    task = Task(instance_id="psf__requests-1", repo="psf/requests", base_commit="abc123")
    script = make_eval_script(task, recipe, directives=["test_requests.py"], existing_test_files=[],
                              created_test_files=[], nonce=new_nonce(),
                              stand_ins=services.script_lines(recipe.services))
    assert "/sweworld/services/httpbin/venv/bin/python" in script and "ip route add default dev lo" in script
    offline = make_eval_script(task, recipe, directives=[], existing_test_files=[], created_test_files=[],
                               nonce=new_nonce())
    assert "httpbin" not in offline


def test_what_the_apply_chain_left_as_it_was_or_rejected_is_in_the_report_only_when_any():
    report = InstanceReport(instance_id="local__mod-1", patch_is_None=False, patch_exists=True,
                            patch_successfully_applied=True, hunks_already_present=["tox.ini @@ -1,3 +1,3 @@"])
    body = report.to_swebench()["local__mod-1"]
    assert body["hunks_already_present"] == ["tox.ini @@ -1,3 +1,3 @@"] and "hunks_rejected" not in body
    failed = InstanceReport(instance_id="local__mod-1", patch_is_None=False, patch_exists=True,
                            hunks_rejected=["tox.ini hunk #1"])
    assert failed.to_swebench()["local__mod-1"]["hunks_rejected"] == ["tox.ini hunk #1"]
    plain = InstanceReport(instance_id="local__mod-1", patch_is_None=False, patch_exists=True)
    assert set(plain.to_swebench()["local__mod-1"]) == {"patch_is_None", "patch_exists",
                                                       "patch_successfully_applied", "resolved"}
