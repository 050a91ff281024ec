"""Test directives and test files from realistic test patches (pure functions, swebench's rules)."""

from __future__ import annotations

from sweworld.core.types import Task
from sweworld.harness.directives import base_test_files, id_targets, test_directives, test_files


def modify(path: str, old: str = "    assert x\n", new: str = "    assert y\n") -> str:
    return (f"diff --git a/{path} b/{path}\nindex 1111111..2222222 100644\n--- a/{path}\n+++ b/{path}\n"
            f"@@ -10,3 +10,3 @@ def test_old():\n     pass\n-{old}+{new}     return\n")


def create(path: str, text: str = "def test_new():\n    assert True\n") -> str:
    lines = text.splitlines(keepends=True)
    return (f"diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..3333333\n--- /dev/null\n"
            f"+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n" + "".join("+" + line for line in lines))


def delete(path: str) -> str:
    return (f"diff --git a/{path} b/{path}\ndeleted file mode 100644\nindex 4444444..0000000\n"
            f"--- a/{path}\n+++ /dev/null\n@@ -1 +0,0 @@\n-def test_gone(): pass\n")


RENAME = ("diff --git a/tests/test_old_name.py b/tests/test_new_name.py\nsimilarity index 100%\n"
          "rename from tests/test_old_name.py\nrename to tests/test_new_name.py\n")


def task(repo: str, test_patch: str, f2p: list[str] | None = None, p2p: list[str] | None = None) -> Task:
    return Task(instance_id=f"{repo.replace('/', '__')}-1", repo=repo, base_commit="abc123",
                test_patch=test_patch, FAIL_TO_PASS=f2p or [], PASS_TO_PASS=p2p or [])


def test_a_pytest_repository_unknown_to_swebench():
    patch = (modify("tests/test_core.py") + create("tests/test_new.py")
             + modify("tests/data/expected.json", ' "a": 1\n', ' "a": 2\n') + create("tests/fixtures/cases.csv", "a,b\n")
             + modify("docs/changes.md", " old\n", " new\n"))
    assert test_files(patch) == ["tests/test_core.py", "tests/test_new.py", "tests/data/expected.json",
                                 "tests/fixtures/cases.csv", "docs/changes.md"]
    assert test_directives(task("acme/widgets", patch)) == ["tests/test_core.py", "tests/test_new.py"]


def test_django_gets_module_labels_from_swebench():
    patch = modify("tests/admin_views/tests.py") + modify("tests/admin_views/models.py") + create(
        "tests/admin_views/templates/custom.html", "<p>x</p>\n")
    assert test_directives(task("django/django", patch)) == [
        "admin_views.tests", "admin_views.models", "admin_views.templates.custom.html"]


def test_sympy_gets_file_paths():
    patch = modify("sympy/core/tests/test_basic.py") + modify("sympy/printing/tests/test_latex.py")
    assert test_directives(task("sympy/sympy", patch)) == [
        "sympy/core/tests/test_basic.py", "sympy/printing/tests/test_latex.py"]


def test_known_pytest_repository_drops_non_test_files():
    patch = modify("testing/test_assertion.py") + create("testing/example_scripts/data.txt", "x\n")
    assert test_directives(task("pytest-dev/pytest", patch)) == ["testing/test_assertion.py"]


def test_empty_test_patch_uses_the_test_ids():
    f2p = ["tests/test_parse.py::TestParser::test_dates[2020-01-01::T]", "tests/test_parse.py::test_plain"]
    p2p = ["tests/unit/test_io.py::test_read", "tests/unit/test_io.py", "tests/test_parse.py::test_other"]
    assert test_directives(task("acme/widgets", "", f2p, p2p)) == ["tests/test_parse.py", "tests/unit/test_io.py"]


def test_empty_test_patch_with_django_ids_gives_labels():
    ids = ["test_changelist_view (admin_views.tests.AdminViewBasicTest)",
           "test_login (auth_tests.test_views.LoginTest.test_login)",
           "test_x (utils_tests.test_http.Base64Tests)\nA docstring line that Django prints.",
           "test_sympy_only_name"]
    assert test_directives(task("django/django", "", ids)) == [
        "admin_views.tests", "auth_tests.test_views", "utils_tests.test_http"]
    assert id_targets(["test_sympy_only_name"]) == []


def test_files_created_versus_existing():
    patch = (modify("tests/test_core.py") + create("tests/test_new.py") + delete("tests/test_gone.py") + RENAME
             + create("tests/conftest.py", "import pytest\n"))
    existing, created = base_test_files(patch)
    assert existing == ["tests/test_core.py", "tests/test_gone.py", "tests/test_old_name.py"]
    assert created == ["tests/test_new.py", "tests/test_new_name.py", "tests/conftest.py"]
    assert test_files(patch) == ["tests/test_core.py", "tests/test_new.py", "tests/test_gone.py",
                                 "tests/test_old_name.py", "tests/test_new_name.py", "tests/conftest.py"]
    assert base_test_files("") == ([], [])


def test_a_copy_source_is_read_not_modified():
    copy = ("diff --git a/tests/test_a.py b/tests/test_b.py\nsimilarity index 100%\n"
            "copy from tests/test_a.py\ncopy to tests/test_b.py\n")
    assert test_files(copy) == ["tests/test_b.py"]
    assert base_test_files(copy) == ([], ["tests/test_b.py"])


def test_a_malformed_test_patch_still_gives_its_files():
    broken = "diff --git a/tests/test_x.py b/tests/test_x.py\n--- a/tests/test_x.py\n+++ b/tests/test_x.py\n@@ -1,5 +1,5 @@\n x\n"
    assert test_files(broken) == ["tests/test_x.py"]
    assert base_test_files(broken) == (["tests/test_x.py"], [])


MYPY_CASES = (modify("test-data/unit/check-classes.test", "[out]\n", "[out]\n")
              + create("test-data/unit/check-narrowing.test",
                       "[case testNarrowOnIsinstance]\nx: int | str\n[builtins fixtures/isinstance.pyi]\n\n"
                       "[case testNarrowOnIsinstance-skip]\nx: int\n\n[case testNarrowOnIsinstance]\n"))


def test_a_command_ending_in_k_runs_the_mypy_cases_the_test_patch_adds():
    from sweworld.envs.recipe import resolve_recipe
    from sweworld.world.context import test_command

    mypy = task("python/mypy", MYPY_CASES).model_copy(update={"version": "1.10"})
    recipe = resolve_recipe(mypy, None)  # SWE-Gym's spec: "pytest -rA -k", nothing read from a tree
    assert recipe.source == "swegym" and recipe.test_cmd == "pytest -rA -k"
    # SWE-Gym's make_test_command: the added case names joined with " or ", once each, and no files
    assert test_directives(mypy, recipe.test_cmd) == ["testNarrowOnIsinstance or testNarrowOnIsinstance-skip"]
    assert test_command(mypy, recipe.test_cmd) == "pytest -rA -k 'testNarrowOnIsinstance or testNarrowOnIsinstance-skip'"
    assert test_directives(task("python/mypy", modify("mypy/test/testcheck.py")), "pytest -n0 -rA -k") == []
    assert test_directives(mypy, "pytest -rA") == ["test-data/unit/check-classes.test",
                                                   "test-data/unit/check-narrowing.test"]
