"""The eval script: reset the test files, apply the test patch, run the tests between markers.

Like SWE-bench's ``make_eval_script_list_py``, with three differences:

- every marker carries a per-run nonce (``new_nonce()``), so a patch that prints marker lines
  cannot fake where the test output starts or ends, nor the exit code of the test command;
- the exit code of the test command is printed after the end marker (grading needs it: see
  ``sweworld.harness.grade``);
- a test patch that does not apply is an infrastructure failure: the script prints
  ``SWEWORLD TEST PATCH FAILED <nonce>`` and exits ``INFRA_EXIT_CODE`` (97), while SWE-bench carries
  on and fails the instance as if the model were at fault.

The script is plain bash without ``set -e``: a failing step never hides the steps after it. stderr
is merged into stdout (``exec 2>&1``) so the test output between the markers is complete. The eval
commands and the test command read stdin from /dev/null, so the script may be fed to ``bash -s``. Test
files are reset to the base commit (created ones removed) before the test patch is applied and
again at the end, so the tree is left as it was found. The script exits 0 when the tests ran
(whatever their result) and 97 on an infrastructure failure.
"""

from __future__ import annotations

import re
import secrets
import shlex
from collections.abc import Iterable
from typing import TYPE_CHECKING

from sweworld.core.types import ServiceLines, Task
from sweworld.toxenv import tox_current_env_shims

if TYPE_CHECKING:
    from sweworld.envs.recipes import EnvRecipe

START_MARKER = "SWEWORLD START TEST OUTPUT"
END_MARKER = "SWEWORLD END TEST OUTPUT"
EXIT_CODE_MARKER = "SWEWORLD TEST EXIT CODE"
PATCH_APPLIED_MARKER = "SWEWORLD TEST PATCH APPLIED"
PATCH_FAILED_MARKER = "SWEWORLD TEST PATCH FAILED"
WORKDIR_FAILED_MARKER = "SWEWORLD WORKDIR MISSING"
INFRA_EXIT_CODE = 97
"""Exit status of the script when the harness, not the model, failed (e.g. test patch refused)."""

DETERMINISTIC_ENV = {"TZ": "UTC", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}
"""Exported first; the recipe's ``env_vars`` come after and win (kept verbatim, even a locale
such as ``en_US.UTF-8`` that may not exist here)."""

_NONCE = re.compile(r"[A-Za-z0-9]{8,64}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RC_VAR = "__sweworld_rc"


def new_nonce() -> str:
    """A fresh random nonce for one run of the eval script (16 hex characters)."""
    return secrets.token_hex(8)


def marker(kind: str, nonce: str) -> str:
    """The full marker line ``<kind> <nonce>``, e.g. ``marker(START_MARKER, nonce)``."""
    return f"{kind} {nonce}"


def heredoc_delimiter(text: str, nonce: str) -> str:
    """A heredoc delimiter (with the nonce) that is not a line of ``text``."""
    delimiter = f"SWEWORLD_TEST_PATCH_{nonce}"
    lines = set(text.splitlines())
    while delimiter in lines:
        delimiter += "_X"
    return delimiter


def _quoted(paths: Iterable[str]) -> str:
    return " ".join(shlex.quote(p) for p in paths)


LOCALE_VARS = ("LANG", "LC_ALL", "LANGUAGE", "LC_CTYPE")
#: A recipe may ask for a locale this machine lacks (SWE-bench's Django specs ask for en_US.UTF-8,
#: which its images generate with locale-gen): Python would then fall back to ASCII. Use C.UTF-8.
_LOCALE_FALLBACK = (  # only where a python answers that it cannot: a missing python is no missing locale
    "if command -v python >/dev/null 2>&1 && ! python -c 'import locale; locale.setlocale(locale.LC_ALL, \"\")' "
    ">/dev/null 2>&1; then\n"
    "  echo \"sweworld: locale ${LC_ALL:-$LANG} is not installed here; using C.UTF-8\"\n"
    "  export LANG=C.UTF-8 LC_ALL=C.UTF-8 LC_CTYPE=C.UTF-8\n"
    "fi")


def env_exports(env_vars: dict[str, str]) -> list[str]:
    """The export lines of every test run: the deterministic environment, then the recipe's."""
    lines = ["export " + " ".join(f"{name}={value}" for name, value in DETERMINISTIC_ENV.items())]
    for name, value in env_vars.items():
        if not _ENV_NAME.fullmatch(name):
            raise ValueError(f"recipe env_vars: {name!r} is not a valid environment variable name")
        lines.append(f"export {name}={shlex.quote(str(value))}")
    if any(name in env_vars for name in LOCALE_VARS):
        lines.append(_LOCALE_FALLBACK)
    return lines


def _check_path(path: str) -> str:
    parts = path.split("/")
    if not path or path.startswith("/") or ".." in parts or path in (".", "./"):
        raise ValueError(f"test file path {path!r} must be relative and stay inside the repository")
    return path


def _reset_tests(base_commit: str, existing: list[str], created: list[str]) -> list[str]:
    for path in (*existing, *created):
        _check_path(path)
    lines = []
    if existing:
        lines.append(f"git checkout {shlex.quote(base_commit)} -- {_quoted(existing)}")
    if created:
        lines.append(f"rm -rf -- {_quoted(created)}")
    return lines or [": no test files to reset"]


def make_eval_script(task: Task, recipe: EnvRecipe, *, directives: list[str],
                     existing_test_files: list[str], created_test_files: list[str], nonce: str,
                     workdir: str = "/testbed", stand_ins: ServiceLines | None = None) -> str:
    """The bash eval script of ``task`` (see the module docstring).

    ``directives`` are appended (shell-quoted) to ``recipe.test_cmd``; ``existing_test_files`` are
    the files of the test patch present at the base commit (checked out from it before and after),
    ``created_test_files`` those the test patch creates (removed before and after). ``nonce`` goes
    into every marker and into the heredoc delimiter; make one per run with ``new_nonce()``.
    ``stand_ins``: the lines that start and stop the local network stand-ins around the tests
    (``envs.services.script_lines`` writes them from ``recipe.services``; none when not given).
    """
    if not _NONCE.fullmatch(nonce):
        raise ValueError(f"nonce must be 8-64 letters or digits, got {nonce!r}")
    reset = _reset_tests(task.base_commit, existing_test_files, created_test_files)
    test_cmd = " ".join([recipe.test_cmd.strip(), *(shlex.quote(d) for d in directives)])

    lines = [
        "#!/usr/bin/env bash",
        f"# sweworld eval script for {task.instance_id} (nonce {nonce})",
        "exec 2>&1",
        f"cd {shlex.quote(workdir)} || {{ echo {shlex.quote(marker(WORKDIR_FAILED_MARKER, nonce))}; "
        f"exit {INFRA_EXIT_CODE}; }}",
        *env_exports(recipe.env_vars),
        *(["{", *recipe.eval_commands, "} < /dev/null"] if recipe.eval_commands else []),
        "sweworld_reset_tests() {",
        *(f"  {line}" for line in reset),
        "}",
        "sweworld_reset_tests",
    ]
    if task.test_patch.strip():
        body = task.test_patch if task.test_patch.endswith("\n") else task.test_patch + "\n"
        delimiter = heredoc_delimiter(body, nonce)
        lines += [
            f"git apply -v - <<'{delimiter}'",
            body + delimiter,
            "if [ $? -ne 0 ]; then",
            f"  echo {shlex.quote(marker(PATCH_FAILED_MARKER, nonce))}",
            "  sweworld_reset_tests",
            f"  exit {INFRA_EXIT_CODE}",
            "fi",
        ]
    stand_ins = stand_ins or ServiceLines()
    lines += [
        *tox_current_env_shims(recipe.test_cmd, recipe.python),
        *stand_ins.start,
        f"echo {shlex.quote(marker(PATCH_APPLIED_MARKER, nonce))}",
        f"echo {shlex.quote(marker(START_MARKER, nonce))}",
        "(",
        test_cmd,
        ") < /dev/null",
        f"{_RC_VAR}=$?",
        "echo",
        f"echo {shlex.quote(marker(END_MARKER, nonce))}",
        f"echo {shlex.quote(marker(EXIT_CODE_MARKER, nonce))} \"${_RC_VAR}\"",
        *stand_ins.stop,
        "sweworld_reset_tests",
        "exit 0",
    ]
    return "\n".join(lines) + "\n"
