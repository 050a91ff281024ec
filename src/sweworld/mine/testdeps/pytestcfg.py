"""What a project's pytest configuration asks of every run, where a mined task's runs cannot give it.

pytest reads ``addopts`` from the first of pytest.ini, pyproject.toml (``[tool.pytest.ini_options]``),
tox.ini (``[pytest]``) and setup.cfg (``[tool:pytest]``) that has a section. A project whose
``addopts`` turn pytest-cov on (``--cov``) often also sets a floor (``--cov-fail-under``, or
``fail_under`` in its coverage config): a run of the few test files a task touches then ends with
exit 1 and no failed test, which the harness rightly counts as a crashed run. ``--no-cov`` (pytest-cov's
own switch) keeps the tests and drops the coverage.
"""

from __future__ import annotations

import configparser
from pathlib import Path

from sweworld.mine.testdeps.pyproject import load_toml


def _ini(path: Path, section: str) -> str | None:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(path.read_text(encoding="utf-8", errors="replace"))
    except (configparser.Error, OSError):
        return None
    return parser.get(section, "addopts", fallback="") if parser.has_section(section) else None


def addopts(tree: Path) -> tuple[str, str] | None:
    """(``addopts``, the file it came from) of the configuration pytest would read; None without one."""
    for name, section in (("pytest.ini", "pytest"), ("pyproject.toml", None), ("tox.ini", "pytest"),
                          ("setup.cfg", "tool:pytest")):
        path = tree / name
        if not path.is_file():
            continue
        if section is None:
            options = ((load_toml(path)[0].get("tool") or {}).get("pytest") or {}).get("ini_options")
            if isinstance(options, dict):
                value = options.get("addopts", "")
                return (" ".join(value) if isinstance(value, list) else str(value)), name
            continue
        value = _ini(path, section)
        if value is not None:
            return value, name
    return None


def test_flags(tree: Path) -> tuple[list[str], list[str]]:
    """(flags to add to ``pytest -rA``, notes)."""
    found = addopts(tree)
    if found is None or "--cov" not in found[0]:
        return [], []
    return ["--no-cov"], [f"coverage off (--no-cov): {found[1]}'s addopts turn pytest-cov on, and a floor on "
                          "coverage fails a run of a few test files"]
