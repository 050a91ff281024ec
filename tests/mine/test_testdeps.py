"""mine/testdeps: test dependencies read from real projects' own declarations (sdists from PyPI,
cached under $SWEWORLD_HOME) and from small inline files for the edge cases; the row it gives a mined
instance and the recipe that row builds."""

from __future__ import annotations

from pathlib import Path

import pytest

from sweworld.core.types import Task
from sweworld.envs.recipe import resolve_recipe
from sweworld.envs.scripts import env_stage_script
from sweworld.mine.recipes import infer
from sweworld.mine.testdeps import read_test_deps
from sweworld.mine.testdeps.build import plan_build
from sweworld.mine.testdeps.pyproject import load_toml, poetry_constraint
from sweworld.mine.testdeps.tox import condition_holds, env_factors


def sdist_tree(name: str, version: str, root: Path) -> Path:
    """The unpacked sdist of ``name==version`` (downloaded once, then from the cache)."""
    from sweworld.repos.pypi import download_sdist, unpack_sdist

    tree = root / f"{name}-{version}"
    if not tree.exists():
        unpack_sdist(download_sdist(name, version), tree)
    return tree


@pytest.fixture(scope="module")
def sdists(tmp_path_factory):
    root = tmp_path_factory.mktemp("sdists")
    return lambda name, version: sdist_tree(name, version, root)


def write(tree: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(text, encoding="utf-8")
    return tree


# --- real projects ------------------------------------------------------------------------------


@pytest.mark.network
def test_tox_factor_lines_and_named_test_envs(sdists):
    tree = sdists("structlog", "24.4.0")  # extras 'tests: tests' / 'mypy: typing'; [testenv:py3{8,12}-tests{,-colorama,...}]
    under_311 = read_test_deps(tree, "3.11")
    assert under_311.extras == ["tests"] and under_311.requirements == []
    under_312 = read_test_deps(tree, "3.12")  # py312-tests is one of the named env's: its deps, 'py312: twisted' too
    assert under_312.requirements == ["coverage[toml]", "twisted"]  # not 'colorama: colorama', 'rich: rich'
    pluggy = read_test_deps(sdists("pluggy", "1.5.0"), "3.11")  # 'coverage: coverage', 'pytestmain: git+...'
    assert pluggy.extras == ["testing"] and pluggy.requirements == []
    attrs = read_test_deps(sdists("attrs", "24.2.0"), "3.11")
    assert attrs.extras == ["tests"]  # not 'tests-mypy' (mypy: ...) nor 'cov' (py3{7,10,12}-tests only)


@pytest.mark.network
def test_tox_dependency_groups_ini_and_toml(sdists):
    structlog = read_test_deps(sdists("structlog", "25.4.0"), "3.11")  # tox.ini dependency_groups = tests
    assert structlog.groups == ["tests"]
    assert structlog.requirements == ["freezegun>=0.2.8", "pretend", "pytest-asyncio>=0.17", "pytest>=6.0", "simplejson"]
    tox = read_test_deps(sdists("tox", "4.27.0"), "3.11")  # tox.toml: env_run_base dependency_groups = ["test"]
    assert tox.sources[0] == "tox.toml" and tox.groups == ["test"]
    assert "pytest>=8.3.4" in tox.requirements and not any(r.startswith(("mypy", "sphinx")) for r in tox.requirements)
    # the same package under two markers stays twice
    assert {r for r in tox.requirements if r.startswith("setuptools")} == {
        'setuptools>=75.3; python_version <= "3.8"', 'setuptools>=75.8; python_version > "3.8"'}


@pytest.mark.network
def test_noxfile_sessions(sdists):
    nox = read_test_deps(sdists("nox", "2025.5.1"), "3.11")  # install(*PYPROJECT["dependency-groups"]["test"], "uv")
    assert nox.requirements == ["coverage[toml]>=7.2", "pytest>=6", "pytest-cov", "uv"]
    assert nox.extras == ["tox_to_nox"]  # session.install("-e.[tox_to_nox]")
    assert nox.test_cmd.startswith("pytest --cov")
    assert any("not run for tests" in n and "lint" in n and "docs" in n for n in nox.notes)  # pre-commit, sphinx not taken
    older = read_test_deps(sdists("nox", "2024.10.9"), "3.11")  # session.install("-r", "requirements-test.txt")
    assert "flask" in older.requirements and 'uv; python_version >= "3.8"' in older.requirements
    assert any("f'tox{tox_version}'" in n for n in older.notes)  # an f-string: noted, not guessed


@pytest.mark.network
def test_poetry_pdm_hatch_and_dev_groups(sdists):
    tomlkit = read_test_deps(sdists("tomlkit", "0.13.2"), "3.11")  # [tool.poetry.dev-dependencies], ^ constraints
    assert tomlkit.requirements == ["pytest<8,>=7.2.0", "pytest-cov<5,>=4.0.0", "PyYAML<7,>=6.0"]  # no mypy, Sphinx
    cattrs = read_test_deps(sdists("cattrs", "24.1.2"), "3.11")  # pdm groups lint, test, ...: test only
    assert "hypothesis>=6.79.4" in cattrs.requirements and not any("ruff" in r for r in cattrs.requirements)
    urllib3 = read_test_deps(sdists("urllib3", "2.5.0"), "3.11")  # [dependency-groups] dev (no test group)
    assert "pytest>=8.3.4" in urllib3.requirements and not any("towncrier" in r for r in urllib3.requirements)
    platformdirs = read_test_deps(sdists("platformdirs", "4.3.6"), "3.11")  # [tool.hatch.envs.test] features
    assert platformdirs.extras == ["test"]


@pytest.mark.network
def test_build_plans(sdists):
    msgpack = sdists("msgpack", "1.1.0")  # .pyx sources; [build-system] requires setuptools only
    plan = plan_build(msgpack, load_toml(msgpack / "pyproject.toml")[0], "2024-06-01")
    assert not plan.isolation and "Cython" in plan.requires
    pyyaml = sdists("pyyaml", "6.0.2")  # Cython declared: an isolated build gets it
    plan = plan_build(pyyaml, load_toml(pyyaml / "pyproject.toml")[0], "2024-06-01")
    assert plan.isolation and any(r.startswith("Cython") for r in plan.requires)
    old = plan_build(pyyaml, load_toml(pyyaml / "pyproject.toml")[0], "2021-03-01")  # setuptools without PEP 660
    assert not old.isolation and not any(r.startswith("setuptools") for r in old.requires)


# --- edge cases ---------------------------------------------------------------------------------


TOX_INI = """\
[tox]
envlist = py{310,311}-unit, lint, docs

[base]
deps = hypothesis>=6

[testenv]
deps =
    unit: pytest>=7    # a factor prefix: never handed to the installer
    py311,py312: attrs
    py38: oldlib<2
    !docs: requests
    lint: flake8
    {[base]deps}
    -r{toxinidir}/requirements/test.txt
    -c constraints.txt
    .[fast]
    {posargs}
extras =
    test
    docs: sphinx
dependency_groups = unit

[testenv:docs]
deps = sphinx
"""


def test_tox_ini_edge_cases(tmp_path):
    tree = write(tmp_path, {"tox.ini": TOX_INI, "requirements/test.txt": "pytest-mock\n-r base.txt\n",
                            "requirements/base.txt": "six\n",
                            "pyproject.toml": '[dependency-groups]\nunit = ["pretend", {include-group = "more"}]\n'
                                              'more = ["freezegun"]\n'})
    deps = read_test_deps(tree, "3.11")
    assert deps.requirements == ["pytest>=7", "attrs", "requests", "hypothesis>=6", "pytest-mock", "six",
                                 "pretend", "freezegun"]
    assert deps.extras == ["fast", "test"] and deps.groups == ["unit"]
    assert any("constraint file 'constraints.txt'" in n for n in deps.notes)
    assert any("'{posargs}' is not a PEP 508 requirement" in n for n in deps.notes)


@pytest.mark.parametrize("expr, holds", [("unit", True), ("py311,py312", True), ("py38", False), ("!docs", True),
                                         ("lint", False), ("py{310,311}-unit", True), ("py311-django32", False),
                                         ("!py311", False), ("3.11", True)])
def test_factor_conditions(expr, holds):
    assert condition_holds(expr, env_factors("3.11")) is holds


NOXFILE = """\
import nox

DEPS = {"docs": ["sphinx", "furo"], "tests": ["pytest", "hypothesis"]}
LINT = ["ruff"]


def _common(session):
    session.install("--group=test", "coverage")


@nox.session(python=["3.10", "3.11"])
def tests(session):
    session.install(*DEPS["tests"], "-e", ".[test]")
    session.install("--group", "unit")
    session.install("-r", "requirements-test.txt", silent=True)
    session.install(f"tox{session.python}")
    _common(session)
    session.run("pytest", "-q", *session.posargs)


@nox.session(name="lint")
def run_lint(session):
    session.install(*LINT)


@nox.session
def docs(session):
    session.install(*DEPS["docs"])
"""


def test_noxfile_with_dict_keys_groups_and_helpers(tmp_path):
    tree = write(tmp_path, {"noxfile.py": NOXFILE, "requirements-test.txt": "pytest-xdist\n",
                            "pyproject.toml": '[dependency-groups]\ntest = ["pretend"]\nunit = ["freezegun"]\n'
                                              'docs = ["sphinx"]\n'})
    deps = read_test_deps(tree, "3.11")
    # no dict key ('docs', 'tests'), no lint or docs session's tools, no keyword argument
    assert deps.requirements == ["pytest", "hypothesis", "pytest-xdist", "coverage", "freezegun", "pretend"]
    assert deps.extras == ["test"] and deps.groups == ["unit", "test"]
    assert deps.test_cmd == "pytest -q"
    assert any("noxfile.py:16 (session tests)" in n and "f'tox{session.python}'" in n for n in deps.notes)


def test_unreadable_files_are_notes(tmp_path):
    tree = write(tmp_path, {"tox.ini": "deps = pytest\n[testenv\n", "noxfile.py": "def tests(session:\n",
                            "pyproject.toml": "[dependency-groups\n"})
    deps = read_test_deps(tree, "3.11")
    assert deps.requirements == []
    assert any(n.startswith("tox.ini: not readable") for n in deps.notes)
    assert any(n.startswith("noxfile.py:1: not parsable") for n in deps.notes)
    assert any(n.startswith("pyproject.toml: not valid TOML") for n in deps.notes)


def test_group_include_cycle_is_cut(tmp_path):
    tree = write(tmp_path, {"pyproject.toml": '[dependency-groups]\ntest = ["a", {include-group = "b"}]\n'
                                              'b = ["c", {include-group = "test"}]\n'})
    deps = read_test_deps(tree, "3.11")
    assert deps.requirements == ["a", "c"] and any("cycle cut" in n for n in deps.notes)


@pytest.mark.parametrize("poetry, pep440", [("^1.2.3", ">=1.2.3,<2"), ("^0.2.3", ">=0.2.3,<0.3"),
                                            ("^0.0.3", ">=0.0.3,<0.0.4"), ("~1.2", ">=1.2,<1.3"), ("~1", ">=1,<2"),
                                            ("*", ""), (">=1.2,<2", ">=1.2,<2"), (">= 1.2 < 2", ">=1.2,<2"),
                                            ("1.4", "==1.4"), ("1.2 || 2.0", None)])
def test_poetry_constraints(poetry, pep440):
    assert poetry_constraint(poetry) == pep440


# --- the mined row and the recipe it builds ------------------------------------------------------


def test_infer_row_and_its_recipe(tmp_path):
    tree = write(tmp_path, {
        "pyproject.toml": '[build-system]\nrequires = ["setuptools>=61", "setuptools_scm>=7"]\n'
                          'build-backend = "setuptools.build_meta"\n[project]\nname = "demo"\ndynamic = ["version"]\n'
                          'requires-python = ">=3.8"\n[project.optional-dependencies]\ntest = ["pytest"]\n'
                          '[dependency-groups]\ntests = ["pretend>=1.0"]\n',
        "tox.ini": "[testenv]\nextras = speedups\ndeps =\n    unit: pytest-mock\n",
        "src/demo/_speed.pyx": "def f():\n    return 1\n"})
    fields, notes = infer(tree, "2021-05-01", ["3.9", "3.11"])
    assert fields["pip_packages"] == ["pytest", "pytest-mock", "pretend>=1.0", "setuptools_scm>=7", "Cython"]
    assert fields["install_extras"] == ["speedups"] and fields["build_isolation"] is False
    assert any("speedups not among the extras read" in n for n in notes)
    task = Task(instance_id="demo-1", repo="demo/demo", base_commit="0" * 40, **fields)
    recipe = resolve_recipe(task, tree)
    assert recipe.install_extras == ["test", "speedups"] and not recipe.build_isolation
    assert recipe.install == "python -m pip install --no-deps --no-build-isolation -e ."
    script = env_stage_script(recipe, python=Path("/usr/bin/python3"))
    assert "--no-build-isolation -e '.[test,speedups]'" in script
    plain = resolve_recipe(Task(instance_id="demo-2", repo="demo/demo", base_commit="0" * 40, python="3.11"), tree)
    assert plain.build_isolation and "build_isolation" not in plain.env_stage_fields()  # keys of other envs unchanged


@pytest.mark.parametrize("files, flags", [
    ({"tox.ini": "[pytest]\naddopts = -v --cov=arrow --cov-fail-under=99\n"}, ["--no-cov"]),
    ({"pyproject.toml": "[tool.pytest.ini_options]\naddopts = ['--cov', 'pkg']\n"}, ["--no-cov"]),
    ({"setup.cfg": "[tool:pytest]\naddopts = --cov=pkg\n", "pytest.ini": "[pytest]\naddopts = -ra\n"}, []),
    ({"pyproject.toml": "[project]\nname = 'x'\n", "tox.ini": "[pytest]\naddopts = --cov\n"}, ["--no-cov"]),
    ({"setup.cfg": "[metadata]\nname = x\n"}, []),
])
def test_coverage_floors_of_the_projects_addopts_are_turned_off(tmp_path, files, flags):
    """pytest reads the first config that has a section (pytest.ini, pyproject.toml's, tox.ini's, setup.cfg's):
    when its addopts turn pytest-cov on, a run of a few files would fail its floor with no failed test."""
    from sweworld.mine.recipes import infer
    from sweworld.mine.testdeps.pytestcfg import test_flags

    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert test_flags(tmp_path)[0] == flags
    fields, _notes = infer(tmp_path, "2024-05-01", ["3.11"])
    assert fields["test_cmd"] == " ".join(["pytest -rA", *flags])


URLLIB3_NOX = '''
import nox


def tests_impl(session, extras=None, extra_dependencies=None, dependency_group: str = "dev"):
    session.run_install("uv", "sync", "--frozen", "--group", dependency_group)
    if extra_dependencies:
        session.install(*extra_dependencies)
    session.run("python", "-m", "pytest", "-r", "a", "tests/")


@nox.session(python=["3.10", "3.11"])
def test(session):
    tests_impl(session)


@nox.session
def lint(session):
    session.install("pre-commit")
'''
URLLIB3_GROUPS = '''
[dependency-groups]
test = ["pytest>=8.3.4", "trio>=0.27.0"]
dev-base = [{include-group = "test"}, "coverage>=7.8.0"]
dev = [{include-group = "dev-base"}, "trustme>=1.2.1"]
'''


def test_a_nox_helpers_parameter_default_names_the_group(tmp_path):
    """urllib3's noxfile: the test session calls a helper whose --group is its parameter's default ("dev"),
    which includes "test" through "dev-base" and adds trustme; the tests import trustme."""
    from sweworld.mine.testdeps import read_test_deps

    (tmp_path / "noxfile.py").write_text(URLLIB3_NOX)
    (tmp_path / "pyproject.toml").write_text(URLLIB3_GROUPS)
    deps = read_test_deps(tmp_path, "3.11")
    assert deps.groups == ["dev"] and "trustme>=1.2.1" in deps.requirements and "pytest>=8.3.4" in deps.requirements
    assert "pre-commit" not in deps.requirements and not any("not readable" in n for n in deps.notes)


UV_LOCK = '''version = 1
requires-python = ">=3.10"

[[package]]
name = "pytest"
version = "8.3.4"

[[package]]
name = "Pytest_Timeout"
version = "2.3.1"

[[package]]
name = "trio"
version = "0.27.0"

[[package]]
name = "idna"
version = "3.10"

[[package]]
name = "idna"
version = "2.8"

[[package]]
name = "requests"
version = "2.32.3"
'''


def test_a_lock_pins_the_test_tools_as_constraints_of_the_row(tmp_path):
    """uv.lock's versions of the test requirements and pytest's plugins become the row's constraints
    (a package locked twice stays free); the row's recipe obeys them; other locked packages stay free."""
    from sweworld.core.types import Task
    from sweworld.envs.recipes.task import from_task
    from sweworld.mine.recipes import infer

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "1"\n\n[dependency-groups]\n'
                                             'test = ["pytest>=8", "trio", "idna"]\n')
    (tmp_path / "uv.lock").write_text(UV_LOCK)
    fields, notes = infer(tmp_path, "2024-06-01", ["3.11"])
    assert fields["constraints"] == ["pytest==8.3.4", "pytest-timeout==2.3.1", "trio==0.27.0"]
    assert any("locks several versions of idna" in n for n in notes)
    task = Task(instance_id="d__d-1", repo="d/d", base_commit="0" * 40, version="1", **fields)
    assert from_task(task, tmp_path).constraints == fields["constraints"]
