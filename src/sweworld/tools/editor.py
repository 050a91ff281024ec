"""str_replace_editor: view, create, str_replace, insert and undo_edit, as SWE agents expect them.

Paths must be absolute and inside ``executor.workdir``. All file IO goes through the executor
(``read_file``, ``write_file``, ``run``), so a simulated world answers the same calls.
"""

from __future__ import annotations

import posixpath
import shlex
from typing import ClassVar

from sweworld.core.executor import Executor
from sweworld.tools.base import Tool, ToolError, ToolResult, schema, text
from sweworld.tools.search import path_kind
from sweworld.tools.truncate import MAX_CHARS, MAX_LINES, truncate_observation

SNIPPET_LINES = 4
COMMANDS = ["view", "create", "str_replace", "insert", "undo_edit"]


def numbered(text: str, start: int = 1) -> str:
    """``cat -n`` style: right-aligned line numbers, a tab, the line."""
    lines = text.split("\n")
    return "\n".join(f"{n:6}\t{line}" for n, line in enumerate(lines, start))


def split_lines(text: str) -> list[str]:
    """Lines without their newlines; a final newline does not make an extra empty line."""
    if not text:
        return []
    return (text[:-1] if text.endswith("\n") else text).split("\n")


class EditorTool(Tool):
    name: ClassVar[str] = "str_replace_editor"
    description: ClassVar[str] = (
        "Custom editing tool for viewing, creating and editing files.\n"
        "* Paths must be absolute and inside the repository, e.g. /testbed/pkg/module.py.\n"
        "* `view` on a file shows it with line numbers (`cat -n`), optionally only `view_range`; on a "
        "directory it lists files and directories up to 2 levels deep, hidden ones excluded.\n"
        "* `create` writes `file_text` to a new path; it cannot overwrite an existing file.\n"
        "* `str_replace` replaces `old_str` with `new_str`; `old_str` must match EXACTLY ONE place in "
        "the file, whitespace included, so include enough context to make it unique.\n"
        "* `insert` inserts `new_str` after line `insert_line` (0 inserts at the top).\n"
        "* `undo_edit` reverts the last edit made to the file at `path`.")
    parameters: ClassVar[dict] = schema(
        ("command", "path"),
        command={"type": "string", "enum": COMMANDS, "description": "The command to run."},
        path=text("Absolute path to a file or directory."),
        file_text=text("`create`: the content of the new file."),
        old_str=text("`str_replace`: the exact text to replace."),
        new_str=text("`str_replace`: the replacement (default empty); `insert`: the text to insert."),
        insert_line={"type": "integer", "description": "`insert`: insert after this line (0 = at the top)."},
        view_range={"type": "array", "items": {"type": "integer"},
                    "description": "`view` of a file: [start, end], 1-based, inclusive; end -1 = to the end."},
    )

    def __init__(self, *, max_chars: int = MAX_CHARS, max_lines: int = MAX_LINES):
        self.max_chars = max_chars
        self.max_lines = max_lines
        #: Per path, the contents before each edit (None: the file did not exist).
        self.history: dict[str, list[str | None]] = {}

    def reset(self) -> None:
        self.history.clear()

    # -- helpers ------------------------------------------------------------------------------
    def _check_path(self, executor: Executor, path: str) -> str:
        if not path.startswith("/"):
            suggestion = posixpath.normpath(posixpath.join(executor.workdir, path))
            raise ToolError(f"The path {path!r} is not an absolute path. Use an absolute path such as "
                            f"{suggestion!r}.")
        norm = posixpath.normpath(path)
        root = posixpath.normpath(executor.workdir)
        if norm != root and not norm.startswith(root.rstrip("/") + "/"):
            raise ToolError(f"The path {path!r} is outside the repository; only paths under {root} can be used.")
        return norm

    def _read(self, executor: Executor, path: str) -> str:
        try:
            return executor.read_file(path)
        except OSError as exc:
            raise ToolError(f"Could not read {path}: {exc.strerror or exc}") from exc

    def _write(self, executor: Executor, path: str, old: str | None, new: str) -> None:
        try:
            executor.write_file(path, new)
        except OSError as exc:
            raise ToolError(f"Could not write {path}: {exc.strerror or exc}") from exc
        self.history.setdefault(path, []).append(old)

    def _snippet(self, path: str, text: str, first: int, last: int) -> str:
        """Numbered lines ``first..last`` (0-based, widened by SNIPPET_LINES) of ``text``."""
        lines = split_lines(text)
        start = max(0, first - SNIPPET_LINES)
        end = min(len(lines), last + SNIPPET_LINES + 1)
        body = truncate_observation(numbered("\n".join(lines[start:end]), start + 1), self.max_chars,
                                    self.max_lines)
        return (f"The file {path} has been edited. Here's the result of running `cat -n` on a snippet of "
                f"{path}:\n{body}\nReview the changes and make sure they are as expected. Edit the file "
                f"again if necessary.")

    # -- commands -----------------------------------------------------------------------------
    def execute(self, executor: Executor, command: str, path: str, file_text: str | None = None,
                old_str: str | None = None, new_str: str | None = None, insert_line: int | None = None,
                view_range: list[int] | None = None) -> ToolResult:
        path = self._check_path(executor, path)
        kind = path_kind(executor, path)
        if command == "create":
            if file_text is None:
                raise ToolError("Parameter 'file_text' is required for command 'create'.")
            if kind != "missing":
                raise ToolError(f"File already exists at {path}. Cannot overwrite files using command "
                                f"'create'; use 'str_replace' or 'insert' to edit it.")
            parent = posixpath.dirname(path)
            parent_kind = path_kind(executor, parent)
            while parent_kind == "missing" and parent != "/":
                parent = posixpath.dirname(parent)
                parent_kind = path_kind(executor, parent)
            if parent_kind == "file":
                raise ToolError(f"Could not write {path}: {parent} is a file, not a directory.")
            self._write(executor, path, None, file_text)
            return ToolResult(observation=f"File created successfully at: {path}")
        if kind == "missing":
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        if kind == "dir" and command != "view":
            raise ToolError(f"The path {path} is a directory; command '{command}' needs a file.")
        if command == "view":
            return self._view(executor, path, kind, view_range)
        if command == "str_replace":
            if old_str is None:
                raise ToolError("Parameter 'old_str' is required for command 'str_replace'.")
            return self._replace(executor, path, old_str, new_str or "")
        if command == "insert":
            if insert_line is None or new_str is None:
                raise ToolError("Parameters 'insert_line' and 'new_str' are required for command 'insert'.")
            return self._insert(executor, path, insert_line, new_str)
        return self._undo(executor, path)

    def _view(self, executor: Executor, path: str, kind: str, view_range: list[int] | None) -> ToolResult:
        if kind == "dir":
            if view_range is not None:
                raise ToolError("'view_range' is not allowed when 'path' is a directory.")
            q = shlex.quote(path)
            res = executor.run(f"find {q} -mindepth 1 -maxdepth 2 -name '.*' -prune -o "
                               f"-type d -printf '%p/\\n' -o -print | sort")
            listing = truncate_observation(res.output.rstrip("\n"), self.max_chars, self.max_lines)
            return ToolResult(observation=f"Here's the files and directories up to 2 levels deep in {path}, "
                              f"excluding hidden items:\n{listing}")
        lines = split_lines(self._read(executor, path))
        start, end = 1, len(lines)
        if view_range is not None:
            if len(view_range) != 2:
                raise ToolError(f"'view_range' must be [start, end], got {view_range}.")
            start, end = view_range
            if not 1 <= start <= max(len(lines), 1):
                raise ToolError(f"Invalid 'view_range' {view_range}: start must be within [1, {len(lines)}] "
                                f"(the file has {len(lines)} lines).")
            if end == -1 or end > len(lines):
                end = len(lines)
            elif end < start:
                raise ToolError(f"Invalid 'view_range' {view_range}: end must be >= start, or -1 for the end "
                                f"of the file.")
        body = numbered("\n".join(lines[start - 1:end]), start) if lines else ""
        body = truncate_observation(body, self.max_chars, self.max_lines)
        return ToolResult(observation=f"Here's the result of running `cat -n` on {path}:\n{body}")

    def _replace(self, executor: Executor, path: str, old_str: str, new_str: str) -> ToolResult:
        if not old_str:
            raise ToolError("'old_str' is empty; give the exact text to replace.")
        text = self._read(executor, path)
        count = text.count(old_str)
        if count == 0:
            return ToolResult(observation=f"No replacement was performed: old_str `{old_str}` did not appear "
                              f"verbatim in {path}.")
        if count > 1:
            starts, at = [], text.find(old_str)
            while at != -1:
                starts.append(text.count("\n", 0, at) + 1)
                at = text.find(old_str, at + 1)
            return ToolResult(observation=f"No replacement was performed. Multiple occurrences ({count}) of "
                              f"old_str `{old_str}` in lines {starts}. Please ensure it is unique.")
        if new_str == old_str:
            return ToolResult(observation="No replacement was performed: new_str is identical to old_str.")
        new_text = text.replace(old_str, new_str)
        self._write(executor, path, text, new_text)
        first = text.split(old_str)[0].count("\n")
        return ToolResult(observation=self._snippet(path, new_text, first, first + new_str.count("\n")))

    def _insert(self, executor: Executor, path: str, insert_line: int, new_str: str) -> ToolResult:
        text = self._read(executor, path)
        lines = split_lines(text)
        if not 0 <= insert_line <= len(lines):
            raise ToolError(f"Invalid 'insert_line' {insert_line}: it must be within [0, {len(lines)}] "
                            f"(the file has {len(lines)} lines).")
        added = split_lines(new_str) or [""]
        result = lines[:insert_line] + added + lines[insert_line:]
        new_text = "\n".join(result) + ("\n" if text.endswith("\n") or not text else "")
        self._write(executor, path, text, new_text)
        return ToolResult(observation=self._snippet(path, new_text, insert_line, insert_line + len(added) - 1))

    def _undo(self, executor: Executor, path: str) -> ToolResult:
        stack = self.history.get(path)
        if not stack:
            raise ToolError(f"No edit history found for {path}.")
        previous = stack.pop()
        if previous is None:
            res = executor.run(f"rm -f -- {shlex.quote(path)}")
            if res.exit_code != 0:
                stack.append(previous)
                return ToolResult(observation=f"Could not undo the creation of {path}: {res.output.strip()}")
            return ToolResult(observation=f"Last edit to {path} undone successfully: the file was created by "
                              f"that edit and has been removed.")
        executor.write_file(path, previous)
        body = truncate_observation(numbered(previous.removesuffix("\n")) if previous else "", self.max_chars,
                                    self.max_lines)
        return ToolResult(observation=f"Last edit to {path} undone successfully. Here's the result of running "
                          f"`cat -n` on {path}:\n{body}")
