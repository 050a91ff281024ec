"""An in-memory fake ``Executor`` and ``FakeBackend``: the seam tests' proof that tools, the agent loop
and grading run unchanged on anything that speaks the protocols.

``FakeExecutor`` keeps the episode's files in a dict; ``run`` understands only the little shell of
``fakeshell`` (what the tools need), anything else is exit 127 ``fake: not supported``; ``diff()``
writes what ``git diff`` would (``diff --git`` headers, blob index lines, a/ b/ names, difflib hunks).

``FakeBackend.evaluate`` runs no test: it applies the prediction in memory, writes a pytest ``-rA``
short summary (every FAIL_TO_PASS test PASSED when each file the gold patch touches equals its gold
content; every PASS_TO_PASS test PASSED unless such a file is neither the base nor the gold one)
and grades it with the harness's own ``grade.grade`` into the harness's ``InstanceReport``, written
with the files of a SWE-bench run.
"""

from __future__ import annotations

import difflib
import errno
import hashlib
import posixpath
from pathlib import Path

from tests.backends.fakeshell import FakeShell, MemoryFS
from unidiff import PatchSet, UnidiffParseError

from sweworld.core.errors import RepoError, SandboxError
from sweworld.core.types import ExecResult, Task
from sweworld.harness import grade
from sweworld.harness import report as hr
from sweworld.harness.patches import patch_paths
from sweworld.harness.predictions import Prediction
from sweworld.harness.report import InstanceReport, write_atomic

NO_NEWLINE = "\\ No newline at end of file\n"


def _blob(text: str | None) -> str:
    """The abbreviated git blob id of ``text`` (``0000000`` for no file)."""
    if text is None:
        return "0" * 7
    data = text.encode()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()[:7]


def _hunks(old: str, new: str) -> str:
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), n=3)
    body = [line if line.endswith("\n") else line + "\n" + NO_NEWLINE for line in list(lines)[2:]]
    return "".join(body)


def file_diff(name: str, old: str | None, new: str | None) -> str:
    """``git diff`` of one file (``None``: absent on that side)."""
    head = [f"diff --git a/{name} b/{name}\n"]
    if old is None:
        head += ["new file mode 100644\n", f"index {_blob(None)}..{_blob(new)}\n"]
    elif new is None:
        head += ["deleted file mode 100644\n", f"index {_blob(old)}..{_blob(None)}\n"]
    else:
        head.append(f"index {_blob(old)}..{_blob(new)} 100644\n")
    body = _hunks(old or "", new or "")
    if body:
        head += [f"--- {'/dev/null' if old is None else 'a/' + name}\n",
                 f"+++ {'/dev/null' if new is None else 'b/' + name}\n"]
    return "".join(head) + body


def tree_diff(before: dict[str, str], after: dict[str, str]) -> str:
    """``git diff`` from ``before`` to ``after`` (relative path -> text)."""
    names = sorted(set(before) | set(after))
    return "".join(file_diff(n, before.get(n), after.get(n)) for n in names if before.get(n) != after.get(n))


def _sides(hunk) -> tuple[list[str], list[str]]:
    """The hunk's old and new lines, ``\\ No newline at end of file`` applied."""
    old: list[str] = []
    new: list[str] = []
    last: list[list[str]] = []
    for line in hunk:
        if line.line_type == "\\":
            for side in last:
                side[-1] = side[-1].removesuffix("\n")
            continue
        last = ([old] if not line.is_added else []) + ([new] if not line.is_removed else [])
        for side in last:
            side.append(line.value)
    return old, new


def apply_patch(tree: dict[str, str], patch: str) -> dict[str, str] | None:
    """``tree`` with ``patch`` applied exactly (no fuzz, no offsets), or None when it does not apply."""
    try:
        files = PatchSet(patch)
    except UnidiffParseError:
        return None
    out = dict(tree)
    for patched in files:
        if patched.is_removed_file:
            if out.pop(patched.path, None) is None:
                return None
            continue
        if patched.is_added_file == (patched.path in out):
            return None
        lines = out.get(patched.path, "").splitlines(keepends=True)
        shift = 0
        for hunk in patched:
            old, new = _sides(hunk)
            start = hunk.source_start + shift - (1 if hunk.source_length else 0)
            if lines[start:start + len(old)] != old:
                return None
            lines[start:start + len(old)] = new
            shift += len(new) - len(old)
        out[patched.path] = "".join(lines)
    return out


class FakeExecutor:
    """One episode over a dict of files (relative path -> text) rooted at ``workdir``."""

    def __init__(self, files: dict[str, str], *, workdir: str = "/testbed", persistent: bool = True):
        self.workdir = workdir
        self.persistent = persistent
        self.base = dict(files)
        self.fs = MemoryFS({posixpath.join(workdir, k): v for k, v in files.items()}, {"/", "/tmp", workdir})
        self.shell = FakeShell(self.fs, workdir)
        self.closed = False
        self.commands: list[str] = []

    def _live(self) -> None:
        if self.closed:
            raise SandboxError("the fake executor is closed")

    def _abs(self, path: str) -> str:
        return posixpath.normpath(posixpath.join(self.workdir, path))

    def run(self, command: str, *, cwd: str | None = None, timeout: float | None = None) -> ExecResult:
        self._live()
        self.commands.append(command)
        shell = self.shell if cwd is None and self.persistent else FakeShell(self.fs, self.shell.cwd)
        if cwd is not None:
            if not self.fs.is_dir(self._abs(cwd)):
                return ExecResult(output=f"bash: cd: {cwd}: No such file or directory\n", exit_code=1)
            shell.cwd = self._abs(cwd)
        output, code = shell.run(command)
        return ExecResult(output=output, exit_code=code)

    def read_file(self, path: str) -> str:
        self._live()
        path = self._abs(path)
        if self.fs.is_file(path):
            return self.fs.files[path]
        if self.fs.is_dir(path):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)

    def write_file(self, path: str, content: str) -> None:
        self._live()
        path = self._abs(path)
        if self.fs.is_dir(path):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
        parent = posixpath.dirname(path)
        while parent != "/":
            if self.fs.is_file(parent):
                raise NotADirectoryError(errno.ENOTDIR, "Not a directory", parent)
            parent = posixpath.dirname(parent)
        self.fs.files[path] = content

    def tree(self) -> dict[str, str]:
        """The workdir's files now (relative path -> text)."""
        prefix = self.workdir.rstrip("/") + "/"
        return {p[len(prefix):]: text for p, text in self.fs.files.items() if p.startswith(prefix)}

    def diff(self) -> str:
        self._live()
        return tree_diff(self.base, self.tree())

    def close(self) -> None:
        self.closed = True

    def __enter__(self) -> FakeExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def pytest_log(task: Task, fixed: bool, intact: bool) -> tuple[str, int]:
    """A pytest ``-rA`` run's output and exit code: FAIL_TO_PASS pass when ``fixed``, PASS_TO_PASS when ``intact``."""
    lines = [(fixed, name) for name in task.FAIL_TO_PASS] + [(intact, name) for name in task.PASS_TO_PASS]
    passed = [f"PASSED {name}\n" for ok, name in lines if ok]
    failed = [f"FAILED {name} - AssertionError: fake: not the gold content\n" for ok, name in lines if not ok]
    text = ("============================= test session starts ==============================\n"
            f"collected {len(lines)} items\n\n"
            "=========================== short test summary info ============================\n"
            + "".join(passed + failed)
            + f"========================= {len(failed)} failed, {len(passed)} passed in 0.01s =========================\n")
    return text, 1 if failed else 0


class FakeBackend:
    """Episodes and evaluations of tasks whose base trees are given: ``files[instance_id]``."""

    name = "fake"

    def __init__(self, files: dict[str, dict[str, str]], *, workdir: str = "/testbed"):
        self.files = files
        self.workdir = workdir
        self.opened: list[FakeExecutor] = []

    def _tree(self, task: Task) -> dict[str, str]:
        if task.instance_id not in self.files:
            raise RepoError(f"the fake backend holds no files of {task.instance_id}", where=task.instance_id,
                            hint="pass them to FakeBackend(files={instance_id: {path: text}})")
        return self.files[task.instance_id]

    def prepare(self, task: Task) -> None:
        self._tree(task)

    def open(self, task: Task, *, timeout: float | None = None, label: str = "") -> FakeExecutor:
        executor = FakeExecutor(self._tree(task), workdir=self.workdir)
        self.opened.append(executor)
        return executor

    def evaluate(self, task: Task, prediction: Prediction, log_dir: Path, *,
                 timeout: float = 1800.0) -> InstanceReport:
        log_dir.mkdir(parents=True, exist_ok=True)
        hr.clear_report(log_dir)
        patch = prediction.model_patch
        write_atomic(log_dir / hr.PATCH_FILE, patch or "")
        base = self._tree(task)
        after = apply_patch(base, patch) if patch and patch.strip() else None
        if after is None:
            report = InstanceReport.build(task.instance_id, patch)
            write_atomic(log_dir / hr.LOG_FILE, "fake: patch not applied: the instance is not resolved\n")
        else:
            gold = apply_patch(base, task.patch) or {}
            watched = patch_paths(task.patch)
            fixed = all(after.get(p) == gold.get(p) for p in watched)
            intact = all(after.get(p) in (base.get(p), gold.get(p)) for p in watched)
            output, code = pytest_log(task, fixed, intact)
            write_atomic(log_dir / hr.EVAL_SCRIPT_FILE, "# fake backend: no script runs\n")
            write_atomic(log_dir / hr.TEST_OUTPUT_FILE, output)
            run = grade.TestRun(test_output=output, exit_code=code, markers_found=True, test_patch_applied=True)
            graded = grade.grade(task, run)
            report = InstanceReport.build(task.instance_id, patch, patch_applied=True, apply_method="fake",
                                          graded=graded)
            write_atomic(log_dir / hr.LOG_FILE, f"fake: graded {graded.resolution}\n")
        hr.write_report(log_dir / hr.REPORT_FILE, report)
        return report
