"""Test dependencies declared in pyproject.toml (and hatch.toml): PEP 735 ``[dependency-groups]``
(``{include-group = ...}`` resolved), poetry's test and dev groups (and the legacy
``dev-dependencies``; its ``^``/``~`` constraints written as PEP 440), pdm's ``dev-dependencies``,
hatch's test env (``dependencies``, ``extra-dependencies``, ``features``, ``dependency-groups``).

A group or env called like tests ('test', 'tests', 'testing', 'unit-tests') is taken; a ``dev`` one only
when there is no such group, and then without its lint, docs and release tools (common.DEV_ONLY)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sweworld.envs.recipes.default import load_toml
from sweworld.mine.testdeps.common import Found, as_strings, canonical, dev_only, looks_like_tests

DEV_NAMES = ("dev", "develop", "development")


def _table(data: Any, *keys: str) -> dict[str, Any]:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def chosen_names(names: list[str]) -> tuple[list[str], bool]:
    """(the group or env names to take, whether they are dev ones): the test-like, else a dev one."""
    tests = [n for n in names if looks_like_tests(n)]
    if tests:
        return tests, False
    return [n for n in names if canonical(n) in DEV_NAMES][:1], True


def group_requirements(groups: dict[str, Any], name: str, where: str, notes: list[str],
                       _seen: tuple[str, ...] = ()) -> list[str]:
    """The requirements of dependency group ``name`` (PEP 735: names compared normalised, includes
    followed, a cycle or a missing group noted)."""
    table = {canonical(k): v for k, v in groups.items()}
    key = canonical(name)
    if key in _seen:
        notes.append(f"{where}: dependency group {name!r} includes itself ({' -> '.join((*_seen, key))}): cycle cut")
        return []
    if key not in table:
        notes.append(f"{where}: dependency group {name!r} not declared in [dependency-groups]")
        return []
    out: list[str] = []
    for item in table[key] if isinstance(table[key], list) else []:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict) and isinstance(item.get("include-group"), str):
            out += group_requirements(groups, item["include-group"], where, notes, (*_seen, key))
        else:
            notes.append(f"{where}: entry {item!r} of group {name!r} not understood: skipped")
    return out


def read_groups(data: dict[str, Any], requested: list[tuple[str, str]], found: Found) -> None:
    """PEP 735 groups: those named by tox or nox (``requested``), else the test-like ones."""
    groups = _table(data, "dependency-groups")
    names = [(name, where) for name, where in requested]
    if not names and groups:
        picked, dev = chosen_names(list(groups))
        names = [(n, "pyproject.toml [dependency-groups]" + (" (dev: no test group)" if dev else "")) for n in picked]
    for name, where in names:
        label = f"dependency group {name!r} ({where})"
        reqs = group_requirements(groups, name, label, found.notes)
        dev = canonical(name) in DEV_NAMES
        found.requirements += [(r, label) for r in reqs if not (dev and dev_only(r))]
        found.sources.append(f"dependency group {name}")


def _caret_tilde(op: str, version: str) -> str | None:
    nums = [int(n) for n in re.findall(r"\d+", version.split("-")[0].split("+")[0])][:3]
    if not nums:
        return None
    if op == "^":
        index = next((i for i, n in enumerate(nums) if n != 0), len(nums) - 1)
    else:
        index = 1 if len(nums) >= 2 else 0
    upper = ".".join(str(n) for n in [*nums[:index], nums[index] + 1])
    return f">={version},<{upper}"


def poetry_constraint(text: str) -> str | None:
    """A poetry version constraint as a PEP 440 specifier ('^1.2' -> '>=1.2,<2'); None when there is none
    ('1.0 || 2.0' has no PEP 440 form)."""
    text = text.strip()
    if text in ("", "*"):
        return ""
    if "|" in text:
        return None
    out = []
    for part in (p for p in re.split(r"\s*,\s*|\s+(?=[<>=!~^])", text) if p):
        match = re.fullmatch(r"(\^|~=|~|>=|<=|!=|==|>|<|=)?\s*v?(\d[0-9A-Za-z.*+!-]*)", part)
        if match is None:
            return None
        op, version = match.group(1) or "==", match.group(2)
        piece = _caret_tilde(op, version) if op in ("^", "~") else f"{'==' if op == '=' else op}{version}"
        if piece is None:
            return None
        out.append(piece)
    return ",".join(out)


def poetry_requirement(name: str, spec: Any, where: str, notes: list[str]) -> str | None:
    """A poetry dependency entry as a PEP 508 requirement; None (with a note) for path, git and url ones."""
    extras: list[str] = []
    marker = ""
    if isinstance(spec, dict):
        if any(k in spec for k in ("git", "path", "url", "file")):
            notes.append(f"{where}: {name} from {next(k for k in ('git', 'path', 'url', 'file') if k in spec)}: skipped")
            return None
        extras = as_strings(spec.get("extras"))
        python = poetry_constraint(str(spec["python"])) if "python" in spec else ""
        marker = " and ".join(f'python_full_version {m.group(1)} "{m.group(2)}"'
                              for m in re.finditer(r"([<>=!~]=?|==)([^,]+)", python or ""))
        marker = " and ".join(m for m in (marker, str(spec.get("markers") or "")) if m)
        spec = spec.get("version", "*")
    if not isinstance(spec, str):
        notes.append(f"{where}: {name} has several constraints: taken without one")
        spec = "*"
    constraint = poetry_constraint(spec)
    if constraint is None:
        notes.append(f"{where}: {name} constraint {spec!r} has no PEP 440 form: taken without one")
        constraint = ""
    return f"{name}{'[' + ','.join(extras) + ']' if extras else ''}{constraint}{'; ' + marker if marker else ''}"


def read_poetry(data: dict[str, Any], found: Found) -> None:
    poetry = _table(data, "tool", "poetry")
    tables = {name: _table(group, "dependencies") for name, group in _table(poetry, "group").items()}
    picked, dev = chosen_names(list(tables))
    chosen = [(f"pyproject.toml [tool.poetry.group.{n}.dependencies]", tables[n], dev) for n in picked]
    if not chosen and _table(poetry, "dev-dependencies"):
        chosen = [("pyproject.toml [tool.poetry.dev-dependencies]", _table(poetry, "dev-dependencies"), True)]
    for where, table, is_dev in chosen:
        found.sources.append(where)
        for name, spec in table.items():
            if canonical(name) == "python" or (is_dev and dev_only(name)):
                continue
            requirement = poetry_requirement(name, spec, where, found.notes)
            if requirement:
                found.requirements.append((requirement, where))


def read_pdm(data: dict[str, Any], found: Found) -> None:
    groups = _table(data, "tool", "pdm", "dev-dependencies")
    picked, dev = chosen_names(list(groups))
    for name in picked:
        where = f"pyproject.toml [tool.pdm.dev-dependencies] {name}"
        found.sources.append(where)
        found.requirements += [(r, where) for r in as_strings(groups[name]) if not (dev and dev_only(r))]


def read_hatch(tree: Path, data: dict[str, Any], found: Found) -> None:
    envs = _table(data, "tool", "hatch", "envs")
    source = "pyproject.toml [tool.hatch.envs"
    if not envs and (tree / "hatch.toml").is_file():
        envs, source = _table(load_toml(tree / "hatch.toml")[0], "envs"), "hatch.toml [envs"
    names = [n for n in envs if looks_like_tests(n) or n == "hatch-test"]
    dev = not names
    for name in names or (["default"] if "default" in envs else []):
        env, where = _table(envs, name), f"{source}.{name}]"
        found.sources.append(where)
        for key in ("dependencies", "extra-dependencies"):
            found.requirements += [(r, f"{where} {key}") for r in as_strings(env.get(key)) if not (dev and dev_only(r))]
        found.add_extras(",".join(as_strings(env.get("features"))), f"{where} features")
        found.groups += [(g, f"{where} dependency-groups") for g in as_strings(env.get("dependency-groups"))]


def read_pyproject(tree: Path, data: dict[str, Any], requested: list[tuple[str, str]]) -> Found:
    """Everything above from the project's pyproject.toml (``data``); ``requested``: groups named by
    tox or nox."""
    found = Found()
    read_poetry(data, found)
    read_pdm(data, found)
    read_hatch(tree, data, found)
    read_groups(data, [*requested, *found.groups], found)
    return found
