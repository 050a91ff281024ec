"""``sweworld mine`` on a real project whose test dependencies are declared only as PEP 735 dependency
groups (structlog 25.4.0 from PyPI: ``[dependency-groups] tests``, named by its tox.ini's
``dependency_groups``; its pytest config needs pytest-asyncio, ``--strict-config``): a regression, then
its fix with a test that uses ``pretend`` (of the group). The inferred environment installs the group,
so the fix is kept with its FAIL_TO_PASS; an environment of pytest alone failed every run
("no FAIL_TO_PASS")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_mine_js import DatedHistory
from typer.testing import CliRunner

from sweworld.cli.app import app
from sweworld.tasks import load_tasks

pytestmark = [pytest.mark.bwrap, pytest.mark.slow, pytest.mark.network]

STDLIB = "src/structlog/stdlib.py"
GOOD, BAD = '        event_dict["logger"] = logger.name\n', '        event_dict["logger"] = str(logger)\n'
FIX_TEST = """\
import pretend

from structlog.stdlib import add_logger_name


def test_logger_name_from_the_logger():
    assert add_logger_name(pretend.stub(name="app.db"), "info", {}) == {"logger": "app.db"}
"""


def structlog_history(root: Path) -> DatedHistory:
    from sweworld.repos.pypi import download_sdist, unpack_sdist

    unpack_sdist(download_sdist("structlog", "25.4.0"), root)
    history = DatedHistory(root)
    history.git("init", "-q", "-b", "main")
    history.commit("Import structlog 25.4.0")
    history.edit(STDLIB, GOOD, BAD)
    history.commit("Simplify add_logger_name()")
    history.edit(STDLIB, BAD, GOOD)
    history.write("tests/test_logger_name_fix.py", FIX_TEST)
    history.commit("Fix add_logger_name() writing the logger's repr (#1)")
    return history


def test_dependency_groups_make_a_real_fix_validate(tmp_path):
    history = structlog_history(tmp_path / "history")
    out = tmp_path / "out" / "tasks.jsonl"
    result = CliRunner().invoke(app, ["mine", "--repo", str(history.root), "--out", str(out),
                                      "--name", "hynek/structlog", "--timeout", "300"])
    assert result.exit_code == 0, result.output
    summary = json.loads(out.with_name(out.name + ".summary.json").read_text())
    tasks = list(load_tasks(out))
    assert len(tasks) == 1, summary
    task = tasks[0]
    assert task.FAIL_TO_PASS == ["tests/test_logger_name_fix.py::test_logger_name_from_the_logger"]
    assert {"pretend", "pytest-asyncio>=0.17", "freezegun>=0.2.8"} <= set(task.pip_packages)
    assert any("dependency groups installed: tests" in note for note in task.model_extra["recipe_notes"])


CYTHON_SETUP = """\
from Cython.Build import cythonize
from setuptools import setup

setup(name="fastdemo", version="0.1", packages=["fastdemo"], ext_modules=cythonize("fastdemo/_speed.pyx"))
"""
INIT = "from fastdemo._speed import double\n\n\ndef double_all(xs):\n    return [double(x) for x in xs]\n"
CYTHON_TEST = "from fastdemo import double_all\n\n\ndef test_double_all():\n    assert double_all([1, 21]) == [2, 42]\n"


def test_a_cython_build_the_project_does_not_declare(tmp_path):
    """A legacy setup.py that imports Cython (no [build-system]): an isolated build has no Cython; the
    env is built without isolation with Cython installed, the extension compiles, the fix validates; a
    fix in the .pyx itself validates too (validation reinstalls a patched compiled source, as eval does)."""
    history = DatedHistory(tmp_path / "history")
    history.root.mkdir(parents=True)
    history.write("setup.py", CYTHON_SETUP)
    history.write("fastdemo/__init__.py", INIT)
    history.write("fastdemo/_speed.pyx", "def double(x):\n    return 2 * x\n")
    history.git("init", "-q", "-b", "main")
    history.commit("fastdemo 0.1")
    history.edit("fastdemo/__init__.py", "for x in xs]", "for x in xs[1:]]")
    history.commit("Speed up double_all()")
    history.edit("fastdemo/__init__.py", "for x in xs[1:]]", "for x in xs]")
    history.write("tests/test_speed.py", CYTHON_TEST)
    history.commit("Fix double_all() skipping the first item (#2)")
    history.edit("fastdemo/_speed.pyx", "2 * x", "2 * x + 1")
    history.commit("Speed up double()")
    history.edit("fastdemo/_speed.pyx", "2 * x + 1", "2 * x")  # a fix in the compiled source: rebuilt
    history.write("tests/test_double.py", "from fastdemo._speed import double\n\n\ndef test_double():\n"
                                          "    assert double(4) == 8\n")
    history.commit("Fix double() adding one (#3)")
    out = tmp_path / "out" / "tasks.jsonl"
    result = CliRunner().invoke(app, ["mine", "--repo", str(history.root), "--out", str(out),
                                      "--name", "demo/fastdemo", "--timeout", "300"])
    assert result.exit_code == 0, result.output
    tasks = list(load_tasks(out))
    assert sorted(t.FAIL_TO_PASS for t in tasks) == [["tests/test_double.py::test_double"],
                                                     ["tests/test_speed.py::test_double_all"]], out.with_name(
        out.name + ".summary.json").read_text()
    assert tasks[0].model_extra["build_isolation"] is False and "Cython" in tasks[0].pip_packages
