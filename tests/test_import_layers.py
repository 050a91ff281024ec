"""The import floors of DESIGN.md hold: ``lint-imports`` on the contracts of ``.importlinter``.

A wrong arrow (a tool importing the sandbox, the harness opening environments...) fails here with
the chain of imports that breaks the floor. The arrows that break a floor today are listed in the
contracts' ``ignore_imports``; see docs/architecture.md.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUN = ("from importlinter.cli import lint_imports\n"
       "raise SystemExit(lint_imports(config_filename='.importlinter', no_cache=True, no_logo=True))")


def test_import_floors_hold():
    pytest.importorskip("importlinter", reason="import-linter is not installed (pip install import-linter, "
                        "part of the dev extra): the import floors are not checked")
    result = subprocess.run([sys.executable, "-c", RUN], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout and " kept" in result.stdout, result.stdout
