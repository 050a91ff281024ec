"""The log parser SWE-Gym's fork of the SWE-bench harness adds for pydantic.

pydantic's test command (``pytest -rA --tb=short -vv -o console_output_style=classic``) runs with
``pytest-pretty``, which replaces pytest's short summary, so the ``STATUS test-id`` lines that
``parse_log_pytest`` reads are missing; the ``-vv`` progress lines (``test-id STATUS``) remain.
SWE-Gym's ``parse_log_pytest_pydantic`` reads both forms, after stripping ANSI colour codes and
control characters and the ``[...]`` that may follow ``FAILED``. Written here from that description.
"""

from __future__ import annotations

import re
from typing import Any

STATUSES = ("FAILED", "PASSED", "SKIPPED", "ERROR", "XFAIL")
_COLOUR = re.compile(r"\[(\d+)m")
_CONTROL = str.maketrans("", "", "".join(chr(c) for c in range(1, 32)))
_FAILED_NOTE = re.compile(r"FAILED\s*\[.*?\]")


def parse_log_pytest_pydantic(log: str, test_spec: Any = None) -> dict[str, str]:
    """Test id -> status from ``STATUS test-id[ - message]`` and ``test-id STATUS`` lines."""
    out: dict[str, str] = {}
    for raw in log.split("\n"):
        line = _FAILED_NOTE.sub("FAILED", _COLOUR.sub("", raw).translate(_CONTROL))
        parts = line.replace(" - ", " ").split() if line.startswith("FAILED") else line.split()
        if len(parts) < 2:
            continue
        if line.startswith(STATUSES):
            out[parts[1]] = parts[0]
        elif line.endswith(STATUSES):
            out[parts[0]] = parts[-1]
    return out


#: SWE-Gym's parser per repository where it is not swebench's (``envs/swegym_specs.LOG_PARSERS``).
BY_REPO = {"pydantic/pydantic": parse_log_pytest_pydantic}
BY_NAME = {"parse_log_pytest_pydantic": parse_log_pytest_pydantic}
