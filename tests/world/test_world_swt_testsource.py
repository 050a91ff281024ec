"""What a test file's text says without running it (``swt.testsource``), against what pytest itself
collects and reports for the same file."""

from __future__ import annotations

import subprocess
import sys

from sweworld.surrogates.swt.testsource import marked, static_tests

MODULE = '''import unittest

import pytest


class Base(unittest.TestCase):
    def helper(self):
        return 1


class DocstringTest(Base):  # a TestCase through the module's own base: collected whatever its name
    def test_inherited_case(self):
        assert self.helper() == 1

    @unittest.skip("not here")
    def test_skipped_case(self):
        pass


class TestPlain:
    def test_plain(self):
        pass

    @pytest.mark.xfail(reason="known")
    def test_known(self):
        assert False


class Mixed(TestPlain):  # named otherwise and not a TestCase: pytest does not collect it
    def test_never(self):
        pass


class Helper:
    def test_not_collected(self):
        pass


def test_function():
    pass


@pytest.mark.skipif(True, reason="never")
def test_conditional():
    pass
'''


def test_static_tests_and_marks_are_what_pytest_collects_and_reports(tmp_path):
    (tmp_path / "test_mod.py").write_text(MODULE)
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "test_mod.py"],
                         cwd=tmp_path, capture_output=True, text=True)
    reported = {}
    for line in run.stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("PASSED", "FAILED", "SKIPPED", "XFAIL"):
            test = rest.split(" - ")[0].strip()
            if word == "SKIPPED":  # SKIPPED [1] test_mod.py:14: reason: the line of the test, not its id
                continue
            reported[test] = word
    collected = static_tests("test_mod.py", MODULE)
    assert set(reported) <= set(collected)
    assert collected == ["test_mod.py::DocstringTest::test_inherited_case", "test_mod.py::DocstringTest::test_skipped_case",
                         "test_mod.py::TestPlain::test_plain", "test_mod.py::TestPlain::test_known",
                         "test_mod.py::test_function", "test_mod.py::test_conditional"]
    assert " 3 passed, 2 skipped, 1 xfailed in " in run.stdout.splitlines()[-1]  # the six, no more
    assert {t: marked(MODULE, t) for t in collected if marked(MODULE, t)} == {
        "test_mod.py::DocstringTest::test_skipped_case": "SKIPPED", "test_mod.py::TestPlain::test_known": "XFAIL",
        "test_mod.py::test_conditional": "SKIPPED"}
    assert reported == {"test_mod.py::DocstringTest::test_inherited_case": "PASSED",
                                                  "test_mod.py::TestPlain::test_plain": "PASSED",
                                                  "test_mod.py::TestPlain::test_known": "XFAIL",
                                                  "test_mod.py::test_function": "PASSED"}
