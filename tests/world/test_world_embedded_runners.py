"""The embedded SWT's reading of sympy, tox, nox and Django commands, and what it writes for them
that the recorded runs (``test_world_runner_outputs``) do not show: passing wrapped runs, Django's
preamble for other labels, sympy's tests named as SWE-bench names them."""

from __future__ import annotations

import pytest
from swebench.harness.log_parsers.python import parse_log_sympy

from sweworld.core.types import Task
from sweworld.surrogates.swt.djangofmt import learned_parts, preamble
from sweworld.surrogates.swt.model import EmbeddedSWT
from sweworld.surrogates.swt.testcmd import parse_test_command
from sweworld.surrogates.swt.wrappers import Wrapper, wrap
from sweworld.world.context import SWTContext


@pytest.mark.parametrize(("command", "fields"), [
    ("PYTHONWARNINGS='ignore::UserWarning' bin/test -C --verbose sympy/core/tests/test_eval.py -k test_add",
     {"runner": "sympy", "verbosity": 1, "cache": False, "targets": ["sympy/core/tests/test_eval.py"],
      "keyword": "test_add", "tb": "short", "exact": True}),
    ("cd /testbed && python bin/test sympy/core --tb=no",
     {"runner": "sympy", "verbosity": 0, "cache": True, "targets": ["sympy/core"], "tb": "no"}),
    ("tox -e py -- -q tests/test_calc.py 2>&1",
     {"runner": "pytest", "verbosity": -1, "targets": ["tests/test_calc.py"],
      "wrapper": Wrapper("tox", "py", ["-q", "tests/test_calc.py"])}),
    ("tox --current-env -epy39 -v -- tests/roots",
     {"wrapper": Wrapper("tox", "py39", ["tests/roots"]), "exact": True}),
    ("python -m nox -s tests", {"runner": "pytest", "wrapper": Wrapper("nox", "tests", [])}),
    ("tox -e py38,py39", {"exact": False}),
    ("pytest --no-header -rA --tb=no -p no:cacheprovider", {"header": False, "cache": False, "tb": "no"}),
    ("./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 basic",
     {"runner": "django", "verbosity": 2, "parallel": 1, "targets": ["basic"]}),
])
def test_runner_commands_are_read(command, fields):
    run = parse_test_command(command, "/testbed")
    assert {k: getattr(run, k) for k in fields} == fields


def test_a_passing_wrapped_run_gets_the_wrappers_success_lines():
    tox = parse_test_command("tox -e py")
    out, err, code = wrap(tox.wrapper, ["pytest"], "== 3 passed in 0.10s ==\n", "", 0, duration=0.1)
    assert code == 0 and err == "" and out.splitlines()[-3:] == [
        "== 3 passed in 0.10s ==", "  py: OK (1.10=setup[1.00]+cmd[0.10] seconds)",
        "  congratulations :) (1.10 seconds)"]
    nox = parse_test_command("nox -s tests -- -x 2>&1")
    out, err, code = wrap(nox.wrapper, ["pytest", "-x"], "3 passed\n", "", 0, merged=True)
    assert code == 0 and out.splitlines()[-3:] == ["nox > pytest -x", "3 passed",
                                                   "nox > Session tests was successful."]


def test_djangos_preamble_follows_the_labels_and_the_verbosity():
    memory = "('file:memorydb_default?mode=memory&cache=shared')"
    recorded = ("Testing against Django installed in '/testbed/django' with up to 4 processes\n"
                "Importing application basic\nFound 61 test(s).\n"
                f"Creating test database for alias 'default' {memory}...\n"
                "Operations to perform:\n  Apply all migrations: admin\n"
                "System check identified no issues (0 silenced).\n"
                "test_a (basic.tests.T) ... ok\n\n" + "-" * 70 + "\nRan 1 test in 0.1s\n\nOK\n"
                f"Destroying test database for alias 'default' {memory}...\n")
    head, tail = learned_parts(recorded)
    assert len(head) == 7 and tail == [recorded.splitlines()[-1]]
    verbose = parse_test_command("./tests/runtests.py --verbosity 2 --parallel 1 utils_tests.test_text basic")
    assert preamble(verbose, head, 78)[:4] == [
        "Testing against Django installed in '/testbed/django'", "Importing application utils_tests",
        "Importing application basic", "Found 78 test(s)."]
    assert preamble(parse_test_command("./tests/runtests.py basic"), head, 61) == [
        "Testing against Django installed in '/testbed/django' with up to 4 processes", "Found 61 test(s).",
        "Creating test database for alias 'default'...", "System check identified no issues (0 silenced)."]
    assert preamble(verbose, [], 2)[-2:] == ["Found 2 test(s).",
                                             "System check identified no issues (0 silenced)."]


def test_sympy_tests_named_bare_as_swebench_names_them_are_run_from_the_file_the_command_names():
    task = Task(instance_id="sympy__sympy-1", repo="sympy/sympy", base_commit="0" * 40,
                FAIL_TO_PASS=["test_union_AccumBounds"], PASS_TO_PASS=["test_AccumBounds"])
    swt = EmbeddedSWT()
    swt.add_tasks([task])
    path = "sympy/calculus/tests/test_accumulationbounds.py"
    info = {"instance_id": task.instance_id, "repo": task.repo, "base_commit": task.base_commit}
    got = swt.predict(SWTContext(task=info, workdir="/testbed", command=f"bin/test -C --verbose {path}"))
    assert (got.source, got.output.exit_code) == ("tests", 1)
    out = got.output.stdout
    assert f"\n{path}[2] \n" in out and "\ntest_AccumBounds ok" in out and "\ncache:              no\n" in out
    # the last test of a file shares its line with [FAIL]: swebench's parser reads no status there
    assert parse_log_sympy(out, None) == {"test_union_AccumBounds": "FAILED",
                                          f"{path}:test_union_AccumBounds": "FAILED"}
