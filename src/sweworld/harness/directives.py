"""Test directives: the test files (or Django labels) a task's test command runs on.

Repositories the ``swebench`` package knows (``MAP_REPO_VERSION_TO_SPECS``) get exactly SWE-bench's
directives (``get_test_directives``: Django module labels, non-test files dropped). Other
repositories get the test files of ``test_patch`` minus ``NON_TEST_EXTS``. Synthesized instances
whose tests already live in the repository (empty ``test_patch``) get the files named by their
``FAIL_TO_PASS``/``PASS_TO_PASS`` ids; supported id forms:

- pytest node ids: ``path/to/test_x.py::Class::test[param]`` -> ``path/to/test_x.py``
  (a bare ``path/to/test_x.py`` too);
- Django/unittest verbose ids: ``test_name (module.sub.Class)`` or
  ``test_name (module.sub.Class.test_name)`` -> ``module.sub`` (a module label).

Bare test names (sympy's ``test_foo``) name no file and give nothing.

A test command that ends in ``-k`` (SWE-Gym's mypy specs) gets one directive instead: the names of the
``[case NAME]`` blocks the test patch adds, joined with `` or `` (SWE-Gym's ``make_test_command``; no
test files), or none when the patch adds no case.
"""

from __future__ import annotations

import re

import unidiff

from sweworld.core.types import Task
from sweworld.harness.patches import patch_paths

_DJANGO_ID = re.compile(r"^(?P<name>\S+) \((?P<dotted>[\w.]+)\)")


def _parsed(patch: str) -> list[tuple[str | None, str | None, bool]]:
    """(existing source, target, is a copy) per file of the patch, a/ b/ stripped; None for /dev/null."""
    def strip(name: str) -> str | None:
        if name == "/dev/null":
            return None
        return name[2:] if name.startswith(("a/", "b/")) else name
    out = []
    for pf in unidiff.PatchSet(patch):
        copy = any(str(line).startswith("copy from ") for line in pf.patch_info)
        out.append((strip(pf.source_file), strip(pf.target_file), copy))
    return out


def base_test_files(test_patch: str) -> tuple[list[str], list[str]]:
    """(existing, created): files that exist before the patch (to ``git checkout <base> --``) and
    files the patch creates (rename and copy targets included; delete them when reverting).

    A malformed patch falls back to ``patch_paths`` and counts every path as existing.
    """
    if not test_patch.strip():
        return [], []
    try:
        files = _parsed(test_patch)
    except (unidiff.UnidiffParseError, ValueError, IndexError):
        return patch_paths(test_patch), []
    existing: dict[str, None] = {}
    created: dict[str, None] = {}
    for source, target, copy in files:
        if source is not None and not copy:
            existing[source] = None
        if target is not None and target != source:
            created[target] = None
    for path in existing:
        created.pop(path, None)
    return list(existing), list(created)


def test_files(test_patch: str) -> list[str]:
    """The files a test patch modifies, deletes or creates, in diff order, deduplicated.

    SWE-bench's ``get_modified_files`` (sources that are not ``/dev/null``) plus the files the
    patch creates (rename and copy targets included; copy sources, which are only read, are not).
    """
    if not test_patch.strip():
        return []
    try:
        files = _parsed(test_patch)
    except (unidiff.UnidiffParseError, ValueError, IndexError):
        return patch_paths(test_patch)
    out: dict[str, None] = {}
    for source, target, copy in files:
        if source is not None and not copy:
            out[source] = None
        if target is not None:
            out[target] = None
    return list(out)


test_files.__test__ = False  # type: ignore[attr-defined]  # not a pytest test when imported


def id_targets(test_ids: list[str]) -> list[str]:
    """Files (pytest ids) or module labels (Django ids) named by test ids; deduplicated, sorted."""
    out: set[str] = set()
    for test_id in test_ids:
        test_id = test_id.strip()
        django = _DJANGO_ID.match(test_id)
        if "::" in test_id:
            out.add(test_id.split("::", 1)[0])
        elif test_id.endswith(".py") and " " not in test_id:
            out.add(test_id)
        elif django:
            parts = django["dotted"].split(".")
            if parts[-1] == django["name"]:
                parts.pop()
            while len(parts) > 1 and parts[-1][:1].isupper():
                parts.pop()
            out.add(".".join(parts))
    return sorted(p for p in out if p)


_CASE = re.compile(r"^\+\[case ([^\]\s]+)\]", re.MULTILINE)


def added_cases(test_patch: str) -> list[str]:
    """The names of the ``[case NAME]`` blocks (mypy's data-driven tests) that ``test_patch`` adds, in order."""
    return list(dict.fromkeys(_CASE.findall(test_patch)))


def test_directives(task: Task, test_cmd: str | None = None) -> list[str]:
    """What the test command (``test_cmd``, the recipe's) runs on: files, Django module labels, or a
    ``-k`` expression of the added mypy cases (see the module docstring)."""
    if test_cmd is not None and test_cmd.split()[-1:] == ["-k"]:
        cases = added_cases(task.test_patch)
        return [" or ".join(cases)] if cases else []
    if not task.test_patch.strip():
        return id_targets([*task.FAIL_TO_PASS, *task.PASS_TO_PASS])
    from swebench.harness.constants import MAP_REPO_VERSION_TO_SPECS, NON_TEST_EXTS

    if task.repo in MAP_REPO_VERSION_TO_SPECS:
        from swebench.harness.test_spec.python import get_test_directives

        return get_test_directives({"repo": task.repo, "test_patch": task.test_patch})
    return [f for f in test_files(task.test_patch) if not any(f.endswith(ext) for ext in NON_TEST_EXTS)]


test_directives.__test__ = False  # type: ignore[attr-defined]
