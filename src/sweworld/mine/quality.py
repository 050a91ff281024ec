"""Candidates a reviewer would not keep, though their tests may pass: ``quality_reason``.

Three drops (keys of the summary's drop table), decided on the step's fix (``patch``, the non-test
side of the diff) and its message, before any validation run:

- ``formatting only``: every file of the fix means what it meant before. A Python file (``.py``,
  ``.pyi``) is compared by ``ast.dump`` of its blob at the base commit and at the fix commit (read
  from the mirror): comments, blank lines, quotes, line breaks and parentheses vanish; docstrings do
  not (they are ``__doc__`` at run time and doctests read them), so a docstring edit is a change. Any
  other file is compared with all whitespace removed. A file added or deleted is a change.
- ``lint or style only``: the subject is a lint/style/CI/build/typing one (a conventional-commit
  prefix ``style:``, ``lint:``, ``ci:``, ``build:``, ``typing:``, ``chore(lint):``, ``chore(ruff):``...
  or a ``[pre-commit.ci]`` commit) *and* the diff agrees: every file of the fix is unchanged in
  meaning as above, with type annotations (and ``typing`` imports, ``if TYPE_CHECKING:`` blocks)
  ignored, or is a tool's configuration file (``pyproject.toml``, ``setup.cfg``, ``tox.ini``,
  ``.pre-commit-config.yaml``, ``ruff.toml``, ``mypy.ini``, ``.github/...``). The subject alone
  never drops a step: ``build: fix the import of X`` that changes code is kept.
- ``statement says nothing``: the message (a merge's with the messages of the commits it brings,
  ``history.step_message``) is empty once merge subjects with nothing in them (``Merge commit from
  fork``, GitHub's security-advisory merges; ``Merge pull request #N from owner/branch``; ``Merge
  branch ...``), trailers (``Signed-off-by:``, ``Co-authored-by:``...) and words that name no problem
  (``fix``, ``wip``, ``update``...) are removed. When a model writes the statements
  (``--model-url``) such a step is kept: the model writes it from the fix and the tests.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path, PurePosixPath

from sweworld.mine.history import Commit
from sweworld.repos.git import try_git

STYLE_SUBJECT = re.compile(
    r"^(\[pre-commit\.ci\]|(style|lint|linting|format|fmt|ci|build|typing|types?)(\([^)]*\))?!?:|"
    r"chore\((lint|linting|style|format|fmt|ci|typing|types|pre-commit|ruff|black|isort|flake8|mypy)\)!?:)", re.I)
"""A subject that says the step is about lint, style, CI, the build or type annotations."""
TOOL_CONFIG_NAMES = frozenset({
    "pyproject.toml", "setup.cfg", "tox.ini", ".pre-commit-config.yaml", ".pre-commit-config.yml", "ruff.toml",
    ".ruff.toml", ".flake8", ".pylintrc", "pylintrc", "mypy.ini", ".mypy.ini", ".isort.cfg", ".editorconfig",
    ".coveragerc", ".yamllint", ".yamllint.yml", ".git-blame-ignore-revs", "noxfile.py", ".readthedocs.yml",
    ".readthedocs.yaml", "Makefile", "requirements-dev.txt", "dev-requirements.txt", "codecov.yml", ".codecov.yml"})
TOOL_CONFIG_DIRS = frozenset({".github", ".circleci", ".gitlab", ".azure-pipelines", "ci"})
MERGE_SUBJECTS = re.compile(
    r"^(Merge commit from fork|Merge pull request #\d+ from \S+|Merge branch '[^']*'( of \S+)?( into \S+)?|"
    r"Merge remote-tracking branch '[^']*'( into \S+)?|Merge [0-9a-f]{7,40}( into [0-9a-f]{7,40})?)\s*$", re.I)
TRAILER = re.compile(r"^[A-Za-z][A-Za-z-]*-by:\s|^(Change-Id|Cc|Fixes-commit|Refs?|Bug|Closes|See-also):\s", re.I)
EMPTY_WORDS = frozenset({"fix", "fixes", "fixed", "bugfix", "wip", "update", "updates", "updated", "changes",
                         "change", "tweak", "minor", "misc", "cleanup", "stuff", "temp", "tmp", "test", "tests"})
"""A message made of these words (and punctuation) names no problem."""
_PYTHON = (".py", ".pyi")
_FILE = re.compile(r"^diff --git a/(.+?) b/(.+)$", re.M)


def quality_reason(commit: Commit, patch: str, test_patch: str, statement: str, *, mirror: Path,
                   model_statements: bool = False) -> str | None:
    """Why the step ``commit`` (its fix ``patch``, tests ``test_patch``, message ``statement``) is not
    worth keeping (see the module docstring), or None; ``mirror`` holds its blobs."""
    del test_patch  # the fix decides: reformatted tests beside a real fix do not make it formatting
    paths = patch_paths(patch)
    if paths and all(_same_meaning(mirror, commit, p, annotations=False) for p in paths):
        return "formatting only"
    if STYLE_SUBJECT.match(commit.subject) and paths and all(
            is_tool_config(p) or _same_meaning(mirror, commit, p, annotations=True) for p in paths):
        return "lint or style only"
    if not model_statements and not statement_content(statement):
        return "statement says nothing"
    return None


def patch_paths(patch: str) -> list[str]:
    """The files ``patch`` changes (the new path of each ``diff --git`` header)."""
    return [m.group(2) for m in _FILE.finditer(patch)]


def is_tool_config(path: str) -> bool:
    """A lint, format, type-check, CI or packaging tool's configuration file."""
    parts = PurePosixPath(path).parts
    return parts[-1] in TOOL_CONFIG_NAMES or (len(parts) > 1 and parts[0] in TOOL_CONFIG_DIRS)


def statement_content(message: str) -> str:
    """``message`` without contentless merge subjects, trailers and empty words ('' when nothing is left)."""
    lines = [line.strip() for line in message.splitlines()]
    kept = [line for line in lines if line and not MERGE_SUBJECTS.match(line) and not TRAILER.match(line)]
    text = " ".join(kept)
    words = re.findall(r"[A-Za-z0-9_#]+", text)
    return text if any(w.lower() not in EMPTY_WORDS for w in words) else ""


def _blob(mirror: Path, sha: str | None, path: str) -> str | None:
    if sha is None:
        return None
    return try_git(f"--git-dir={mirror}", "cat-file", "blob", f"{sha}:{path}")


def _same_meaning(mirror: Path, commit: Commit, path: str, *, annotations: bool) -> bool:
    """The file at ``path`` means the same before and after ``commit`` (module docstring)."""
    old, new = _blob(mirror, commit.first_parent, path), _blob(mirror, commit.sha, path)
    if old is None or new is None:
        return False
    if not path.endswith(_PYTHON):
        return "".join(old.split()) == "".join(new.split())
    try:
        trees = [ast.parse(text) for text in (old, new)]
    except (SyntaxError, ValueError):
        return False
    if annotations:
        trees = [_Unannotate().visit(tree) for tree in trees]
    return ast.dump(trees[0]) == ast.dump(trees[1])


class _Unannotate(ast.NodeTransformer):
    """A tree without type annotations, ``typing`` imports and ``if TYPE_CHECKING:`` blocks."""

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.annotation = None
        return node

    def _function(self, node):
        node.returns = None
        self.generic_visit(node)
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_AnnAssign(self, node: ast.AnnAssign):
        if node.value is None:
            return None
        return ast.Assign(targets=[node.target], value=self.visit(node.value), lineno=0)

    def visit_ImportFrom(self, node: ast.ImportFrom):
        return None if node.module in ("typing", "typing_extensions", "__future__") else node

    def visit_If(self, node: ast.If):
        test = node.test
        name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
        return None if name == "TYPE_CHECKING" and not node.orelse else self.generic_visit(node)
