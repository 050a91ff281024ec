"""What every reader of test declarations shares: the findings, the reading of pip arguments (a tox
``deps`` line, a nox ``session.install`` call), names that look like tests, brace expansion."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sweworld.envs.recipes.task import EXTRA_NAME

TEST_WORDS = frozenset({"test", "tests", "testing", "unit", "unittest", "unittests", "pytest", "integration",
                        "functional"})
"""Name parts of a tox env, nox session, group or hatch env that runs the tests."""
NOT_TEST_WORDS = frozenset({"lint", "linting", "docs", "doc", "release", "build", "format", "fmt", "typing",
                            "type", "types", "mypy", "pyright", "style", "spell", "publish", "changelog",
                            "docset", "readme", "precommit", "pre-commit", "bench", "benchmark", "fix", "pkg"})
"""Name parts that mark one as something else (a lint or docs env, a release session)."""
DEV_ONLY = ("black", "ruff", "flake8", "isort", "mypy", "pylint", "pre-commit", "sphinx", "furo", "myst-parser",
            "twine", "towncrier", "bump2version", "bumpversion", "bump-my-version", "tox", "nox", "pyright",
            "codespell", "commitizen", "mkdocs", "types-", "pip-tools", "ipython", "ipdb", "jupyter", "blacken-docs",
            "pydocstyle", "doc8", "check-manifest", "pyroma", "cogapp", "sphinxcontrib-", "sphinxext-")
"""Tools of a ``dev`` group or a hatch default env that no test run needs (prefixes of canonical names)."""
_SELF = re.compile(r"^(?:\.|\./|\{toxinidir\}|\{tox_root\})/?(?:\[([^\]]*)\])?$")
_VALUE_FLAGS = frozenset({"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--python", "--prefix",
                          "-t", "--target", "--root", "--src", "--platform", "--python-version", "--only-binary",
                          "--no-binary", "--trusted-host", "--config-settings", "-C"})


@dataclass
class Found:
    """Test declarations read from one project: requirement candidates with where each came from
    (still unchecked), extras of the editable install, dependency groups, a test command seen."""

    requirements: list[tuple[str, str]] = field(default_factory=list)
    extras: list[str] = field(default_factory=list)
    groups: list[tuple[str, str]] = field(default_factory=list)
    test_cmd: str | None = None
    notes: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    def merge(self, other: Found) -> None:
        self.requirements += other.requirements
        self.extras += [e for e in other.extras if e not in self.extras]
        self.groups += [g for g in other.groups if g not in self.groups]
        self.test_cmd = self.test_cmd or other.test_cmd
        self.notes += other.notes
        self.sources += [s for s in other.sources if s not in self.sources]

    def add_extras(self, text: str, where: str) -> None:
        """Extras named in ``text`` ('test,dev' or 'test dev'), each checked as a name."""
        for name in re.split(r"[\s,]+", text.strip()):
            if not name:
                continue
            if EXTRA_NAME.match(name):
                if name not in self.extras:
                    self.extras.append(name)
            else:
                self.notes.append(f"{where}: extra {name!r} is not a valid extra name: dropped")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def name_parts(name: str) -> list[str]:
    return [p for p in re.split(r"[-_.:\s]+", name.lower()) if p]


def looks_like_tests(name: str) -> bool:
    """Whether an env, session or group called ``name`` runs the tests: a test word among its parts
    and none of a lint, docs, typing or release one ('tests', 'unit-tests', 'test_py311'; not 'docs-tests')."""
    parts = name_parts(name)
    return any(p in TEST_WORDS for p in parts) and not any(p in NOT_TEST_WORDS for p in parts)


def dev_only(requirement: str) -> bool:
    """Whether ``requirement`` names a lint, docs or release tool (DEV_ONLY)."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return bool(match) and canonical(match.group(1)).startswith(DEV_ONLY)


def expand_braces(text: str) -> list[str]:
    """tox's generative names: 'py3{8,9}-tests{,-cov}' -> py38-tests, py38-tests-cov, py39-tests, ..."""
    match = re.search(r"\{([^{}]*)\}", text)
    if match is None:
        return [text]
    head, tail = text[:match.start()], text[match.end():]
    return [out for choice in match.group(1).split(",") for out in expand_braces(head + choice.strip() + tail)]


def self_extras(target: str) -> list[str] | None:
    """The extras of an install of the project itself ('.', '.[test]', '{toxinidir}[a,b]'); None otherwise."""
    match = _SELF.match(target.strip())
    if match is None:
        return None
    return [e.strip() for e in (match.group(1) or "").split(",") if e.strip()]


def read_requirement_file(tree: Path, name: str, where: str, found: Found) -> None:
    """Inline the requirement file ``name`` of the tree (``-r`` includes followed); missing or outside: a note."""
    from sweworld.envs.swebench_specs import read_requirements

    path = (tree / name.strip()).resolve()
    if not path.is_relative_to(tree.resolve()) or not path.is_file():
        found.notes.append(f"{where}: requirement file '{name.strip()}' not found in the tree: skipped")
        return
    rel = str(path.relative_to(tree.resolve()))
    for line in read_requirements(path, tree, found.notes):
        found.requirements.append((line, f"{where} -r {rel}"))


def _option_value(tokens: list[str], i: int, short: str, long: str) -> tuple[str | None, int]:
    """(value, next index) when ``tokens[i]`` is ``short``/``long`` with its value; (None, i) otherwise."""
    token = tokens[i]
    if token in (short, long):
        return (tokens[i + 1] if i + 1 < len(tokens) else ""), i + 2
    if token.startswith(long + "="):
        return token[len(long) + 1:], i + 1
    if short and token.startswith(short) and not token.startswith("--"):
        return token[len(short):].lstrip("="), i + 1
    return None, i


def pip_args(tokens: list[str], where: str, tree: Path, found: Found) -> None:
    """The arguments of one ``pip install`` (or ``uv pip install``, ``uv sync``) into ``found``:
    ``-r FILE`` inlined, ``-e .[x]``/``.[x]`` -> extras, ``--group NAME`` -> groups, ``--extra X``,
    requirement candidates; constraint files, other paths and options noted and skipped."""
    i = 0
    while i < len(tokens):
        token = tokens[i]
        for short, long, kind in (("-r", "--requirement", "req"), ("-e", "--editable", "edit"),
                                  ("-c", "--constraint", "con"), ("", "--group", "group"), ("", "--extra", "extra")):
            value, after = _option_value(tokens, i, short, long)
            if value is not None:
                _pip_option(kind, value, where, tree, found)
                i = after
                break
        else:
            if token in _VALUE_FLAGS:
                i += 2
                continue
            if token.startswith("-"):
                i += 1
                continue
            extras = self_extras(token)
            if extras is not None:
                found.add_extras(",".join(extras), where)
            else:
                found.requirements.append((token, where))
            i += 1


def _pip_option(kind: str, value: str, where: str, tree: Path, found: Found) -> None:
    if kind == "req":
        read_requirement_file(tree, value, where, found)
    elif kind == "edit":
        extras = self_extras(value)
        if extras is None:
            found.notes.append(f"{where}: editable install of '{value}' (not the project itself): skipped")
        else:
            found.add_extras(",".join(extras), where)
    elif kind == "con":
        found.notes.append(f"{where}: constraint file '{value}' not applied")
    elif kind == "group":
        name = value.rsplit(":", 1)[-1].strip()
        if name and not name.startswith("-"):  # "--group" with its value not readable: nothing
            found.groups.append((name, where))
    else:
        found.add_extras(value, where)


def split_line(line: str) -> list[str]:
    """A deps line as pip arguments: options and self-installs split like a shell would, a
    requirement ('pytest >= 7 ; python_version < "3.12"') kept whole."""
    text = line.strip()
    if text.startswith("-") or self_extras(text.split()[0] if text.split() else "") is not None:
        try:
            return shlex.split(text)
        except ValueError:
            return text.split()
    return [text]


def as_strings(value: Any) -> list[str]:
    """A TOML value that should be a list of strings (or one string) as that list; others dropped."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []
