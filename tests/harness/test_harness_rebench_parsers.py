"""A SWE-rebench row's ``install_config.log_parser`` names the parser that grades it."""

from __future__ import annotations

import pytest
from swebench.harness.log_parsers.python import (
    parse_log_django,
    parse_log_pytest,
    parse_log_pytest_options,
    parse_log_pytest_v2,
)

from sweworld.core.errors import DatasetError
from sweworld.core.types import Task
from sweworld.harness.grade import log_parser_of, parse_status

PYTEST_LOG = "PASSED tests/test_a.py::test_one\nFAILED tests/test_a.py::test_two - assert 1 == 2\n"


def task(parser: str | None, repo: str = "django/django") -> Task:
    config = {"log_parser": parser, "test_cmd": "pytest -rA"} if parser else None
    return Task(instance_id="django__django-1", repo=repo, base_commit="a" * 40, install_config=config)


@pytest.mark.parametrize(("name", "parser"), [
    ("parse_log_pytest", parse_log_pytest), ("parse_log_pytest_options", parse_log_pytest_options),
    ("parse_log_pytest_v2", parse_log_pytest_v2), ("parse_log_django", parse_log_django),
    ("django/django", parse_log_django), (None, parse_log_django),  # no install_config: the repository's
])
def test_log_parser_names_map_to_swebench_parsers(name, parser):
    assert log_parser_of(task(name)) is parser


def test_the_named_parser_grades_the_row():
    # django's own parser reads nothing of pytest's output; the row's parse_log_pytest does
    assert parse_status(task(None), PYTEST_LOG) == {}
    assert parse_status(task("parse_log_pytest"), PYTEST_LOG) == {
        "tests/test_a.py::test_one": "PASSED", "tests/test_a.py::test_two": "FAILED"}


def test_an_unknown_parser_name_is_one_clear_error():
    with pytest.raises(DatasetError, match="parse_log_nothing") as info:
        log_parser_of(task("parse_log_nothing"))
    assert "django__django-1" in str(info.value)
