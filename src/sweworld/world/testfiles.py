"""What a real evaluation would see, computed without touching the episode's workspace.

``inspect_patch`` runs ONE script through the executor, in the repository, on a throwaway git index
(``GIT_INDEX_FILE`` in a temporary file): a copy of the repository's index when it holds exactly the
base commit (``git diff-index --cached``: a fresh episode), else ``git read-tree <base>``; ``git
apply --cached --check`` of the agent's patch (does it apply to the base commit? the index is left
as it is), ``git apply --cached`` of the test patch and ``git show :<path>`` of each test file. The working
tree, the real index and the shell's state (no ``export``; the script runs in a subshell) are left
as they were. A patch ``git apply`` refuses is tried as the harness's chain goes on, with ``patch
--batch --fuzz=5 -p1 --dry-run`` (which writes nothing), when the working tree holds the base (a
fresh episode: ``git diff-index --quiet <base>``); its other paths are then as unsafe to the view as
to the harness (``patches.unsafe_paths``). Patches with hunks at the wrong lines (diffs made from
search/replace edits) apply that way in a real evaluation.

A workspace that is not a git repository (an in-memory executor) gets the files as they are
(``read_file``), the test patch not applied, and ``applied=None`` (unknown). A workspace that
answers these questions itself (``Inspects``: ``world.treeview.TreeView``, a base tree read in place
for a simulated evaluation) is asked instead; it runs no script.
"""

from __future__ import annotations

import secrets
import shlex
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field

from sweworld.core.executor import Executor
from sweworld.core.types import Task
from sweworld.harness.evalscript import heredoc_delimiter
from sweworld.harness.patches import FUZZY, unsafe_paths, with_newline

RAW_FACTOR = 4
"""Bytes read of each file: ``RAW_FACTOR * limit`` (the context then keeps head and tail of ``limit``)."""


class PatchView(BaseModel):
    """The answer of ``inspect_patch``."""

    git: bool = Field(description="The workspace is a git repository holding the base commit.")
    applied: bool | None = Field(default=None, description="The agent's patch applies to the base commit "
                                 "(None: not checked, no git or no patch given).")
    test_patch_applied: bool | None = Field(default=None, description="The test patch applied (None: no git).")
    files: list[tuple[str, str]] = Field(default_factory=list, description="(path, text) of each test file that exists.")


@runtime_checkable
class Inspects(Protocol):
    """A workspace that answers ``inspect_patch`` itself and reads the base files, running no command
    (``world.treeview.TreeView``); the SWRs take it where they take an ``Executor``."""

    def inspect_patch(self, task: Task, patch: str | None, paths: list[str], *, limit: int) -> PatchView:
        ...

    def read_file(self, path: str) -> str:
        ...


Workspace = Executor | Inspects
"""What an SWR evaluation reads the repository through."""


def _fed(text: str, nonce: str) -> tuple[str, str]:
    """(the here-document's redirection, its lines and closing delimiter) that feed ``text``."""
    body = with_newline(text)
    delimiter = heredoc_delimiter(body, nonce)
    return f"<<'{delimiter}'", body + delimiter


def _heredoc(command: str, text: str, nonce: str, then: str) -> list[str]:
    """``command`` reading ``text`` on stdin, its output discarded, then ``then`` if it succeeded."""
    redirect, body = _fed(text, nonce)
    return [f"{command} - {redirect} >/dev/null 2>&1 && {then}", body]


def _script(task: Task, patch: str | None, paths: list[str], nonce: str, limit: int) -> str:
    git = 'GIT_INDEX_FILE="$idx" git'
    base = shlex.quote(task.base_commit)
    lines = ["(", 'idx=$(mktemp "${TMPDIR:-/tmp}/sweworld-index-XXXXXX") || exit 0',
             # the real index, when it holds the base (a fresh episode: 3 ms), else the base read in (30-40 ms)
             f'{{ cp "$(git rev-parse --git-path index 2>/dev/null)" "$idx" 2>/dev/null '
             f"&& {git} diff-index --cached --quiet {base} 2>/dev/null; }} || {git} read-tree {base} >/dev/null 2>&1 "
             '|| { rm -f "$idx"; exit 0; }', f"echo 'GIT {nonce}'"]
    if patch is not None and patch.strip():  # --check leaves the index as it is: the base, for the test patch
        redirect, body = _fed(patch, nonce)
        fuzzy = (f"{{ {git} diff-index --quiet {base} -- && {' '.join(FUZZY)} --dry-run -i \"$p\"; }}"
                 if not unsafe_paths(patch) else "false")
        lines += ['p=$(mktemp "${TMPDIR:-/tmp}/sweworld-patch-XXXXXX") || { rm -f "$idx"; exit 0; }', f"cat > \"$p\" {redirect}",
                  body, f"{{ {git} apply --cached --check \"$p\" || {fuzzy}; }} >/dev/null 2>&1 "
                  f"&& echo 'APPLIED {nonce}'", 'rm -f "$p"']
    if task.test_patch.strip():
        lines += _heredoc(f"{git} apply --cached", task.test_patch, nonce, f"echo 'TESTPATCH {nonce}'")
    else:
        lines.append(f"echo 'TESTPATCH {nonce}'")
    for i, path in enumerate(paths):
        spec = shlex.quote(":" + path)
        lines.append(f"if {git} cat-file -e {spec} 2>/dev/null; then echo 'FILE {nonce} {i}'; "
                     f"{git} show {spec} | head -c {RAW_FACTOR * limit}; echo; echo 'END {nonce}'; fi")
    lines += ['rm -f "$idx"', ")"]
    return "\n".join(lines) + "\n"


def read_plain(executor: Workspace, paths: list[str]) -> list[tuple[str, str]]:
    out = []
    for path in paths:
        try:
            out.append((path, executor.read_file(path)))
        except (OSError, UnicodeError):
            continue
    return out


def inspect_patch(executor: Workspace, task: Task, patch: str | None, paths: list[str], *,
                  limit: int = 16_000) -> PatchView:
    """See the module docstring. ``paths``: the test files to read (relative to the repository)."""
    if not limit:
        limit = 1 << 40  # unlimited in practice
    if isinstance(executor, Inspects):
        return executor.inspect_patch(task, patch, paths, limit=limit)
    nonce = secrets.token_hex(8)
    result = executor.run(_script(task, patch, paths, nonce, limit), cwd=executor.workdir)
    out = result.output
    if f"GIT {nonce}\n" not in out:
        return PatchView(git=False, files=read_plain(executor, paths))
    files: list[tuple[str, str]] = []
    end = f"\nEND {nonce}"
    for i, path in enumerate(paths):
        head = f"FILE {nonce} {i}\n"
        start = out.find(head)
        if start < 0:
            continue
        start += len(head)
        stop = out.find(end, start)
        files.append((path, out[start:stop if stop >= 0 else len(out)]))
    return PatchView(git=True, applied=(f"APPLIED {nonce}" in out) if patch is not None and patch.strip() else None,
                     test_patch_applied=f"TESTPATCH {nonce}" in out, files=files)


def files_after_test_patch(executor: Workspace, task: Task, paths: list[str], *, limit: int = 16_000
                           ) -> list[tuple[str, str]]:
    """(path, text) of the test files as a real evaluation sees them (after the test patch)."""
    return inspect_patch(executor, task, None, paths, limit=limit).files
