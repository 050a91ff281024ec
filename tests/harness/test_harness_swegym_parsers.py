"""SWE-Gym's pydantic parser: pytest-pretty's output (no short summary) of pydantic's test command."""

from sweworld.core.types import Task
from sweworld.harness.grade import log_parser_of
from sweworld.harness.swegym_parsers import parse_log_pytest_pydantic

# The shape of pydantic's test run with -vv and pytest-pretty (as in a real run of pydantic 2.0).
PRETTY = """\
tests/test_validate_call.py::test_args PASSED
tests/test_validate_call.py::test_classmethod_order_error[staticmethod] \x1b[31mFAILED\x1b[0m [ 50%]
tests/test_validate_call.py::test_classmethod_order_error[classmethod] FAILED
tests/test_validate_call.py::test_skip SKIPPED
==================================== PASSES ====================================
Results (1.17s):
         2 failed
         1 passed
"""


def task(repo: str, **extra) -> Task:
    return Task.model_validate({"instance_id": "o__r-1", "repo": repo, "base_commit": "0" * 40, "patch": "",
                                "problem_statement": "", **extra})


def test_status_after_the_id_and_before_it_are_both_read():
    status = parse_log_pytest_pydantic(PRETTY + "FAILED tests/test_x.py::test_y - AssertionError: no\n")
    assert status == {"tests/test_validate_call.py::test_args": "PASSED",
                      "tests/test_validate_call.py::test_classmethod_order_error[staticmethod]": "FAILED",
                      "tests/test_validate_call.py::test_classmethod_order_error[classmethod]": "FAILED",
                      "tests/test_validate_call.py::test_skip": "SKIPPED", "tests/test_x.py::test_y": "FAILED"}


def test_pydantic_rows_get_it_by_repository_and_rows_by_name():
    assert log_parser_of(task("pydantic/pydantic")) is parse_log_pytest_pydantic
    named = task("o/r", install_config={"log_parser": "parse_log_pytest_pydantic"})
    assert log_parser_of(named) is parse_log_pytest_pydantic
    assert log_parser_of(task("getmoto/moto")) is not parse_log_pytest_pydantic
