"""The pieces of ``sweworld mine`` that need no sandbox: path rules, screening, the diff split, the
version of a commit, recipes, statements (a real local chat server) and the CLI's bad input."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chatserver import ChatServer
from sweworld.cli.app import app
from sweworld.cli.demo.mine import History
from sweworld.core.types import Task
from sweworld.envs.recipe import resolve_recipe
from sweworld.mine.history import Commit, FileChange, first_parent_chain, step_diff
from sweworld.mine.recipes import era_python, version_for
from sweworld.mine.rules import Limits, is_test_path, skip_reason
from sweworld.mine.split import split_diff
from sweworld.mine.statement import leaked_line, model_statement, pull_number, references
from sweworld.mine.version import read_version, snap
from sweworld.models.base import ModelConfig
from sweworld.models.openai import OpenAIChatModel


@pytest.mark.parametrize("path, expected", [
    ("tests/test_x.py", True), ("pkg/tests/data/input.json", True), ("testing/util.py", True),
    ("pylint/testutils/checker.py", True), ("src/pkg/test_mod.py", True), ("pkg/mod_test.py", True),
    ("conftest.py", True), ("e2e/run.py", True), ("pkg/core.py", False), ("pytest_plugin/x.py", False),
    ("src/pkg/contest.py", False), ("docs/testing.rst", False),
])
def test_test_paths(path, expected):
    assert is_test_path(path) is expected


def _commit(message: str, *files: tuple[str, int | None], parents=("p",)) -> Commit:
    return Commit(sha="c" * 40, parents=parents, committed="2023-01-01T00:00:00+00:00",
                  authored="2023-01-01T00:00:00+00:00", message=message,
                  files=tuple(FileChange(p, n, 0 if n is not None else None) for p, n in files))


@pytest.mark.parametrize("commit, reason", [
    (_commit("Fix x", ("pkg/a.py", 3), ("tests/test_a.py", 5)), None),
    (_commit("Fix x", ("pkg/a.py", 3), ("tests/test_a.py", 5), parents=()), "root commit"),
    (_commit("Revert \"Fix x\"", ("pkg/a.py", 3), ("tests/test_a.py", 5)), "revert"),
    (_commit("Bump version to 1.2.3", ("pkg/a.py", 1), ("tests/test_a.py", 1)), "release"),
    (_commit("1.2.3", ("pkg/a.py", 1), ("tests/test_a.py", 1)), "release"),
    (_commit("Docs", ("docs/index.rst", 3), ("CHANGES.rst", 2)), "docs only"),
    (_commit("Tests", ("tests/test_a.py", 3)), "tests only"),
    (_commit("CI", (".github/workflows/ci.yml", 3), ("tests/test_a.py", 1)), "no source change"),
    (_commit("Refactor", ("pkg/a.py", 3)), "no test change"),
    (_commit("Vendor", ("pkg/_vendor/six.py", 3), ("tests/test_a.py", 1)), "vendored"),
    (_commit("Regen", ("pkg/api_pb2.py", 30), ("tests/test_a.py", 1)), "generated"),
    (_commit("Logo", ("pkg/a.py", 3), ("tests/data/logo.png", None)), "binary files"),
    (_commit("Big", ("pkg/a.py", 401), ("tests/test_a.py", 1)), "patch over 400 lines"),
])
def test_skip_reasons(commit, reason):
    assert skip_reason(commit, Limits()) == reason


def _git(root: Path):
    """``git(root, *args)`` with a fixed author and date (the demo history's)."""
    runner = History(root)
    return lambda _cwd, *args: runner.git(*args)


@pytest.fixture
def history(tmp_path: Path) -> Path:
    """A real repository: a package, then a fix with its test merged from a branch (--no-ff)."""
    root = tmp_path / "repo"
    root.mkdir()
    git = _git(root)
    git(root, "init", "-q", "-b", "main")
    (root / "pkg").mkdir()
    (root / "tests").mkdir()
    (root / "pkg" / "__init__.py").write_text('__version__ = "1.4.2"\n\ndef add(a, b):\n    return a - b\n\n \n')
    (root / "tests" / "test_old.py").write_text("def test_old():\n    assert True\n\n \n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "initial")
    git(root, "checkout", "-qb", "fix")
    (root / "pkg" / "__init__.py").write_text('__version__ = "1.4.2"\n\ndef add(a, b):\n    return a + b\n\n \n')
    (root / "tests" / "test_add.py").write_text("from pkg import add\n\ndef test_add():\n    assert add(1, 2) == 3\n")
    (root / "tests" / "test_old.py").write_text("def test_old():\n    assert 1\n\n \n")  # ends in a line of a space
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Fix add (fixes #12)")
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "fix", "-m", "Merge pull request #13 from someone/fix\n\nFix add")
    return root


def test_history_split_and_version(history: Path):
    chain = first_parent_chain(history / ".git")
    assert [c.is_merge for c in chain] == [True, False]  # the branch's own commit is not a step
    merge = chain[0]
    assert {f.path for f in merge.files} == {"pkg/__init__.py", "tests/test_add.py", "tests/test_old.py"}
    assert skip_reason(merge) is None
    diff = step_diff(history / ".git", merge)
    assert diff.endswith("\n  \n")  # a context line of one space survives (git() would strip it)
    patch, test_patch = split_diff(diff)
    assert "pkg/__init__.py" in patch and "tests/" not in patch
    assert "tests/test_add.py" in test_patch and "pkg/" not in test_patch
    History(history).git("checkout", "-q", merge.first_parent)
    for part in (patch, test_patch):
        subprocess.run(["git", "apply", "--check", "-"], cwd=history, input=part, text=True, check=True)
    assert read_version(history / ".git", merge.first_parent) == ("1.4", "pkg/__init__.py")
    assert pull_number(merge.message) == "13"
    assert references(merge.message) == ("#13",)


def test_version_snaps_to_known_lines():
    assert snap("0.15", ["0.12", "0.18", "2022.03"]) == "0.12"  # as SWE-bench's xarray rows
    assert snap("2022.06", ["0.12", "0.18", "2022.03"]) == "2022.03"
    assert snap("0.1", ["0.12", "0.18"]) == "0.12"
    assert snap("0.18", ["0.12", "0.18"]) == "0.18"
    assert version_for("psf/requests", "2.0")[0] == "swebench"
    assert version_for("getmoto/moto", "5.0") == ("swegym", "5.0")
    assert version_for("someone/else", "3.1") == ("inferred", "3.1")


def test_swegym_spec_is_the_recipe_of_its_repositories():
    task = Task(instance_id="getmoto__moto-1", repo="getmoto/moto", base_commit="a" * 40, version="5.0")
    recipe = resolve_recipe(task, None)
    assert recipe.source == "swegym"
    assert recipe.python == "3.12" and recipe.install == "make init" and recipe.test_cmd == "pytest -n0 -rA"


def test_era_python():
    available = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13"]
    assert era_python("2020-06-01", [], None, available)[0] == "3.8"
    assert era_python("2023-06-01", ["3.8", "3.9", "3.10"], ">=3.8", available)[0] == "3.10"
    assert era_python("2024-12-01", [], ">=3.8,<3.12", available)[0] == "3.11"


PATCH = ("diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1,2 +1,2 @@\n"
         " def add(a, b):\n-    return a - b\n+    return functools.reduce(operator.add, (a, b))\n")


def test_statement_from_a_model_refuses_the_fix():
    leaky = "add is wrong. Use `return functools.reduce(operator.add, (a, b))` instead."
    assert leaked_line(leaky, PATCH) == "return functools.reduce(operator.add, (a, b))"
    good = "`add(1, 2)` returns -1; expected 3."
    with ChatServer([leaky, good]) as server:
        model = OpenAIChatModel(ModelConfig(url=server.url, model="m", max_retries=0))
        refused = model_statement(model, repo="o/p", message="Fix add (#5)", fail_to_pass=["t::x"], patch=PATCH,
                                  test_patch="")
        written = model_statement(model, repo="o/p", message="Fix add (#5)", fail_to_pass=["t::x"], patch=PATCH,
                                  test_patch="")
        prompt = server.requests[0]["messages"][0]["content"]
    assert refused.source.startswith("message (model refused: the reply quotes the fix")
    assert refused.text.startswith("Fix add (#5)") and refused.references == ("#5",)
    assert written.source == "model" and written.text == good + "\n"
    assert "t::x" in prompt and "Fix add (#5)" in prompt and "return a - b" in prompt


@pytest.mark.parametrize("args, expected", [
    (["--repo", "{tmp}/nothing-here"], "does not exist"),
    (["--repo", "{tmp}"], "is not a git repository"),
    (["--repo", "file://{tmp}/absent.git"], "cannot be cloned"),
    (["--repo", "{repo}", "--until", "1990-01-01"], "no commits on the first-parent chain"),
    (["--repo", "{repo}", "--commit", "0123456789abcdef0123456789abcdef01234567"], "is not in the repository"),
])
def test_bad_input_is_one_clear_error(tmp_path: Path, history: Path, args, expected):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "tasks.jsonl").write_text('{"kept": "from before"}\n')
    argv = [a.format(tmp=tmp_path / "plain", repo=history) for a in args]
    (tmp_path / "plain").mkdir()
    result = CliRunner().invoke(app, ["mine", *argv, "--out", str(tmp_path / "out" / "tasks.jsonl")])
    assert result.exit_code != 0
    assert expected in " ".join(result.output.split()), result.output
    assert "Traceback" not in result.output
    assert (tmp_path / "out" / "tasks.jsonl").read_text() == '{"kept": "from before"}\n'  # nothing lost


def test_a_fix_merged_into_a_maintenance_branch_is_a_step(history: Path):
    from sweworld.mine.repository import steps

    git = _git(history)

    git(history, "checkout", "-qb", "1.4.x", "HEAD~1")  # the state before the fix reached main
    git(history, "checkout", "-qb", "backport")
    (history / "pkg" / "extra.py").write_text("def sub(a, b):\n    return a - b\n")
    (history / "tests" / "test_extra.py").write_text("from pkg.extra import sub\n\ndef test_sub():\n    assert sub(3, 1) == 2\n")
    git(history, "add", "-A")
    git(history, "commit", "-qm", "Add sub")
    git(history, "checkout", "-q", "1.4.x")
    git(history, "merge", "-q", "--no-ff", "backport", "-m", "Merge pull request #20 from someone/backport")
    git(history, "branch", "-D", "backport")
    git(history, "checkout", "-q", "main")
    git(history, "merge", "-q", "--no-ff", "1.4.x", "-m", "Merge branch '1.4.x'")
    git(history, "branch", "-D", "1.4.x")  # gone, as maintenance branches go
    walked = steps(history / ".git", rev="HEAD", since=None, until=None, commits=None)
    by_subject = {c.subject: c for c in walked}
    assert set(by_subject) == {"Merge branch '1.4.x'", "Merge pull request #20 from someone/backport",
                               "Merge pull request #13 from someone/fix", "initial"}  # not "Add sub": inside #20
    assert skip_reason(by_subject["Merge branch '1.4.x'"]) == "branch merge"
    backport = by_subject["Merge pull request #20 from someone/backport"]
    assert skip_reason(backport) is None
    assert [f.path for f in backport.files] == ["pkg/extra.py", "tests/test_extra.py"]


def test_provenance_names_the_recipe_table_and_the_spec_version():
    from sweworld.mine.recipes import provenance

    swebench = provenance("psf/requests", "swebench", "2.0")
    assert swebench["recipe_source"] == "swebench" and swebench["recipe_spec_version"] == "2.0"
    assert swebench["recipe_specs"].startswith("swebench==")
    assert provenance("getmoto/moto", "swegym", "5.0")["recipe_spec_version"] == "5.0"
    assert provenance("getmoto/moto", "swegym", "0.0.1")["recipe_spec_version"] is None  # no spec: the default
    assert provenance("someone/else", "inferred", "3.1") == {"recipe_source": "inferred", "recipe_spec_version": None,
                                                            "recipe_specs": None}


def _mine_excluding(tmp_path: Path, history: Path, rows: list[dict]) -> dict:
    import json

    excluded = tmp_path / "verified.jsonl"
    excluded.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out" / "tasks.jsonl"
    result = CliRunner().invoke(app, ["mine", "--repo", str(history), "--name", "someone/pkg", "--out", str(out),
                                      "--exclude", str(excluded), "--exclude", "lite"])
    assert result.exit_code == 0, result.output
    return json.loads(out.with_name(out.name + ".summary.json").read_text())


@pytest.mark.parametrize("field, reason", [("base_commit", "base commit"), ("mined_from", "fix commit"),
                                           ("instance_id", "instance id")])
def test_exclude_drops_what_a_dataset_holds_and_counts_it(tmp_path: Path, history: Path, field, reason):
    merge = first_parent_chain(history / ".git")[0]
    row = {"instance_id": "someone__pkg-99", "repo": "someone/pkg", "base_commit": "0" * 40}
    row.update({"base_commit": merge.first_parent} if field == "base_commit" else
               {"mined_from": merge.sha} if field == "mined_from" else {"instance_id": "someone__pkg-13"})
    summary = _mine_excluding(tmp_path, history, [row])
    name = str(tmp_path / "verified.jsonl")
    assert summary["candidates"] == 0 and summary["dropped"][f"excluded: {reason} in {name}"] == 1
    assert summary["exclude"][name] == {"rows": 1, "excluded": 1} and summary["exclude"]["lite"]["excluded"] == 0


def test_exclude_keeps_what_no_dataset_holds(tmp_path: Path, history: Path):
    from sweworld.mine.candidates import screen
    from sweworld.mine.exclude import Excluded

    other = Task(instance_id="someone__pkg-99", repo="someone/pkg", base_commit="0" * 40, mined_from="1" * 40)
    chain = first_parent_chain(history / ".git")
    screened = screen(chain, mirror=history / ".git", repo="someone/pkg", source="local", limits=Limits(),
                      tree_of=lambda sha: history, available_pythons=["3.11"], excluded=[Excluded.of("x", [other])])
    assert [c.task.instance_id for c in screened.candidates] == ["someone__pkg-13"]
    assert screened.candidates[0].task.model_extra["mined_from"] == chain[0].sha
