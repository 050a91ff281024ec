"""The test env of a tox configuration: tox.ini, setup.cfg's ``[tox:tox]``, pyproject.toml's
``[tool.tox]`` (its ``legacy_tox_ini`` string or the TOML schema) or tox.toml, the first present as
tox looks for them.

The env read is the one tox would make for a test run under the chosen Python: ``[testenv]`` (or
``env_run_base``) and every named env whose factors are all a test word or this Python ('py311',
'3.11', 'tests', 'py311-unit'). Factor-conditional lines (``py311,py312: x``, ``unit: pytest``,
``!docs: y``) are kept when their condition holds for that env: 'lint: flake8' or 'py38: x' under 3.11
are dropped. ``{[section]key}`` substitutions and ``{toxinidir}``/``{env:X:default}`` are resolved;
other substitutions leave the line unreadable (it is then dropped as not a requirement).
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path
from typing import Any

from sweworld.mine.testdeps.common import TEST_WORDS, Found, as_strings, expand_braces, pip_args, split_line

_FACTOR_LINE = re.compile(r"^(!?[\w.{}]+(?:\s*[-,]\s*!?[\w.{}]+)*)\s*:(?!//)\s*(.*)$")
_SUBST = re.compile(r"\{\[([^\]]+)\]([^{}]+)\}")
KEYS = ("deps", "extras", "dependency_groups")


def env_factors(python: str) -> set[str]:
    """The factors of the test env under Python ``python`` ('3.11'): py311, py3, 3.11, the test words."""
    major, minor = python.split(".")[:2]
    return {"py", "py3", f"py{major}{minor}", f"py{major}.{minor}", f"{major}.{minor}", f"{major}{minor}",
            "cpython", *TEST_WORDS}


def _split_top(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [p.strip() for p in [*parts, text[start:]] if p.strip()]


def condition_holds(expr: str, factors: set[str]) -> bool:
    """Whether tox's factor condition ``expr`` ('py{38,39}-django32,!docs') holds in an env of ``factors``."""
    for alternative in (a for part in _split_top(expr) for a in expand_braces(part)):
        wanted = [f.strip() for f in alternative.split("-") if f.strip()]
        if wanted and all((f[1:] not in factors) if f.startswith("!") else (f in factors) for f in wanted):
            return True
    return False


def is_test_env(name: str, factors: set[str]) -> bool:
    """Whether the env ``name`` (braces expanded) is a test run under these factors."""
    return any(all(f in factors for f in n.split("-") if f) for n in expand_braces(name.strip()))


def conditional_lines(raw: str, factors: set[str]) -> list[str]:
    """The lines of a tox value, comments and continuations handled, factor conditions resolved."""
    out = []
    for line in re.sub(r"\\[ \t]*\n[ \t]*", " ", raw).splitlines():
        line = re.split(r"(?:^|\s)#", line, maxsplit=1)[0].strip()
        match = _FACTOR_LINE.match(line)
        if match:
            if not condition_holds(match.group(1), factors):
                continue
            line = match.group(2).strip()
        if line:
            out.append(line)
    return out


def _substitute(value: str, parser: configparser.ConfigParser, notes: list[str], where: str, depth: int = 0) -> str:
    def ref(match: re.Match[str]) -> str:
        section, key = match.group(1).strip(), match.group(2).strip()
        raw = parser.get(section, key, fallback=None) if depth < 8 else None
        if raw is None:
            notes.append(f"{where}: substitution {match.group(0)} not found: left empty")
            return ""
        return _substitute(raw, parser, notes, where, depth + 1)

    value = _SUBST.sub(ref, value)
    value = value.replace("{toxinidir}", ".").replace("{tox_root}", ".").replace("{/}", "/")
    value = re.sub(r"\{env:[^:}]+:([^{}]*)\}", r"\1", value)
    return re.sub(r"\{env:[^{}]*\}", "", value)


def _take(key: str, lines: list[str], where: str, tree: Path, found: Found) -> None:
    if key == "deps":
        for line in lines:
            pip_args(split_line(line), where, tree, found)
    elif key == "extras":
        found.add_extras(",".join(lines), where)
    else:
        found.groups += [(g, where) for line in lines for g in re.split(r"[\s,]+", line) if g]


def read_ini(text: str, filename: str, tree: Path, python: str) -> Found:
    """The test env of a tox.ini-style text (tox.ini, setup.cfg, ``legacy_tox_ini``)."""
    found = Found(sources=[filename])
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text, source=filename)
    except configparser.Error as exc:
        found.notes.append(f"{filename}: not readable as an ini file ({str(exc).splitlines()[0]}): not used")
        return found
    factors = env_factors(python)
    for section in parser.sections():
        named = section.split(":", 1)[1] if section.startswith("testenv:") else None
        if section != "testenv" and (named is None or not is_test_env(named, factors)):
            continue
        for key in KEYS:
            if parser.has_option(section, key):
                where = f"{filename} [{section}] {key}"
                raw = _substitute(parser.get(section, key), parser, found.notes, where)
                _take(key, conditional_lines(raw, factors), where, tree, found)
    return found


def _toml_items(data: dict[str, Any], value: Any, where: str, notes: list[str], depth: int = 0) -> list[str]:
    """A TOML list of strings with ``{replace = "ref", of = [...]}`` entries spliced in."""
    out: list[str] = []
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict) and item.get("replace") == "ref" and depth < 8:
            path = item.get("of") or (["env", item.get("env"), item.get("key")] if item.get("env") else [])
            target: Any = data
            for part in path:
                target = target.get(part) if isinstance(target, dict) else None
            if target is None:
                notes.append(f"{where}: reference {item} not found: skipped")
            else:
                out += _toml_items(data, target, where, notes, depth + 1)
        else:
            notes.append(f"{where}: entry {item!r} not understood: skipped")
    return out


def read_toml(data: dict[str, Any], filename: str, tree: Path, python: str) -> Found:
    """The test env of tox's TOML schema (tox.toml, or ``[tool.tox]`` in pyproject.toml)."""
    if isinstance(data.get("legacy_tox_ini"), str):
        return read_ini(data["legacy_tox_ini"], f"{filename} legacy_tox_ini", tree, python)
    found = Found(sources=[filename])
    factors = env_factors(python)
    tables = [("env_run_base", data.get("env_run_base"))]
    tables += [(f"env.{name}", table) for name, table in (data.get("env") or {}).items() if is_test_env(name, factors)]
    for name, table in tables:
        if not isinstance(table, dict):
            continue
        for key in KEYS:
            if key in table:
                where = f"{filename} [{name}] {key}"
                items = [i.replace("{tox_root}", ".").replace("{/}", "/")
                         for i in as_strings(_toml_items(data, table[key], where, found.notes))]
                _take(key, items, where, tree, found)
    return found


def read_tox(tree: Path, python: str, pyproject: dict[str, Any]) -> Found | None:
    """The test env of the project's tox configuration, or None when it has none."""
    from sweworld.mine.testdeps.pyproject import load_toml

    ini = tree / "tox.ini"
    if ini.is_file():
        return read_ini(ini.read_text(encoding="utf-8", errors="replace"), "tox.ini", tree, python)
    cfg = tree / "setup.cfg"
    if cfg.is_file():
        text = cfg.read_text(encoding="utf-8", errors="replace")
        if re.search(r"(?m)^\[tox:tox\]", text):
            return read_ini(text, "setup.cfg", tree, python)
    tool = (pyproject.get("tool") or {}).get("tox")
    if isinstance(tool, dict):
        return read_toml(tool, "pyproject.toml [tool.tox]", tree, python)
    if (tree / "tox.toml").is_file():
        data, error = load_toml(tree / "tox.toml")
        if error:
            return Found(notes=[f"tox.toml: {error}: not used"])
        return read_toml(data, "tox.toml", tree, python)
    return None
