"""Grade the output of the eval script with SWE-bench's parsers and grading functions.

1. ``extract_test_run``: the test output between the markers of THIS run (nonce), the exit code of
   the test command, whether the test patch applied. Marker lines without the nonce are ignored;
   the last end marker carrying the nonce wins (the real one is printed after the tests finish).
2. ``parse_status``: the parser a SWE-rebench row names in ``install_config.log_parser``
   (``log_parser_of``), else ``swebench``'s log parser for the repository (``MAP_REPO_TO_PARSER``),
   else SWE-Gym's where it has its own (pydantic: ``harness/swegym_parsers.py``), else ``parse_log_pytest``.
3. ``grade``: ``get_eval_tests_report`` + ``get_resolution_status``: FULL when every FAIL_TO_PASS and
   PASS_TO_PASS test passes (PASSED/XFAIL), PARTIAL when some FAIL_TO_PASS pass and every
   PASS_TO_PASS passes, NO otherwise. Only FULL is resolved. An R2E-Gym row (``expected_output_json``)
   is graded as R2E-Gym grades it: FULL when the parsed map holds exactly its tests, each with its
   expected status (a test expected to fail must fail), else NO.

Crash rule (a patch must not win by printing ``PASSED ...`` lines and exiting):
``ACCEPTED_EXIT_CODES`` = {0, 1} is what pytest, Django's and SymPy's runners return after running
the tests (1 = "some tests failed"). The run is *crashed* when

- no exit code was seen (end marker or exit-code line missing: killed, timed out, cut output), or
- the exit code is not accepted (2 interrupted / collection error, 3 internal error, 4 usage error,
  5 "no tests collected", a signal, ``os._exit(n)`` from a patch...), or
- the exit code is 1 while the parsed status map holds no FAILED/ERROR entry (the runner says tests
  failed, but the output names none: the output is not to be trusted).

A row whose log parser is another language's runner's (``parse_log_cargo``, ``parse_log_gotest``,
``parse_log_tap``, ``parse_log_jest``...) accepts ``RUNNER_EXIT_CODES`` (0-127: cargo exits 101, mocha
with the number of failures) under the same rule: a non-zero code needs a failed test in the map.

A crashed run is graded with an empty status map: every FAIL_TO_PASS and PASS_TO_PASS test counts
as failed, and the resolution is RESOLVED_NO even for a task with no tests at all. The parsed map is
kept in ``GradeResult.parsed_status_map`` for diagnosis. What the exit code cannot catch: a patch
that prints forged PASSED lines and exits 0 before the real tests run; the nonce only guarantees
that the markers themselves are the harness's.

Unlike SWE-bench's ``get_logs_eval``, the whole log is never parsed as a fallback when the region
between the markers holds no result (that region is the only one the test command wrote to).

Two things the parsers alone would hide: ANSI escapes (a repository whose pytest configuration
forces ``--color=yes``) are stripped before parsing, and a listed test whose id holds a space
(``test_x[a b]``, cut at the space by SWE-bench's pytest parsers) is looked up by its full id too.
Listed tests absent from the parsed output are named in ``GradeResult.missing``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from sweworld.core.errors import DatasetError
from sweworld.core.types import Task, install_config_of
from sweworld.harness import swegym_parsers
from sweworld.harness.evalscript import (
    END_MARKER,
    EXIT_CODE_MARKER,
    PATCH_APPLIED_MARKER,
    PATCH_FAILED_MARKER,
    START_MARKER,
    WORKDIR_FAILED_MARKER,
    marker,
)

ACCEPTED_EXIT_CODES = frozenset({0, 1})
"""Exit codes of a test command that ran the tests (pytest, Django, SymPy: 1 = tests failed)."""
RUNNER_EXIT_CODES = frozenset(range(128))
"""The same for the runners of other languages, named by a row's log parser: ``cargo test`` exits 101
when a test fails, mocha with the number of failed tests, ``go test``, jest, vitest and node's runner
with 1 (a code from 128 up is a signal: a crash). The rest of the crash rule holds for them too."""
NO_TESTS_COLLECTED = 5
"""pytest's exit code when nothing was collected: a crash (not in ACCEPTED_EXIT_CODES)."""
FAILED_STATUSES = frozenset({"FAILED", "ERROR"})
TEST_PATCH_FAILED = "the test patch did not apply"
"""``TestRun.infra_error`` of a run whose eval script said the test patch did not apply."""


class TestRun(BaseModel):
    """What one run of the eval script said, read from its output with its nonce."""

    __test__: ClassVar[bool] = False  # not a pytest test class

    test_output: str = Field(default="", description="Text between the start and end markers.")
    exit_code: int | None = Field(default=None, description="Exit code of the test command; None if not seen.")
    markers_found: bool = Field(default=False, description="Both the start and the end marker were seen.")
    started: bool = Field(default=False, description=(
        "The start marker was seen: the eval script reached the test command (``harness.worldcheck``)."))
    test_patch_applied: bool = Field(default=False, description="The test patch applied (or was empty).")
    infra_error: str | None = Field(
        default=None, description="Infrastructure failure seen in the output (test patch refused, no workdir).")


class GradeResult(BaseModel):
    """The grade of one run: SWE-bench's tests_status and resolution, plus the crash verdict."""

    status_map: dict[str, str] = Field(description="Test -> status used for grading ({} when crashed).")
    parsed_status_map: dict[str, str] = Field(description="Test -> status as parsed from the output.")
    crashed: bool = Field(description="The run is not trusted (see the crash rule); every test failed.")
    exit_code: int | None = Field(default=None, description="Exit code of the test command.")
    tests_status: dict[str, dict[str, list[str]]] = Field(
        description="FAIL_TO_PASS, PASS_TO_PASS, FAIL_TO_FAIL, PASS_TO_FAIL: {success, failure}.")
    resolution: str = Field(description="RESOLVED_FULL, RESOLVED_PARTIAL or RESOLVED_NO.")
    resolved: bool = Field(description="resolution == RESOLVED_FULL.")
    missing: list[str] = Field(default_factory=list, description=(
        "FAIL_TO_PASS/PASS_TO_PASS tests the output does not mention (graded as failed); empty when crashed."))


def _lines_equal(output: str, text: str) -> list[re.Match[str]]:
    return list(re.finditer(rf"^{re.escape(text)}[ \t\r]*$", output, re.MULTILINE))


def extract_test_run(output: str, nonce: str) -> TestRun:
    """Read the eval script's output; only marker lines carrying ``nonce`` count.

    The last end marker wins; the test output starts after the first start marker before it; the
    exit code is read from the last exit-code line after that end marker.
    """
    applied = bool(_lines_equal(output, marker(PATCH_APPLIED_MARKER, nonce)))
    infra_error = None
    if _lines_equal(output, marker(PATCH_FAILED_MARKER, nonce)):
        infra_error, applied = TEST_PATCH_FAILED, False
    elif _lines_equal(output, marker(WORKDIR_FAILED_MARKER, nonce)):
        infra_error = "the working directory of the eval script is missing"
    ends = _lines_equal(output, marker(END_MARKER, nonce))
    starts = _lines_equal(output, marker(START_MARKER, nonce))
    if not ends:
        after = starts[0].end() if starts else None
        text = output[after:].lstrip("\r\n") if after is not None else ""
        return TestRun(test_output=text, exit_code=None, markers_found=False, started=bool(starts),
                       test_patch_applied=applied, infra_error=infra_error)
    end = ends[-1]
    before = [m for m in starts if m.end() <= end.start()]
    test_output = output[before[0].end():end.start()].strip("\r\n") if before else ""
    exit_code = None
    pattern = rf"^{re.escape(marker(EXIT_CODE_MARKER, nonce))} (-?\d+)[ \t\r]*$"
    codes = list(re.finditer(pattern, output[end.end():], re.MULTILINE))
    if codes:
        exit_code = int(codes[-1].group(1))
    return TestRun(test_output=test_output, exit_code=exit_code, markers_found=bool(before), started=bool(starts),
                   test_patch_applied=applied, infra_error=infra_error)


def _test_spec(task: Task) -> SimpleNamespace:
    """The smallest stand-in for swebench's TestSpec: the Python parsers read nothing from it;
    some JS/Ruby parsers read ``instance_id``."""
    return SimpleNamespace(instance_id=task.instance_id, repo=task.repo, version=task.version,
                           FAIL_TO_PASS=task.FAIL_TO_PASS, PASS_TO_PASS=task.PASS_TO_PASS)


_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
_STATUSES = ("PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS")


def strip_ansi(text: str) -> str:
    """``text`` without ANSI escape sequences (colours, cursor moves)."""
    return _ANSI.sub("", text)


def listed_tests(task: Task) -> list[str]:
    """FAIL_TO_PASS then PASS_TO_PASS, each test once."""
    return list(dict.fromkeys([*task.FAIL_TO_PASS, *task.PASS_TO_PASS]))


def _full_ids(status_map: dict[str, str], text: str, listed: list[str]) -> dict[str, str]:
    """Statuses of listed ids holding a space, read from ``STATUS <full id>`` lines (pytest -rA)."""
    found: dict[str, str] = {}
    for name in listed:
        if " " not in name or name in status_map:
            continue
        pattern = rf"^({'|'.join(_STATUSES)}) {re.escape(name)}(?: - .*)?[ \t\r]*$"
        matches = list(re.finditer(pattern, text, re.MULTILINE))
        if matches:  # the last line wins, as in the parsers
            found[name] = matches[-1].group(1)
    return found


PARSER_MODULES = ("python", "javascript", "java", "go", "rust", "ruby", "php", "c")
"""The modules of ``swebench.harness.log_parsers`` searched for a parser named by a row."""


def _named_parser(task: Task) -> str | None:
    """The parser the row names: its ``install_config.log_parser`` (SWE-rebench), else its own
    ``log_parser`` (SWE-bench >= 5.0) where swebench has a parser of that name."""
    extra = task.model_extra or {}
    name = (install_config_of(extra) or {}).get("log_parser")
    if name:
        return str(name)
    own = extra.get("log_parser")
    if isinstance(own, str) and own.startswith("parse_log_"):
        import importlib
        for language in PARSER_MODULES:
            if hasattr(importlib.import_module(f"swebench.harness.log_parsers.{language}"), own):
                return own
    return None


def log_parser_of(task: Task) -> Callable[[str, Any], dict[str, str]]:
    """The log parser of ``task``: the one its ``install_config.log_parser`` names (SWE-rebench rows:
    ``parse_log_pytest``, ``parse_log_pytest_options``, ``parse_log_pytest_v2``, or any parser of
    ``swebench.harness.log_parsers``, SWE-Gym's ``parse_log_pytest_pydantic``, or a repository name
    its registry knows), else ``swebench``'s parser of the repository, else SWE-Gym's (pydantic), else
    ``parse_log_pytest``. An unknown name is a ``DatasetError``."""
    import importlib

    from swebench.harness.log_parsers import MAP_REPO_TO_PARSER
    from swebench.harness.log_parsers.python import parse_log_pytest

    name = _named_parser(task)
    if name is None:
        return MAP_REPO_TO_PARSER.get(task.repo) or swegym_parsers.BY_REPO.get(task.repo.lower(), parse_log_pytest)
    parser = MAP_REPO_TO_PARSER.get(name) or swegym_parsers.BY_NAME.get(name)
    for language in PARSER_MODULES:
        if parser is None and name.startswith("parse_log_"):
            parser = getattr(importlib.import_module(f"swebench.harness.log_parsers.{language}"), name, None)
    if not callable(parser):
        raise DatasetError(f"install_config names the log parser {name!r}, which swebench does not have",
                           where=f"instance {task.instance_id}",
                           hint="use parse_log_pytest, parse_log_pytest_options, parse_log_pytest_v2 or another "
                                "parse_log_* function of swebench.harness.log_parsers")
    return parser


def parse_status(task: Task, test_output: str) -> dict[str, str]:
    """Test -> status (PASSED, FAILED, ERROR, SKIPPED, XFAIL) from the task's parser (``log_parser_of``);
    ANSI escapes stripped first, listed ids with spaces matched whole as well as cut."""
    parser = log_parser_of(task)
    text = strip_ansi(test_output)
    status_map = dict(parser(text, _test_spec(task)))
    status_map.update(_full_ids(status_map, text, listed_tests(task)))
    return status_map


def is_crashed(exit_code: int | None, status_map: dict[str, str],
               accepted: frozenset[int] = ACCEPTED_EXIT_CODES) -> bool:
    """The crash rule of the module docstring (``accepted``: the exit codes of a run whose tests ran)."""
    if exit_code is None or exit_code not in accepted:
        return True
    return exit_code != 0 and not any(status in FAILED_STATUSES for status in status_map.values())


def accepted_exit_codes(task: Task) -> frozenset[int]:
    """``RUNNER_EXIT_CODES`` for a row whose log parser is another language's runner's (not one of
    swebench's Python parsers nor SWE-Gym's), else ``ACCEPTED_EXIT_CODES``."""
    import importlib

    name = _named_parser(task)
    if name is None or name in swegym_parsers.BY_NAME:
        return ACCEPTED_EXIT_CODES
    python = importlib.import_module("swebench.harness.log_parsers.python")
    return ACCEPTED_EXIT_CODES if hasattr(python, name) or not name.startswith("parse_log_") else RUNNER_EXIT_CODES


def _extra_list(task: Task, name: str) -> list[str]:
    value: Any = (task.model_extra or {}).get(name)
    if isinstance(value, str):
        value = json.loads(value) if value.strip().startswith("[") else [value]
    return [str(v) for v in value or []]


def gold_results(task: Task) -> dict[str, list[str]]:
    """The four test lists of ``task`` keyed as swebench expects (F2F/P2F empty when absent)."""
    from swebench.harness.constants import FAIL_TO_FAIL, FAIL_TO_PASS, PASS_TO_FAIL, PASS_TO_PASS

    return {"instance_id": task.instance_id, FAIL_TO_PASS: list(task.FAIL_TO_PASS),  # type: ignore[dict-item]
            PASS_TO_PASS: list(task.PASS_TO_PASS), FAIL_TO_FAIL: _extra_list(task, FAIL_TO_FAIL),
            PASS_TO_FAIL: _extra_list(task, PASS_TO_FAIL)}


def expected_statuses(task: Task) -> dict[str, str] | None:
    """An R2E-Gym row's ``expected_output_json`` (test -> status), None for the other rows."""
    value: Any = (task.model_extra or {}).get("expected_output_json")
    if isinstance(value, str) and value.strip():
        value = json.loads(value)
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else None


def _r2e_name(name: str) -> str:
    """A test's name as R2E-Gym compares it: colours gone, nothing after " - "."""
    return strip_ansi(name).split(" - ", 1)[0].strip()


def _exact(expected: dict[str, str], status_map: dict[str, str], crashed: bool
           ) -> tuple[str, dict[str, dict[str, list[str]]], list[str]]:
    """R2E-Gym's grade: the parsed map has the expected tests, each with its expected status."""
    from swebench.harness.constants import (
        FAIL_TO_FAIL,
        FAIL_TO_PASS,
        PASS_TO_FAIL,
        PASS_TO_PASS,
        ResolvedStatus,
    )
    got = {_r2e_name(k): v for k, v in status_map.items()}
    want = {_r2e_name(k): v for k, v in expected.items()}
    same = [t for t, v in want.items() if got.get(t) == v]
    differ = [t for t in want if t not in same]
    resolved = not crashed and not differ and len(got) == len(want)
    report = {FAIL_TO_PASS: {"success": [], "failure": []}, PASS_TO_PASS: {"success": same, "failure": differ},
              FAIL_TO_FAIL: {"success": [], "failure": []}, PASS_TO_FAIL: {"success": [], "failure": []}}
    return (ResolvedStatus.FULL if resolved else ResolvedStatus.NO).value, report, [t for t in want if t not in got]


def grade(task: Task, run: TestRun) -> GradeResult:
    """Grade one run of the eval script against the task's tests (see the module docstring); an
    R2E-Gym row by its expected statuses, every one equal (``expected_statuses``)."""
    from swebench.harness.constants import FAIL_ONLY_REPOS, EvalType, ResolvedStatus
    from swebench.harness.grading import get_eval_tests_report, get_resolution_status

    parsed = parse_status(task, run.test_output) if run.markers_found else {}
    crashed = not run.markers_found or is_crashed(run.exit_code, parsed, accepted_exit_codes(task))
    status_map = {} if crashed else parsed
    expected = expected_statuses(task)
    if expected is not None:
        resolution, tests_status, missing = _exact(expected, status_map, crashed)
        return GradeResult(status_map=status_map, parsed_status_map=parsed, crashed=crashed, exit_code=run.exit_code,
                           tests_status=tests_status, resolution=resolution,
                           resolved=resolution == ResolvedStatus.FULL.value, missing=[] if crashed else missing)
    # FAIL_ONLY counts a missing test as a success: never for a crashed run.
    eval_type = (EvalType.FAIL_ONLY if task.repo in FAIL_ONLY_REPOS and not crashed
                 else EvalType.PASS_AND_FAIL)
    tests_status = get_eval_tests_report(status_map, gold_results(task), calculate_to_fail=True,
                                         eval_type=eval_type)
    resolution = ResolvedStatus.NO.value if crashed else get_resolution_status(tests_status)
    missing = [] if crashed else [name for name in listed_tests(task) if name not in status_map]
    return GradeResult(status_map=status_map, parsed_status_map=parsed, crashed=crashed,
                       exit_code=run.exit_code, tests_status=tests_status, resolution=resolution,
                       resolved=resolution == ResolvedStatus.FULL.value, missing=missing)
