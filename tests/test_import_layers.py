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


def test_integrations_name_nothing_of_the_sandbox_not_even_for_type_checking():
    """The contracts do not count ``TYPE_CHECKING`` imports; the integrations may not have those either:
    they take a Backend and never see a sandbox."""
    found = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "src/sweworld/integrations").glob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1)
             if "sweworld.sandbox" in line and ("import" in line)]
    assert not found, found
