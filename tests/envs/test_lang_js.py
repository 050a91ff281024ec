"""The language layer without a sandbox: JavaScript/TypeScript path rules, detection, the runner and
the package manager read from ``package.json``, the recipe of a mined row and its scripts; Python's
env keys unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sweworld.core.errors import EnvBuildError
from sweworld.core.types import Task
from sweworld.envs import lang
from sweworld.envs.image import image_name
from sweworld.envs.lang import js_env
from sweworld.envs.lang.javascript import is_generated, is_source_path, is_test_path
from sweworld.envs.recipes import EnvRecipe, env_key, resolve_recipe
from sweworld.envs.scripts import instance_stage_script
from sweworld.mine.history import Commit, FileChange
from sweworld.mine.rules import Limits, skip_reason


@pytest.mark.parametrize("path, test, source", [
    ("src/index.ts", False, True), ("lib/router.js", False, True), ("index.mjs", False, True),
    ("src/a.test.ts", True, False), ("src/__tests__/a.js", True, False), ("test/fixtures/x.json", True, False),
    ("tests/util.js", True, False), ("spec/a.spec.js", True, False), ("test.js", True, False),
    ("test.node.js", True, False), ("tests.js", True, False),
    ("types/index.d.ts", False, False), ("types/index.test-d.ts", True, False), ("docs/conf.js", False, False),
    ("examples/app.js", False, False), ("scripts/release.js", False, False), ("src/scripts/x.js", False, True),
    ("package-lock.json", False, False), ("README.md", False, False), ("src/contest.js", False, True),
])
def test_js_paths(path, test, source):
    assert is_test_path(path) is test
    assert is_source_path(path) is source


def test_js_generated_paths():
    assert is_generated("dist/index.js") and is_generated("vendor/x.min.js") and not is_generated("lib/index.js")


def _commit(*files: tuple[str, int]) -> Commit:
    return Commit(sha="c" * 40, parents=("p",), committed="2024-01-01T00:00:00+00:00",
                  authored="2024-01-01T00:00:00+00:00", message="Fix x",
                  files=tuple(FileChange(p, n, 0) for p, n in files))


def test_screening_by_the_language_rules():
    rules = lang.get("javascript").paths
    assert skip_reason(_commit(("src/a.ts", 3), ("src/a.test.ts", 4)), Limits(), rules) is None
    assert skip_reason(_commit(("src/a.ts", 3), ("src/a.test.ts", 4))) == "no source change"  # Python's rules
    assert skip_reason(_commit(("dist/a.js", 3), ("test/a.js", 4)), Limits(), rules) == "generated"
    assert skip_reason(_commit(("types/a.d.ts", 3), ("test/a.js", 4)), Limits(), rules) == "no source change"


def _tree(tmp_path: Path, package: dict, *files: str) -> Path:
    (tmp_path / "package.json").write_text(json.dumps(package))
    for name in files:
        (tmp_path / name).write_text("")
    return tmp_path


def test_detection(tmp_path: Path):
    assert lang.detect(_tree(tmp_path, {"name": "x"})).name == "javascript"
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\n")
    assert lang.detect(tmp_path).name == "python"  # a Python project with a package.json stays Python
    assert lang.detect(tmp_path / "nowhere").name == "python"


@pytest.mark.parametrize("scripts, dev, command, parser", [
    ({"test": "vitest"}, {}, "npx vitest run --reporter=verbose", "parse_log_vitest"),
    ({"test": "jest --coverage"}, {}, "npx jest --verbose --ci --runTestsByPath", "parse_log_jest"),
    ({"test": "nyc mocha 'test/**/*.js'"}, {}, "npx mocha --reporter tap", "parse_log_tap"),
    ({"test": "npm run unit", "unit": "c8 node --test"}, {}, "node --test --test-reporter=tap", "parse_log_tap"),
    ({"test": "node --import tsx --test test/*.ts"}, {}, "node --import tsx --test --test-reporter=tap",
     "parse_log_tap"),
    ({"test": "tape test/*.js"}, {}, "npx tape", "parse_log_tap"),
    ({"test": "tap"}, {}, "npx tap --reporter=tap", "parse_log_tap"),
    ({"test": "make test"}, {"jest": "^29"}, "npx jest --verbose --ci --runTestsByPath", "parse_log_jest"),
])
def test_runner_from_package_json(scripts, dev, command, parser):
    assert js_env.test_runner({"scripts": scripts, "devDependencies": dev}, "x", []) == (command, parser)


def test_no_runner_is_one_error_that_says_so():
    with pytest.raises(EnvBuildError, match=r"no test runner found in package\.json"):
        js_env.test_runner({"scripts": {"test": "echo no tests"}}, "x", [])


def test_unreadable_package_json(tmp_path: Path):
    (tmp_path / "package.json").write_text("{not json")
    with pytest.raises(EnvBuildError, match=r"package\.json unreadable") as info:
        js_env.infer(tmp_path, "2024-05-01T00:00:00+00:00")
    assert "environment commit" in str(info.value)


@pytest.mark.parametrize("lock, expected", [
    ("package-lock.json", "npm ci --ignore-scripts"), ("yarn.lock", "npx --yes yarn@1 install --frozen-lockfile"),
    ("pnpm-lock.yaml", "npx --yes pnpm@8 install --frozen-lockfile"), (None, "npm install --before=2024-05-01"),
])
def test_install_by_lock_file(tmp_path: Path, lock, expected):
    tree = _tree(tmp_path, {"scripts": {"test": "jest"}}, *([lock] if lock else []))
    fields, notes = js_env.infer(tree, "2024-05-01T00:00:00+00:00")
    config = fields["install_config"]
    assert fields["language"] == "javascript" and config["install"].startswith(expected)
    assert "--ignore-scripts" in config["install"] and config["log_parser"] == "parse_log_jest"
    assert any("--ignore-scripts" in n for n in notes)


def _mined_row(tmp_path: Path) -> Task:
    fields, _ = js_env.infer(_tree(tmp_path, {"scripts": {"test": "node --test"}}), "2024-05-01T00:00:00+00:00")
    return Task(instance_id="o__p-1", repo="o/p", base_commit="a" * 40, **fields)


def test_a_mined_row_resolves_to_its_language_recipe(tmp_path: Path):
    task = _mined_row(tmp_path)
    recipe = resolve_recipe(task, None)
    assert recipe.language == "javascript" and recipe.source == "language" and recipe.directives
    assert recipe.env_setup == ["npm install --before=2024-05-01 --ignore-scripts --no-audit --no-fund"
                                " || sweworld_npm_without_gone --ignore-scripts --no-audit --no-fund"]
    assert recipe.install is None and recipe.test_cmd == "node --test --test-reporter=tap"
    assert image_name(task, "auto") is None  # built from its recipe, not run on an image it does not have
    script = instance_stage_script(recipe)
    assert "ln -s /sweworld/venv/node_modules node_modules" in script and "python" not in script
    assert env_key(recipe, "o/p", "a" * 40) != env_key(recipe.model_copy(update={"env_setup": ["npm ci"]}), "o/p",
                                                        "a" * 40)


def test_a_v2_row_with_an_image_stays_on_it():
    row = Task(instance_id="o__p-1", repo="o/p", base_commit="a" * 40, language="javascript",
               docker_image="example/img:1", install_config={"test_cmd": "npx jest a.test.js", "log_parser": "x"})
    assert image_name(row, "auto") == "example/img:1"


def test_python_env_keys_unchanged():
    recipe = EnvRecipe(python="3.9", pip_packages=["pytest"])
    assert "language" not in recipe.env_stage_fields() and "env_setup" not in recipe.env_stage_fields()
    assert env_key(recipe, "o/p", "abc") == "1c07c7ab12255bb8"  # the key before languages


def test_toolchain_or_one_error_naming_what_to_install(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(EnvBuildError, match="not found on PATH") as info:
        js_env.toolchain("repo o/p")
    assert "install Node.js" in str(info.value)


@pytest.mark.network
def test_a_dev_dependency_the_registry_no_longer_has_is_dropped_in_the_env_stage_only(tmp_path):
    """jshttp/cookie pins top-sites 1.1.225, since unpublished: npm install fails on it; the env stage's
    last resort drops it from its own package.json and installs the rest (the real npm registry)."""
    import subprocess

    from sweworld.envs.lang.js_env import GONE_FUNCTION

    package = {"name": "demo", "version": "1.0.0", "devDependencies": {"is-number": "7.0.0", "top-sites": "1.1.225"}}
    (tmp_path / "package.json").write_text(json.dumps(package))
    run = subprocess.run(["bash", "-c", f"set -euo pipefail\n{GONE_FUNCTION}\nsweworld_npm_without_gone --ignore-scripts "
                          f"--no-audit --no-fund --cache {tmp_path / 'cache'}"], cwd=tmp_path, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "devDependency top-sites dropped" in run.stderr
    assert (tmp_path / "node_modules" / "is-number").is_dir()
    assert "top-sites" not in json.loads((tmp_path / "package.json").read_text())["devDependencies"]


def test_a_pretest_build_runs_before_the_tests(tmp_path):
    """yargs: scripts.pretest compiles the TypeScript the tests import; it runs before each test run,
    its output apart, so that a patch to the sources is built before its tests."""
    from sweworld.envs.lang.js_env import PRETEST, infer

    (tmp_path / "package.json").write_text(json.dumps({
        "name": "y", "version": "18.1.0", "scripts": {"pretest": "npm run compile", "compile": "tsc",
                                                      "test": "c8 mocha ./test/*.mjs"},
        "devDependencies": {"mocha": "^10", "typescript": "^5"}}))
    fields, notes = infer(tmp_path, "2026-08-01")
    assert fields["install_config"]["test_cmd"] == f"{PRETEST}; npx mocha --reporter tap"
    assert any("scripts.pretest ('npm run compile') runs before the tests" in n for n in notes)


def test_the_modules_mocha_loads_first_are_carried_over(tmp_path):
    """validator.js: mocha --require @babel/register (its tests are ES modules through Babel); an option
    of another tool before mocha (nyc's -r) is not taken for mocha's."""
    from sweworld.envs.lang.js_env import infer

    (tmp_path / "package.json").write_text(json.dumps({
        "name": "v", "version": "13.15.0",
        "scripts": {"test": "nyc -r text --reporter=cobertura mocha --require @babel/register --reporter dot"},
        "devDependencies": {"mocha": "^10", "nyc": "^15", "@babel/register": "^7"}}))
    fields, _notes = infer(tmp_path, "2024-08-01")
    assert fields["install_config"]["test_cmd"] == "npx mocha --reporter tap --require @babel/register"
