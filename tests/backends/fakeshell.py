"""An in-memory file system and the little shell the fake executor understands.

Only what the tools and the seam tests need: the editor's and search's probes (``if test -d ...``,
``find ROOT -mindepth 1 -maxdepth 2 ... | sort``, ``grep -nF`` / ``grep -rIc ... | grep -v ':0$'``)
and ``cat``, ``ls``, ``echo``, ``true``, ``false``, ``pwd``, ``cd``, ``exit``, ``test``, ``sort``,
``rm``, ``mkdir``; commands joined by ``;``, ``&&``, ``||``, newlines and ``|``; ``>``, ``>>`` and
``<`` redirections (``2>/dev/null`` and ``2>&1`` are dropped). Anything else is exit 127
``fake: not supported: NAME``. No here-documents, no expansions, no quoted operators.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable

_PROBE = re.compile(r"if test -d (?P<q>.+?); then echo dir; elif test -e (?P=q); then echo file; "
                    r"else echo missing; fi")
_SEPARATORS = (";", "&&", "||")


class MemoryFS:
    """Text files by absolute path; directories are the files' ancestors plus those made by ``mkdir``."""

    def __init__(self, files: dict[str, str], dirs: set[str]):
        self.files = files
        self.dirs = set(dirs)

    def is_file(self, path: str) -> bool:
        return path in self.files

    def is_dir(self, path: str) -> bool:
        prefix = path.rstrip("/") + "/"
        return path in self.dirs or any(name.startswith(prefix) for name in self.files)

    def exists(self, path: str) -> bool:
        return self.is_file(path) or self.is_dir(path)

    def children(self, path: str) -> list[str]:
        prefix = path.rstrip("/") + "/"
        names = {p[len(prefix):].split("/", 1)[0] for p in [*self.files, *self.dirs] if p.startswith(prefix)}
        return sorted(n for n in names if n)

    def remove(self, path: str) -> None:
        prefix = path.rstrip("/") + "/"
        for name in [p for p in self.files if p == path or p.startswith(prefix)]:
            del self.files[name]
        self.dirs = {d for d in self.dirs if d != path and not d.startswith(prefix)}


class _Exit(Exception):
    def __init__(self, code: int):
        self.code = code


def _split(tokens: list[str], seps: tuple[str, ...]) -> list[tuple[str, list[str]]]:
    """(separator before, words) runs of ``tokens`` cut at ``seps``."""
    parts, op, words = [], ";", []
    for token in [*tokens, seps[0]]:
        if token in seps:
            if words:
                parts.append((op, words))
            op, words = token, []
        else:
            words.append(token)
    return parts


class FakeShell:
    """Runs a command line over a ``MemoryFS``; ``cwd`` is the shell's working directory."""

    def __init__(self, fs: MemoryFS, cwd: str):
        self.fs, self.cwd = fs, cwd
        self.commands: dict[str, Callable[[list[str], str | None], tuple[str, int]]] = {
            "echo": self._echo, "cat": self._cat, "ls": self._ls, "pwd": lambda a, i: (self.cwd + "\n", 0),
            "cd": self._cd, "true": lambda a, i: ("", 0), "false": lambda a, i: ("", 1), "exit": self._exit,
            "test": self._test, "grep": self._grep, "find": self._find, "sort": self._sort, "rm": self._rm,
            "mkdir": self._mkdir,
        }

    def abs(self, path: str) -> str:
        return posixpath.normpath(posixpath.join(self.cwd, path))

    def run(self, command: str) -> tuple[str, int]:
        """(output, exit code) of ``command``."""
        probe = _PROBE.fullmatch(command.strip())
        if probe:
            path = self.abs(shlex.split(probe.group("q"))[0])
            return ("dir" if self.fs.is_dir(path) else "file" if self.fs.is_file(path) else "missing") + "\n", 0
        out, code = [], 0
        try:
            for line in command.replace(" 2>/dev/null", "").replace(" 2>&1", "").splitlines():
                lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
                lexer.whitespace_split = True
                for op, words in _split(list(lexer), _SEPARATORS):
                    if op == ";" or (op == "&&") == (code == 0):
                        text, code = self._pipeline(words)
                        out.append(text)
        except _Exit as stop:
            return "".join(out), stop.code
        except ValueError as exc:  # shlex: unbalanced quotes
            return f"fake: cannot parse: {exc}\n", 2
        return "".join(out), code

    def _pipeline(self, words: list[str]) -> tuple[str, int]:
        stdin, code = None, 0
        for _, command in _split(words, ("|",)):
            stdin, code = self._simple(command, stdin)
        return stdin or "", code

    def _simple(self, words: list[str], stdin: str | None) -> tuple[str, int]:
        args, target, append = [], None, False
        it = iter(words)
        for word in it:
            if word in (">", ">>"):
                target, append = self.abs(next(it, "")), word == ">>"
            elif word == "<":
                source = self.abs(next(it, ""))
                if not self.fs.is_file(source):
                    return f"bash: {source}: No such file or directory\n", 1
                stdin = self.fs.files[source]
            else:
                args.append(word)
        handler = self.commands.get(args[0]) if args else None
        if handler is None:
            return f"fake: not supported: {args[0] if args else '(empty)'}\n", 127
        out, code = handler(args[1:], stdin)
        if target is None:
            return out, code
        self.fs.files[target] = (self.fs.files.get(target, "") if append else "") + out
        return "", code

    # -- commands: (args, stdin) -> (output, exit code) -------------------------------------
    def _echo(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        newline = not args or args[0] != "-n"
        return " ".join(args if newline else args[1:]) + ("\n" if newline else ""), 0

    def _cat(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        if not args:
            return stdin or "", 0
        out, code = [], 0
        for name in args:
            path = self.abs(name)
            if self.fs.is_file(path):
                out.append(self.fs.files[path])
            else:
                out.append(f"cat: {name}: {'Is a directory' if self.fs.is_dir(path) else 'No such file or directory'}\n")
                code = 1
        return "".join(out), code

    def _ls(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        hidden = any(a.startswith("-") and "a" in a for a in args)
        names = [a for a in args if not a.startswith("-")] or ["."]
        out, code = [], 0
        for name in names:
            path = self.abs(name)
            if self.fs.is_file(path):
                out.append(name + "\n")
            elif self.fs.is_dir(path):
                listing = [c for c in self.fs.children(path) if hidden or not c.startswith(".")]
                head = f"{name}:\n" if len(names) > 1 else ""
                out.append(head + "".join(c + "\n" for c in listing))
            else:
                out.append(f"ls: cannot access '{name}': No such file or directory\n")
                code = 2
        return "".join(out), code

    def _cd(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        path = self.abs(args[0]) if args else "/"
        if not self.fs.is_dir(path):
            return f"bash: cd: {args[0]}: No such file or directory\n", 1
        self.cwd = path
        return "", 0

    def _exit(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        raise _Exit(int(args[0]) if args else 0)

    def _test(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        checks = {"-d": self.fs.is_dir, "-f": self.fs.is_file, "-e": self.fs.exists}
        if len(args) != 2 or args[0] not in checks:
            return f"fake: not supported: test {' '.join(args)}\n", 127
        return "", 0 if checks[args[0]](self.abs(args[1])) else 1

    def _grep(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        flags, rest, excluded = set(), [], set()
        for n, arg in enumerate(args):
            if arg == "--":
                rest += args[n + 1:]
                break
            if arg.startswith("--exclude-dir="):
                excluded.add(arg.split("=", 1)[1])
            elif arg == "--fixed-strings":
                flags.add("F")
            elif arg.startswith("-") and len(arg) > 1:
                flags.update(arg[1:])
            else:
                rest.append(arg)
        pattern, names = rest[0], rest[1:]
        match = (lambda line: pattern in line) if "F" in flags else (lambda line: re.search(pattern, line))
        if not names:
            sources = [(None, stdin or "")]
        else:
            roots = [(n, self.abs(n)) for n in names]
            sources = [(shown, self.fs.files[path]) for shown, path in self._walk(roots, "r" in flags, excluded)]
        label, out, found = len(sources) > 1 or "r" in flags, [], False
        for shown, text in sources:
            hits = [(i, line) for i, line in enumerate(text.splitlines(), 1) if bool(match(line)) != ("v" in flags)]
            found = found or bool(hits)
            prefix = f"{shown}:" if label and shown is not None else ""
            if "c" in flags:
                out.append(f"{prefix}{len(hits)}\n")
                continue
            out += [f"{prefix}{f'{i}:' if 'n' in flags else ''}{line}\n" for i, line in hits]
        return "".join(out), 0 if found else 1

    def _walk(self, roots: list[tuple[str, str]], recursive: bool, excluded: set[str]) -> list[tuple[str, str]]:
        """(name as shown, absolute path) of the files under ``roots``."""
        found = []
        for shown, path in roots:
            if self.fs.is_file(path):
                found.append((shown, path))
            elif recursive and self.fs.is_dir(path):
                children = [c for c in self.fs.children(path) if c not in excluded]
                found += self._walk([(posixpath.join(shown, c), posixpath.join(path, c)) for c in children],
                                    True, excluded)
        return found

    def _find(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        """Only the editor's listing: entries to depth 2, hidden ones pruned, directories with a slash."""
        if not args or "-prune" not in args or "-maxdepth" not in args:
            return "fake: not supported: find " + " ".join(args) + "\n", 127
        root, depth = self.abs(args[0]), int(args[args.index("-maxdepth") + 1])
        out: list[str] = []

        def visit(path: str, level: int) -> None:
            for child in self.fs.children(path):
                full = posixpath.join(path, child)
                if child.startswith("."):
                    continue
                is_dir = self.fs.is_dir(full)
                out.append(full + ("/" if is_dir else "") + "\n")
                if is_dir and level < depth:
                    visit(full, level + 1)
        visit(root, 1)
        return "".join(out), 0

    def _sort(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        return "".join(line + "\n" for line in sorted((stdin or "").splitlines())), 0

    def _rm(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        flags = "".join(a[1:] for a in args if a.startswith("-") and a != "--")
        out, code = [], 0
        for name in [a for a in args if not a.startswith("-")]:
            path = self.abs(name)
            if self.fs.is_dir(path) and "r" not in flags:
                out.append(f"rm: cannot remove '{name}': Is a directory\n")
                code = 1
            elif not self.fs.exists(path) and "f" not in flags:
                out.append(f"rm: cannot remove '{name}': No such file or directory\n")
                code = 1
            else:
                self.fs.remove(path)
        return "".join(out), code

    def _mkdir(self, args: list[str], stdin: str | None) -> tuple[str, int]:
        for name in [a for a in args if not a.startswith("-")]:
            self.fs.dirs.add(self.abs(name))
        return "", 0
