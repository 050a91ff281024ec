"""The eval script, run for real with bash on a real git repository."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from sweworld.core.types import Task
from sweworld.envs.recipe import EnvRecipe
from sweworld.harness.evalscript import (
    INFRA_EXIT_CODE,
    PATCH_FAILED_MARKER,
    heredoc_delimiter,
    make_eval_script,
    marker,
    new_nonce,
)
from sweworld.harness.grade import extract_test_run, grade

GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}

BASE_FILES = {
    "calc/__init__.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b  # bug\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "tests/test_env.py": (
        "import os\n\n\ndef test_env():\n"
        "    assert os.environ['TZ'] == 'UTC' and os.environ['PYTHONHASHSEED'] == '0'\n"
        "    assert os.environ['LANG'] == 'en_US.UTF-8'  # the recipe's value, kept verbatim\n"
        "    assert os.environ['SWEWORLD_PROBE'] == \"it's $x `y`\"\n"
        "    assert os.environ['FROM_EVAL'] == 'yes'\n"),
}
NEW_TEST = "from calc import add\n\n\ndef test_new():\n    assert add(2, 2) == 4\n"
SUB_TEST = "\n\ndef test_sub():\n    from calc import sub\n    assert sub(3, 1) == 2\n"
F2P = ["tests/test_calc.py::test_sub"]
P2P = ["tests/test_calc.py::test_add", "tests/test_new.py::test_new", "tests/test_env.py::test_env"]


def git(cwd: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True,
                          text=True, input=stdin).stdout


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str, str]:
    """A repository at its base commit, and a test patch that edits one test file and adds one."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    for name, text in BASE_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    base = git(root, "rev-parse", "HEAD").strip()
    with (root / "tests/test_calc.py").open("a") as handle:
        handle.write(SUB_TEST)
    (root / "tests/test_new.py").write_text(NEW_TEST)
    git(root, "add", "-A")
    test_patch = git(root, "diff", "--cached", base)
    git(root, "reset", "-q", "--hard", base)
    return root, base, test_patch


def recipe() -> EnvRecipe:
    return EnvRecipe(test_cmd=f"{shlex.quote(sys.executable)} -m pytest -rA -p no:cacheprovider",
                     env_vars={"LANG": "en_US.UTF-8", "SWEWORLD_PROBE": "it's $x `y`",
                               "PYTHONDONTWRITEBYTECODE": "1"},
                     # `cat` would swallow the rest of a script fed to `bash -s` without </dev/null
                     eval_commands=["FROM_EVAL=yes", "export FROM_EVAL", "cat > /dev/null"])


def run_script(root: Path, base: str, test_patch: str, *, created: list[str] | None = None,
               existing: list[str] | None = None, directives: list[str] | None = None,
               f2p: list[str] = F2P, p2p: list[str] = P2P) -> tuple[subprocess.CompletedProcess, Task, str]:
    nonce = new_nonce()
    task = Task(instance_id="local__calc-1", repo="local/calc", base_commit=base, test_patch=test_patch,
                FAIL_TO_PASS=f2p, PASS_TO_PASS=p2p)
    script = make_eval_script(
        task, recipe(), directives=directives or ["tests/test_calc.py", "tests/test_new.py", "tests/test_env.py"],
        existing_test_files=["tests/test_calc.py"] if existing is None else existing,
        created_test_files=["tests/test_new.py"] if created is None else created,
        nonce=nonce, workdir=str(root))
    env = {k: v for k, v in GIT_ENV.items() if not k.startswith("PYTEST")}
    proc = subprocess.run(["bash", "-s"], input=script, env=env, capture_output=True, text=True, cwd="/")
    return proc, task, nonce


def test_script_text(repo: tuple[Path, str, str]) -> None:
    _, base, test_patch = repo
    task = Task(instance_id="i", repo="r", base_commit=base, test_patch=test_patch)
    script = make_eval_script(task, recipe(), directives=["tests/a b.py"], existing_test_files=["tests/x.py"],
                              created_test_files=[], nonce="0123abcd0123abcd", workdir="/testbed")
    assert "set -e" not in script and "cd /testbed " in script
    deterministic = "export TZ=UTC LC_ALL=C.UTF-8 LANG=C.UTF-8 PYTHONHASHSEED=0\n"
    assert script.index(deterministic) < script.index("export LANG=en_US.UTF-8\n")
    assert f"git checkout {base} -- tests/x.py" in script and "rm -rf" not in script
    assert "'tests/a b.py'" in script and "<<'SWEWORLD_TEST_PATCH_0123abcd0123abcd'" in script
    with pytest.raises(ValueError, match="nonce"):
        make_eval_script(task, recipe(), directives=[], existing_test_files=[], created_test_files=[],
                         nonce="bad nonce")
    with pytest.raises(ValueError, match="inside the repository"):
        make_eval_script(task, recipe(), directives=[], existing_test_files=["../etc/passwd"],
                         created_test_files=[], nonce=new_nonce())


def test_failing_test_from_test_patch_then_tree_reverted(repo: tuple[Path, str, str]) -> None:
    root, base, test_patch = repo
    proc, task, nonce = run_script(root, base, test_patch)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = extract_test_run(proc.stdout, nonce)
    assert run.markers_found and run.test_patch_applied and run.exit_code == 1
    result = grade(task, run)
    assert result.status_map["tests/test_calc.py::test_sub"] == "FAILED"
    assert result.tests_status["FAIL_TO_PASS"]["failure"] == F2P
    assert result.tests_status["PASS_TO_PASS"]["success"] == P2P
    assert result.resolution == "RESOLVED_NO" and not result.crashed
    assert git(root, "status", "--porcelain") == ""


def test_model_fix_resolves_and_model_test_edits_are_overwritten(repo: tuple[Path, str, str]) -> None:
    root, base, test_patch = repo
    fixed = BASE_FILES["calc/__init__.py"].replace("return a + b  # bug", "return a - b")
    (root / "calc/__init__.py").write_text(fixed)
    (root / "tests/test_calc.py").write_text("def test_add():\n    assert False\n")  # model edits a test
    (root / "tests/test_new.py").write_text("garbage that would block the test patch\n")
    proc, task, nonce = run_script(root, base, test_patch)
    assert proc.returncode == 0, proc.stdout
    result = grade(task, extract_test_run(proc.stdout, nonce))
    assert result.resolution == "RESOLVED_FULL" and result.resolved, proc.stdout
    # the model's fix stays; the test files are back at the base commit
    assert git(root, "status", "--porcelain") == " M calc/__init__.py\n"


def test_test_patch_that_does_not_apply_is_an_infra_failure(repo: tuple[Path, str, str]) -> None:
    root, base, test_patch = repo
    broken = test_patch.replace("\n def test_add():\n", "\n def test_add_elsewhere():\n")
    assert broken != test_patch
    proc, task, nonce = run_script(root, base, broken)
    assert proc.returncode == INFRA_EXIT_CODE
    assert marker(PATCH_FAILED_MARKER, nonce) in proc.stdout.splitlines()
    run = extract_test_run(proc.stdout, nonce)
    assert not run.test_patch_applied and not run.markers_found and run.infra_error
    assert not grade(task, run).resolved
    assert git(root, "status", "--porcelain") == ""


def test_heredoc_survives_eof_lines_quotes_and_the_delimiter(repo: tuple[Path, str, str]) -> None:
    root, base, _ = repo
    nasty = ('TEXT = """\nEOF\nEOF_114329324912\n\'single\' "double" $HOME `echo hi` \\$x\n"""\n\n\n'
             'def test_text():\n    assert "$HOME" in TEXT and "`echo hi`" in TEXT and "\\nEOF\\n" in TEXT\n'
             '    assert "\\\\$x" in TEXT\n')
    (root / "tests/test_quotes.py").write_text(nasty)
    git(root, "add", "-A")
    diff = git(root, "diff", "--cached", base)
    git(root, "reset", "-q", "--hard", base)
    # a preamble (as in `git format-patch`) holding bare EOF and delimiter-looking lines
    nonce_free_preamble = "Subject: tricky\n\nEOF\n'EOF'\n\n"
    proc, task, nonce = run_script(root, base, nonce_free_preamble + diff, created=["tests/test_quotes.py"],
                                   existing=[], directives=["tests/test_quotes.py"],
                                   f2p=["tests/test_quotes.py::test_text"], p2p=[])
    result = grade(task, extract_test_run(proc.stdout, nonce))
    assert result.resolved, proc.stdout
    assert git(root, "status", "--porcelain") == ""


def test_heredoc_delimiter_never_a_line_of_the_patch() -> None:
    nonce = "00ff00ff00ff00ff"
    plain = heredoc_delimiter("diff\n", nonce)
    assert nonce in plain
    assert heredoc_delimiter(f"x\n{plain}\n", nonce) not in {"x", plain}
    assert heredoc_delimiter(f"{plain}\n{plain}_X\n", nonce) == plain + "_X_X"


def test_empty_test_patch_and_killed_test_command(repo: tuple[Path, str, str]) -> None:
    root, base, _ = repo
    proc, task, nonce = run_script(root, base, "", created=[], existing=[],
                                   directives=["tests/test_calc.py"], f2p=["tests/test_calc.py::test_add"], p2p=[])
    run = extract_test_run(proc.stdout, nonce)
    assert run.test_patch_applied and run.exit_code == 0 and grade(task, run).resolved
    # a test command that prints PASSED and kills the script: no end marker, no exit code, crash
    task = task.model_copy(update={"FAIL_TO_PASS": ["tests/test_calc.py::test_sub"]})
    script = make_eval_script(task, EnvRecipe(test_cmd="echo PASSED tests/test_calc.py::test_sub; kill -9 $$;"),
                              directives=[], existing_test_files=[], created_test_files=[], nonce=nonce,
                              workdir=str(root))
    killed = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=GIT_ENV)
    run = extract_test_run(killed.stdout, nonce)
    assert killed.returncode == -9 and "PASSED" in run.test_output and run.exit_code is None
    verdict = grade(task, run)
    assert verdict.crashed and not verdict.resolved


def test_missing_locale_falls_back_to_c_utf8(tmp_path):
    from sweworld.core.types import Task
    from sweworld.envs.recipe import EnvRecipe
    from sweworld.harness.evalscript import make_eval_script, new_nonce

    repo = tmp_path / "r"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    task = Task(instance_id="loc", repo="x/y", base_commit="HEAD")
    recipe = EnvRecipe(test_cmd=f"{sys.executable} -c 'import locale; print(locale.getpreferredencoding())'",
                       env_vars={"LANG": "xx_XX.UTF-8", "LC_ALL": "xx_XX.UTF-8"})
    script = make_eval_script(task, recipe, directives=[], existing_test_files=[], created_test_files=[],
                              nonce=new_nonce(), workdir=str(repo))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env).stdout
    assert "is not installed here; using C.UTF-8" in out and "\nUTF-8\n" in out
