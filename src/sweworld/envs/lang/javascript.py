"""JavaScript and TypeScript: path rules, detection and the release line of a commit.

A tree is JavaScript when it has a ``package.json`` at its root and none of Python's project files
(``pyproject.toml``, ``setup.py``, ``setup.cfg``). Paths:

- source: ``.js .mjs .cjs .jsx .ts .tsx .mts .cts`` files that are not tests, docs, nor under a
  top-level ``examples/``, ``benchmarks/``, ``website/``, ``scripts/``, ...; type declarations
  (``.d.ts``) are not source (a change to them alone changes no test's outcome), though they stay
  with the fix like every non-test file;
- test: a directory ``__tests__``, ``__mocks__``, ``spec``, ``specs``, ``e2e``, ``cypress`` or one
  that starts with ``test`` (``test/``, ``tests/``, ``test-utils/``), or a file ``*.test.*``,
  ``*.spec.*``, ``*_test.*``, ``*.test-d.ts`` or ``test.js`` (tape's habit);
- docs: Python's rule (``docs/``, change logs, text files at the root);
- vendored: ``vendor/``, ``third_party/``, ``node_modules/``; generated: ``dist/``, ``build/``,
  ``coverage/``, ``out/``, minified and bundled files (``*.min.js``, ``*.bundle.js``), ``generated/``.
  Lock files (``package-lock.json``, ``yarn.lock``, ``pnpm-lock.yaml``) are not source.

The environment (``envs.lang.js_env``): dependencies installed by the repository's package manager
at the env commit, tests run by the runner ``package.json`` names.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from sweworld.envs.lang import js_env
from sweworld.envs.lang.base import Language, PathRules, parts, under
from sweworld.envs.lang.python import PROJECT_FILES, is_doc_path
from sweworld.repos.git import try_git

SOURCE_SUFFIXES = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".mts", ".cts")
DECLARATION = re.compile(r"\.d\.[mc]?ts$")
TEST_DIRS = frozenset({"__tests__", "__mocks__", "spec", "specs", "e2e", "cypress"})
TEST_FILE = re.compile(r"(\.(test|spec)|_test|\.test-d)\.[cm]?[jt]sx?$|^(test|tests|spec)(\.[\w-]+)?\.[cm]?[jt]sx?$")
"""``*.test.js``, ``*.spec.ts``, ``*_test.js``; at any depth ``test.js``, ``tests.js``, ``spec.js`` and their
variants (``test.node.js``, debug's)."""
NOT_SOURCE_DIRS = frozenset({"example", "examples", "benchmark", "benchmarks", "bench", "website", "site",
                             "scripts", "tools", "demo", "demos", ".github", ".husky"})
VENDOR_DIRS = frozenset({"vendor", "vendored", "third_party", "thirdparty", "node_modules"})
GENERATED_DIRS = frozenset({"dist", "build", "coverage", "out", ".next", "generated", "__generated__"})
GENERATED_FILE = re.compile(r"[.-](min|bundle)\.[cm]?js$|\.map$")


def is_test_path(path: str) -> bool:
    names = parts(path)
    if not names:
        return False
    if any(p.lower().startswith("test") or p in TEST_DIRS for p in names[:-1]):
        return True
    return bool(TEST_FILE.search(names[-1]))


def is_source_path(path: str) -> bool:
    names = parts(path)
    return (path.endswith(SOURCE_SUFFIXES) and not DECLARATION.search(path) and not is_test_path(path)
            and not is_doc_path(path) and not (len(names) > 1 and names[0].lower() in NOT_SOURCE_DIRS))


def is_vendored(path: str) -> bool:
    return under(path, VENDOR_DIRS)


def is_generated(path: str) -> bool:
    return under(path, GENERATED_DIRS) or bool(GENERATED_FILE.search(path))


def detect(tree: Path) -> bool:
    return (tree / "package.json").is_file() and not any((tree / name).is_file() for name in PROJECT_FILES)


_VERSION = re.compile(r"^v?(\d+)\.(\d+)")


def read_version(mirror: Path, sha: str) -> tuple[str | None, str]:
    """(``X.Y`` of ``package.json``'s ``version`` at ``sha``, where), else the nearest tag's."""
    text = try_git(f"--git-dir={mirror}", "show", f"{sha}:package.json") or ""
    try:
        version = str(json.loads(text).get("version") or "") if text else ""
    except (ValueError, AttributeError):
        version = ""
    match = _VERSION.match(version)
    if match:
        return f"{int(match.group(1))}.{match.group(2)}", "package.json"
    tag = try_git(f"--git-dir={mirror}", "describe", "--tags", "--abbrev=0", sha) or ""
    match = re.search(r"(\d+)\.(\d+)", tag)
    if match:
        return f"{int(match.group(1))}.{match.group(2)}", f"tag {tag.strip()}"
    return None, "no version in package.json and no tag"


PATHS = PathRules(is_test=is_test_path, is_doc=is_doc_path, is_source=is_source_path, is_vendored=is_vendored,
                  is_generated=is_generated)
JAVASCRIPT = Language(name="javascript", paths=PATHS, detect=detect, infer=js_env.infer, recipe=js_env.recipe,
                      env_script=js_env.env_script, instance_lines=js_env.instance_lines,
                      toolchain=js_env.toolchain, read_version=read_version)
