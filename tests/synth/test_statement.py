"""Issue text from real pytest output: a small buggy library and its tests, run by real pytest."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from chatserver import ChatServer
from sweworld.models.base import ModelConfig
from sweworld.models.openai import OpenAIChatModel
from sweworld.synth.statement import Failure, failure_details, model_statement, write_statement

LIBRARY = '''\
import traceback


def first(items, default=None):
    for item in items:
        return default
    return default


def lookup(table, key):
    return table[key.upper()]


def remote_divide(a, b):
    try:
        return a / (b - b)
    except ZeroDivisionError:
        raise RuntimeError("remote call failed:\\n" + traceback.format_exc()) from None


class Box:
    def __init__(self, size):
        if size < 10:
            raise ValueError(f"bad size {size}")
        self.size = size
'''
# (original, mutated) text of each injected bug in LIBRARY
BUGS = [("return item", "return default"), ("return table[key]", "return table[key.upper()]"),
        ("return a / b", "return a / (b - b)"), ("if size < 0:", "if size < 10:")]
FORBIDDEN = [text for bug in BUGS for text in bug]

TESTS = '''\
import unittest

import pytest

from pkg.calc import Box, first, lookup, remote_divide


def test_first():
    assert first([1, 2]) == 1


def test_passes():
    assert first([]) is None


class FirstTests(unittest.TestCase):
    def test_single(self):
        self.assertEqual(first([3], 0), 3)


class TestLookup:
    def test_key(self):
        assert lookup({"a": 1}, "a") == 1


@pytest.mark.parametrize("a,b", [(1, 2), (6, 3)])
def test_remote_divide(a, b):
    assert remote_divide(a, b) == a / b


@pytest.fixture
def box():
    return Box(3)


def test_box(box):
    assert box.size == 3
'''
OTHER = '''\
from pkg.calc import first


def test_first():
    value = first(["x", "y"])
    assert value == "x"
'''
CALC, OTHER_FILE = "tests/test_calc.py", "tests/test_other.py"
FAILING = [f"{CALC}::test_first", f"{CALC}::FirstTests::test_single", f"{CALC}::TestLookup::test_key",
           f"{CALC}::test_remote_divide[1-2]", f"{CALC}::test_remote_divide[6-3]", f"{CALC}::test_box",
           f"{OTHER_FILE}::test_first"]


QUIET = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # the inner runs start faster


def pytest_cmd() -> str:
    return f"{shlex.quote(sys.executable)} -m pytest -p no:cacheprovider"


def run_pytest(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", *args],
                          cwd=root, env=QUIET, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("proj")
    for name, text in {"pkg/__init__.py": "", "pkg/calc.py": LIBRARY, CALC: TESTS, OTHER_FILE: OTHER}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.fixture(scope="module")
def outputs(project: Path) -> dict[str, str]:
    """Real pytest output of the buggy project for each traceback style."""
    result = {}
    for tb in ("short", "long", "no"):
        run = run_pytest(project, f"--tb={tb}", "tests")
        assert run.returncode == 1, run.stdout + run.stderr
        result[tb] = run.stdout
    return result


@pytest.fixture(scope="module")
def details(outputs: dict[str, str]) -> dict[str, Failure]:
    return failure_details(outputs["short"], FAILING)


def where(path: str, text: str, line: str) -> str:
    """``path:N`` of the line of ``text`` that contains ``line``."""
    return f"{path}:{next(i for i, x in enumerate(text.splitlines(), 1) if line in x)}"


def library_lines() -> list[str]:
    return [line.strip() for line in LIBRARY.splitlines() if len(line.strip()) >= 8]


def assert_hides_the_fix(text: str) -> None:
    flat = "".join(text.split())
    for snippet in FORBIDDEN:
        assert "".join(snippet.split()) not in flat, snippet
    for line in library_lines():
        assert line not in text, line
    assert not re.search(r"pkg/calc\.py(:\d|\", line)", text)


@pytest.mark.parametrize("tb", ["short", "long"])
def test_failure_details_of_real_output(outputs: dict[str, str], tb: str):
    found = failure_details(outputs[tb], FAILING)
    assert list(found) == FAILING
    first = found[f"{CALC}::test_first"]
    assert (first.when, first.exc_type, first.raised_in_test) == ("call", "AssertionError", True)
    assert first.message.splitlines() == ["assert None == 1", " +  where None = first([1, 2])"]
    assert first.location == where(CALC, TESTS, "assert first([1, 2]) == 1")
    assert first.statement == "assert first([1, 2]) == 1"
    assert first.summary == "assert None == 1"

    unit = found[f"{CALC}::FirstTests::test_single"]
    assert (unit.exc_type, unit.message) == ("AssertionError", "AssertionError: 0 != 3")
    assert unit.statement == "self.assertEqual(first([3], 0), 3)"

    key = found[f"{CALC}::TestLookup::test_key"]
    assert (key.exc_type, key.message, key.raised_in_test) == ("KeyError", "KeyError: 'A'", False)
    assert key.location == where(CALC, TESTS, "assert lookup(")  # the test frame, not the library's

    for param in ("1-2", "6-3"):
        remote = found[f"{CALC}::test_remote_divide[{param}]"]
        assert remote.exc_type == "RuntimeError"
        assert remote.message.startswith("RuntimeError: remote call failed:")
        assert "ZeroDivisionError: division by zero" in remote.message
        assert "return a / (b - b)" in remote.message  # the library source quoted in the E lines
        assert remote.location == where(CALC, TESTS, "assert remote_divide(a, b) == a / b")

    box = found[f"{CALC}::test_box"]
    assert (box.when, box.exc_type, box.message) == ("setup", "ValueError", "ValueError: bad size 3")
    assert (box.location, box.statement) == (where(CALC, TESTS, "return Box(3)"), "return Box(3)")

    other = found[f"{OTHER_FILE}::test_first"]  # same block header as tests/test_calc.py::test_first
    assert other.location == where(OTHER_FILE, OTHER, 'assert value == "x"')
    assert other.message == "AssertionError: assert None == 'x'"


def test_failure_details_from_the_summary_alone(outputs: dict[str, str]):
    missing = f"{CALC}::test_not_there"
    found = failure_details(outputs["no"], [*FAILING, missing])
    assert found[f"{CALC}::TestLookup::test_key"].message == "KeyError: 'A'"
    assert found[f"{CALC}::TestLookup::test_key"].exc_type == "KeyError"
    assert found[f"{CALC}::test_first"].exc_type == "AssertionError"
    box = found[f"{CALC}::test_box"]
    assert (box.when, box.exc_type, box.location) == ("setup", "ValueError", None)
    assert found[missing] == Failure(test=missing)
    assert f"{CALC}::test_passes" not in found


def test_statement_reports_the_failures(details: dict[str, Failure]):
    text = write_statement(details, repo="acme/calc", forbidden=FORBIDDEN, max_tests=5)
    assert_hides_the_fix(text)
    for test in FAILING[:5]:
        assert f"`{test}`" in text
    assert FAILING[6] not in text and "- and 2 more" in text
    for shown in ("`AssertionError`", "`KeyError`", "KeyError: 'A'", "AssertionError: 0 != 3",
                  "ZeroDivisionError: division by zero", "RuntimeError: remote call failed:",
                  "Expected `1`, but got `None` (`first([1, 2])` gives `None`).",
                  f"at `{where(CALC, TESTS, 'assert lookup(')}`", "assert lookup({\"a\": 1}, \"a\") == 1"):
        assert shown in text, shown
    # the two parametrized cases share one error: told once, the second named
    assert text.count("RuntimeError: remote call failed:") == 1
    assert f"The same error shows up in `{CALC}::test_remote_divide[6-3]`." in text
    command = "python -m pytest " + " ".join(shlex.quote(t) for t in FAILING[:5])
    assert command in text and "python -m pytest tests/test_calc.py tests/test_other.py  # all of them" in text
    assert text.splitlines()[0].endswith("7 tests in 2 test files fail")


def test_statement_drops_leaking_message_lines(details: dict[str, Failure]):
    remote = [details[f"{CALC}::test_remote_divide[1-2]"]]
    plain = write_statement(remote, repo="acme/calc")  # no forbidden text: library frames still go
    assert "Traceback (most recent call last):" in plain and "ZeroDivisionError: division by zero" in plain
    assert "return a / (b - b)" not in plain and "pkg/calc.py" not in plain
    hidden = write_statement(remote, repo="acme/calc", forbidden=["remote  call failed"])
    assert "remote call failed" not in hidden and "ZeroDivisionError: division by zero" in hidden


def test_statement_title_and_determinism(details: dict[str, Failure]):
    firsts = [details[f"{CALC}::test_first"], details[f"{CALC}::FirstTests::test_single"]]
    text = write_statement(firsts, repo="acme/calc", forbidden=FORBIDDEN)
    assert "`first()`" in text.splitlines()[0] and "2 tests in tests/test_calc.py fail" in text.splitlines()[0]
    assert "Expected `3`, but got `0`." in text
    assert text == write_statement(firsts, repo="acme/calc", forbidden=FORBIDDEN)
    assert text == write_statement({f.test: f for f in firsts}, repo="acme/calc", forbidden=FORBIDDEN)
    titles = {write_statement(firsts, repo="acme/calc", seed=seed).splitlines()[0] for seed in range(12)}
    assert len(titles) > 1
    one = write_statement([details[f"{CALC}::test_box"]], repo="acme/calc", forbidden=FORBIDDEN)
    assert "1 test in tests/test_calc.py fails" in one and "fails during setup with `ValueError`" in one
    assert "`Box()`" in one.splitlines()[0]
    assert_hides_the_fix(one)


def test_reproduce_commands_run(project: Path, details: dict[str, Failure]):
    text = write_statement(details, repo="acme/calc", test_cmd=pytest_cmd(), max_tests=3)
    block = text.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert len(block) == 2
    for command, expected in zip(block, (FAILING[:3], FAILING), strict=True):
        run = subprocess.run(command, shell=True, cwd=project, env=QUIET, capture_output=True, text=True,
                             timeout=120)
        assert run.returncode == 1
        assert failure_details(run.stdout, expected).keys() == set(expected)
        for test in expected:
            assert re.search(rf"^(FAILED|ERROR) {re.escape(test)} - ", run.stdout + "\n", re.M), test


def model_for(server: ChatServer) -> OpenAIChatModel:
    return OpenAIChatModel(ModelConfig(url=server.url, model="m", max_retries=0, api_key_env=""))


def test_model_statement_uses_the_reply(details: dict[str, Failure]):
    reply = "# first() ignores the items\n\nCalling `first([1, 2])` gives `None` instead of `1`."
    with ChatServer([reply]) as server, model_for(server) as model:
        result = model_statement(model, details, repo="acme/calc", forbidden=FORBIDDEN, max_tests=5)
    assert (result.source, result.reason, result.text) == ("model", None, reply + "\n")
    prompt = "\n".join(m["content"] for m in server.requests[0]["messages"])
    for test in FAILING[:5]:
        assert test in prompt
    assert "KeyError: 'A'" in prompt and "acme/calc" in prompt and "and 2 more" in prompt
    assert_hides_the_fix(prompt)


@pytest.mark.parametrize(("script", "reason"), [
    (["The bug is on the line `return table[key.upper()]`, it should be `return table[key]`."], "leaks"),
    (["It crashes in pkg/calc.py:11 somewhere."], "leaks"),
    (["   "], "empty reply"),
    ([400], "model error: HTTP 400"),
])
def test_model_statement_falls_back(details: dict[str, Failure], script: list, reason: str,
                                    caplog: pytest.LogCaptureFixture):
    with ChatServer(script) as server, model_for(server) as model:
        result = model_statement(model, details, repo="acme/calc", forbidden=FORBIDDEN)
    assert result.source == "template" and reason in (result.reason or "")
    assert result.text == write_statement(details, repo="acme/calc", forbidden=FORBIDDEN)
    assert "falling back to the template" in caplog.text
    assert len(server.requests) == 1
