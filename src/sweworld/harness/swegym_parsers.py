"""The log parsers of SWE-Gym's fork of the SWE-bench harness.

SWE-Gym grades every repository of its specs with ``parse_log_pytest`` (its per-repository names,
``parse_log_moto``, ``parse_log_dvc``..., are aliases) except pydantic. pydantic's test command
(``pytest -rA --tb=short -vv -o console_output_style=classic``) runs with ``pytest-pretty``, which
replaces pytest's short summary, so the ``STATUS test-id`` lines that ``parse_log_pytest`` reads are
missing and only the ``-vv`` progress lines (``test-id STATUS``) remain. SWE-Gym's
``parse_log_pytest_pydantic`` is ``swebench``'s ``parse_log_pytest_v2`` (both forms, ANSI codes and
control characters stripped) after the ``[...]`` that may follow ``FAILED`` is removed.
"""

from __future__ import annotations

import re
from typing import Any

_COLOUR = re.compile(r"\[(\d+)m")
_CONTROL = str.maketrans("", "", "".join(chr(c) for c in range(1, 32)))
_FAILED_NOTE = re.compile(r"FAILED\s*\[.*?\]")


def parse_log_pytest_pydantic(log: str, test_spec: Any = None) -> dict[str, str]:
    """Test id -> status from ``STATUS test-id[ - message]`` and ``test-id STATUS`` lines."""
    from swebench.harness.log_parsers.python import parse_log_pytest_v2

    lines = (_FAILED_NOTE.sub("FAILED", _COLOUR.sub("", line).translate(_CONTROL)) for line in log.split("\n"))
    return parse_log_pytest_v2("\n".join(lines), test_spec)


#: The parser SWE-Gym names per repository where it is not ``parse_log_pytest`` (keys lower case).
PARSER_NAMES = {"pydantic/pydantic": "parse_log_pytest_pydantic"}
BY_NAME = {"parse_log_pytest_pydantic": parse_log_pytest_pydantic}
BY_REPO = {repo: BY_NAME[name] for repo, name in PARSER_NAMES.items()}


def parser_name(repo: str) -> str:
    """The name of SWE-Gym's log parser for ``repo``."""
    return PARSER_NAMES.get(repo.lower(), "parse_log_pytest")
