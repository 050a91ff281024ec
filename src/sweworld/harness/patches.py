"""Patches: which paths they touch, refusing unsafe ones, and SWE-bench's apply chain.

``apply_patch`` runs SWE-bench 5.x's chain (``harness/run_evaluation.py``, ``GIT_APPLY_CMDS``, from
its commit 6cd91d8; docs/swebench.md "How SWE-bench applies a patch"), through any ``Executor``:
``git apply -v``, then ``git apply -v --3way``, ``git apply -v --reject`` and
``patch --batch --forward --fuzz=5 -p1 -i``, the tree put back before each retry; when all fail,
``git apply --check --reverse`` says whether the whole patch is in the tree already (it then counts
as applied, as there). So a hunk the workspace already holds (a set-up edit of SWE-bench's image,
which agents' diffs carry beside their fix) is a no-op: ``--3way`` merges it as the same change on
both sides, and ``--forward`` keeps ``patch`` from reversing it (``--batch`` alone assumes
"reversed" and takes out the fix with it, swebench 3.0-4.1's chain). Which hunks were already
there, and which a failed chain rejected, are recorded (``PatchApplyResult``).

Before anything is written, the patch is checked statically (``unsafe_paths``) and against the tree
(``symlink_escapes``): ``git apply`` refuses paths outside the repository by itself, ``patch`` does
not. Between attempts the tree goes back to its state before the patch: a snapshot index
(``GIT_INDEX_FILE``) taken after the atomic first attempt failed, holding every tracked file as it
is (files the install rewrote, marked assume-unchanged in the layer, included; ``git add -A`` alone
skips such entries) and the ignored files the patch names (``patch`` deletes an existing file the
patch creates, e.g. an install's ``build/lib`` copy), then ``git checkout -q -- .`` and
``git clean -fdq`` against it, so earlier changes (a model patch under a test patch) survive and
ignored files (the environment's build artefacts) are kept; a ``.gitattributes`` the attempt
created is removed first (checkout would convert the restored files by it). The repository's own
index is saved too and put back after every attempt, failed or not (``--3way`` stages what it
applies, and leaves conflicts in it): the patch changes the working tree only, as ``git apply`` does.
A tree that still cannot be put back is a failure of the machinery: ``PatchApplyError``, an
``InfraError``; a check or a command of the chain that cannot run (no shell, no ``git``, a missing
loader) is a broken world, never a refusal: ``WorldBrokenError`` (``harness.worldcheck``).
"""

from __future__ import annotations

import functools
import posixpath
import re
import shlex
import stat

import unidiff
from pydantic import BaseModel, Field

from sweworld.core.errors import PatchApplyError
from sweworld.core.executor import Executor
from sweworld.harness import worldcheck

METHODS = ("git apply", "git apply --3way", "git apply --reject", "patch --fuzz")
ALREADY_APPLIED = "already applied"
"""The method of a patch that applied by no command because it is wholly in the tree already."""
FUZZY = ("patch", "--batch", "--forward", "--fuzz=5", "-p1")
"""The chain's last command, which finds a hunk at another line and with up to 5 context lines off,
and skips (never reverses) a hunk that looks applied already."""
_COMMANDS = ("git apply -v {file}", "git apply -v --3way {file}", "git apply -v --reject {file}",
             " ".join(FUZZY) + " -i {file}")
_REJECTED = re.compile(r"^Applying patch (.+?) with \d+ rejects?\.\.\.$|^Rejected hunk #(\d+)\.$", re.M)
_NAME = r'("(?:[^"\\]|\\.)*"|\S+)'
_GIT_HEADER = re.compile(r"^diff --git (.*)$", re.M)
_NAME_LINE = re.compile(r"^(rename from|rename to|copy from|copy to) (.+)$", re.M)
UNIFIED_PAIR = re.compile(r"^--- (.+)\n\+\+\+ (.+)\n@@", re.M)
"""A plain unified diff's file header: its ``---``/``+++`` pair right before a hunk."""
_CONTEXT_PAIR = re.compile(r"^\*\*\* (.+)\n--- (.+)\n\*{15}", re.M)  # GNU patch applies context diffs
_INDEX_LINE = re.compile(r"^Index: (.+)$", re.M)
_NEW_MODE = re.compile(r"^(?:new file mode|new mode|index \S+) ([0-7]+)\s*$", re.M)
_ATTRIBUTES = shlex.quote(":(glob)**/.gitattributes")
_LEFTOVERS = r"find . -path ./.git -prune -o -type f \( -name '*.rej' -o -name '*.orig' \) -print"


class PatchApplyResult(BaseModel):
    """What happened when a patch was applied; ``log`` goes into the instance log."""

    applied: bool = Field(default=False, description="The patch applied completely.")
    method: str | None = Field(default=None, description=(
        "The method that applied it: 'git apply', 'git apply --3way', 'git apply --reject', 'patch --fuzz', or "
        "'already applied' (no command did: the whole patch is in the tree already)."))
    already_present: list[str] = Field(default_factory=list, description=(
        "Hunks the tree held before the patch ('path @@ -a,b +c,d @@'): no-ops, never reversed."))
    rejected: list[str] = Field(default_factory=list, description=(
        "Hunks `git apply --reject` could not place ('path hunk #N'), when the chain failed."))
    refused: list[str] = Field(default_factory=list, description="Why the patch was refused (never applied).")
    log: str = Field(default="", description="The commands run and their outputs.")
    empty: bool = Field(default=False, description="The patch was None, empty or only whitespace.")


# -- paths ---------------------------------------------------------------------------------------
def _unquote(name: str) -> str:
    """A git name as written: C-quoted ("a/t\\tab") or plain; a trailing tab+timestamp dropped."""
    name = name.rstrip("\n")
    if name.startswith('"') and name.endswith('"') and len(name) >= 2:
        raw = name[1:-1].encode("latin-1", "backslashreplace")
        try:
            return raw.decode("unicode_escape").encode("latin-1").decode("utf-8", "replace")
        except (UnicodeDecodeError, UnicodeEncodeError):
            return name[1:-1]
    return name.split("\t", 1)[0].rstrip()


def _git_header_names(rest: str) -> list[str]:
    """The two names of a ``diff --git`` header (quoted, or ``a/X b/X`` split at the middle)."""
    quoted = re.fullmatch(rf"{_NAME} {_NAME}", rest)
    if quoted and (rest.startswith('"') or rest.endswith('"')):
        return [_unquote(quoted.group(1)), _unquote(quoted.group(2))]
    half = (len(rest) - 1) // 2
    if len(rest) % 2 == 1 and rest[half] == " " and rest[:half][2:] == rest[half + 1:][2:]:
        return [rest[:half], rest[half + 1:]]
    match = re.fullmatch(r"(a/.*) (b/.*)", rest) or re.fullmatch(r"(\S+) (\S+)", rest)
    return list(match.groups()) if match else [rest]


@functools.lru_cache(maxsize=8)
def _raw_names(patch: str) -> tuple[tuple[str, bool], ...]:
    """Every name in the patch as written: (name, carries a diff prefix) in order, no /dev/null."""
    names: list[tuple[str, bool]] = []
    try:
        for pf in unidiff.PatchSet(patch):
            names += [(_unquote(pf.source_file), True), (_unquote(pf.target_file), True)]
    except (unidiff.UnidiffParseError, ValueError, IndexError, UnicodeError):
        pass
    for match in _GIT_HEADER.finditer(patch):
        names += [(n, True) for n in _git_header_names(match.group(1))]
    names += [(_unquote(m.group(2)), False) for m in _NAME_LINE.finditer(patch)]
    for match in [*UNIFIED_PAIR.finditer(patch), *_CONTEXT_PAIR.finditer(patch)]:
        names += [(_unquote(match.group(1)), True), (_unquote(match.group(2)), True)]
    names += [(_unquote(m.group(1)), False) for m in _INDEX_LINE.finditer(patch)]
    seen: set[tuple[str, bool]] = set()
    out = []
    for name, prefixed in names:
        if name and name != "/dev/null" and (name, prefixed) not in seen:
            seen.add((name, prefixed))
            out.append((name, prefixed))
    return tuple(out)


def _strip(name: str) -> str:
    return name[2:] if name.startswith(("a/", "b/")) else name


def pair_path(old: str, new: str) -> str:
    """The repository path a ``---``/``+++`` pair names (``UNIFIED_PAIR``'s two groups): the new
    side's, the old side's for a deletion; unquoted, timestamp and ``a/``/``b/`` prefix dropped."""
    old, new = _unquote(old), _unquote(new)
    return _strip(old if new == "/dev/null" else new)


def with_newline(text: str) -> str:
    """``text`` ending in a newline, as ``git apply`` and ``patch`` need a patch's last line."""
    return text if text.endswith("\n") else text + "\n"


def patch_paths(patch: str) -> list[str]:
    """Every repository path a unified or git diff touches, in order, deduplicated.

    Sources and targets (renames, copies, creations, deletions, binary and mode-only changes) with
    ``a/``/``b/`` stripped; ``/dev/null`` ignored. ``unidiff`` parses what it can; the ``diff --git``,
    ``rename``/``copy``, ``---``/``+++`` (and context-diff ``***``/``---``) and ``Index:`` header
    lines are read too, so a malformed patch still gives its paths.
    """
    return list(dict.fromkeys(_strip(name) if prefixed else name for name, prefixed in _raw_names(patch)))


def _checked_paths(patch: str) -> list[str]:
    """The paths to check: as named, and as ``-p1`` would cut a name that has no a/ b/ prefix."""
    paths = patch_paths(patch)
    for name, prefixed in _raw_names(patch):
        if prefixed and not name.startswith(("a/", "b/")) and "/" in name:
            paths.append(name[1:] if name.startswith("/") else name.split("/", 1)[1])
    return list(dict.fromkeys(paths))


def _symlinks(patch: str) -> list[tuple[str, str]]:
    """(path, target) of every symlink the patch creates or retargets (git mode 120000)."""
    links = []
    blocks = re.split(r"^(?=diff --git )", patch, flags=re.M)
    for block in blocks:
        modes = [int(m.group(1), 8) for m in _NEW_MODE.finditer(block)]
        if not block.startswith("diff --git ") or not any(stat.S_ISLNK(mode) for mode in modes):
            continue
        plus = re.search(r"^\+\+\+ (.+)$", block, re.M)
        header = _git_header_names(block.splitlines()[0][len("diff --git "):])
        path = _strip(_unquote(plus.group(1)) if plus else header[-1])
        body = block.split("\n@@", 1)[1] if "\n@@" in block else ""
        added = [line[1:] for line in body.splitlines()[1:] if line.startswith("+")]
        links.append((path, "\n".join(added)))
    return links


def _path_problems(path: str) -> list[str]:
    parts = path.split("/")
    problems = []
    if path.startswith("/"):
        problems.append(f"absolute path: {path!r}")
    if ".." in parts:
        problems.append(f"path climbs out of the repository ('..'): {path!r}")
    if any(part.lower() == ".git" for part in parts):
        problems.append(f"path inside .git (hooks and config are an escape): {path!r}")
    if "\0" in path:
        problems.append(f"NUL byte in path: {path!r}")
    return problems


def unsafe_paths(patch: str) -> list[str]:
    """Human-readable problems that make a patch unsafe to apply; empty when none.

    Absolute paths, ``..`` components, paths inside ``.git/`` (any case), NUL bytes, symlinks the
    patch creates whose target is absolute, climbs out of the repository or enters ``.git``, and
    paths written through a symlink the same patch creates.
    """
    problems: list[str] = []
    if "\0" in patch:
        problems.append("the patch contains NUL bytes")
    paths = _checked_paths(patch)
    for path in paths:
        problems += _path_problems(path)
    links = _symlinks(patch)
    for path, target in links:
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
        if target.startswith("/"):
            problems.append(f"symlink {path!r} points to an absolute path {target!r}")
        elif resolved == ".." or resolved.startswith("../"):
            problems.append(f"symlink {path!r} -> {target!r} points outside the repository")
        elif any(part.lower() == ".git" for part in resolved.split("/")):
            problems.append(f"symlink {path!r} -> {target!r} points into .git")
    for link, _ in links:
        for path in paths:
            if path.startswith(link.rstrip("/") + "/"):
                problems.append(f"{path!r} is written through the symlink {link!r} the patch creates")
    return list(dict.fromkeys(problems))


RESOLVE = r"""sweworld_resolve() {
  if d=$(realpath -m -- "$1" 2>/dev/null); then printf '%s\n' "$d"; return 0; fi
  p=$1 rest=
  while [ "$p" != / ] && [ ! -e "$p" ] && [ ! -L "$p" ]; do rest="/${p##*/}$rest"; p=$(dirname -- "$p"); done
  case "$rest/" in */../*|*/./*) return 1;; esac
  if [ -d "$p" ] && [ ! -L "$p" ]; then d=$(cd -P -- "$p" && pwd -P) || return 1
  else d=$(readlink -f -- "$p") && [ -n "$d" ] || return 1; fi
  [ "$d" = / ] && d=
  printf '%s%s\n' "$d" "$rest"
}"""
"""``realpath -m`` where the episode has it, else the deepest existing ancestor resolved and the rest
appended (fails on a ``.`` or ``..`` in what does not exist, or on a link that cannot be resolved)."""


def symlink_escapes(executor: Executor, paths: list[str], workdir: str = "/testbed") -> list[str]:
    """Paths that resolve outside ``workdir`` through symlinks already in the tree (one command).

    Each path's deepest existing ancestor is resolved (``realpath -m``; where the episode's
    ``realpath`` has no ``-m``, as busybox's in a small image, that ancestor is resolved by ``cd -P``
    or ``readlink -f`` and the rest appended, a ``..`` in it unresolved); a path that is itself a
    symlink pointing outside counts too (conservative). A check that cannot run (nothing of the
    patch can make it fail) is a broken world: ``WorldBrokenError`` (``harness.worldcheck``).
    """
    if not paths:
        return []
    quoted = " ".join(shlex.quote(p) for p in paths)
    script = (f"{RESOLVE}\nroot=$(sweworld_resolve {shlex.quote(workdir)}) || exit 3\n"
              f"for p in {quoted}; do\n"
              '  r=$(sweworld_resolve "$root/$p") || { printf "?\\t%s\\n" "$p"; continue; }\n'
              '  case "$r" in "$root"|"$root"/*) ;; *) printf "%s\\t%s\\n" "$p" "$r";; esac\n'
              "done\necho sweworld-symlink-check-done")
    result = executor.run(script, cwd=workdir)
    lines = result.output.splitlines()
    if result.exit_code != 0 or "sweworld-symlink-check-done" not in lines:
        cause = worldcheck.machinery_failure(result, "the check of the patch's paths for symlinks", must_finish=True)
        raise worldcheck.broken(cause or "", workdir)
    problems = []
    for line in lines:
        path, sep, resolved = line.partition("\t")
        if sep and path == "?":
            problems.append(f"could not resolve {resolved!r}")
        elif sep:
            problems.append(f"{path!r} resolves to {resolved!r}, outside {workdir} (through a symlink)")
    return problems


# -- applying ------------------------------------------------------------------------------------
class _Runner:
    """Runs commands in ``workdir`` and keeps the log."""

    def __init__(self, executor: Executor, workdir: str):
        self.executor, self.workdir, self.lines = executor, workdir, []

    def __call__(self, command: str, *, quiet: bool = False) -> tuple[int, str]:
        result = self.executor.run(command, cwd=self.workdir)
        cause = worldcheck.machinery_failure(result, f"the apply chain's `{command.split(' ', 1)[0]}`")
        if cause:  # git or patch missing, or its loader: no attempt of the chain can tell anything
            raise worldcheck.broken(cause, self.workdir)
        code = 124 if result.timed_out else result.exit_code
        if not quiet or code != 0:
            self.lines.append(f"$ {command}\n{result.output.rstrip()}\n[exit {code}]")
        return code, result.output

    def leftovers(self) -> set[str]:
        code, out = self(_LEFTOVERS, quiet=True)
        return {line[2:] for line in out.splitlines() if line.startswith("./")} if code == 0 else set()

    def remove(self, files: set[str]) -> None:
        if files:
            self("rm -f -- " + " ".join(shlex.quote(f) for f in sorted(files)))


def apply_patch(executor: Executor, patch: str | None, *, workdir: str = "/testbed",
                label: str = "patch") -> PatchApplyResult:
    """Apply ``patch`` in ``workdir`` through SWE-bench's chain, or refuse it if it is unsafe.

    A failed attempt (non-zero exit, including a partial ``--reject``) leaves the tree as it was,
    with no ``.rej``/``.orig`` files; ``.orig`` backups of a fuzzy success are removed too. Raises
    ``PatchApplyError`` only when the tree cannot be put back after a failed attempt.
    """
    if patch is None or not patch.strip():
        return PatchApplyResult(empty=True, log=f"{label}: empty patch, nothing to apply")
    refused = unsafe_paths(patch)
    if not refused:
        refused = symlink_escapes(executor, _checked_paths(patch), workdir)
    if refused:
        return PatchApplyResult(refused=refused, log=f"{label}: refused, not applied:\n" + "\n".join(
            f"  - {why}" for why in refused))
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", label) or "patch"
    file, index = shlex.quote(f"/tmp/sweworld-{safe}.diff"), shlex.quote(f"/tmp/sweworld-{safe}.index")
    saved = shlex.quote(f"/tmp/sweworld-{safe}.saved-index")
    executor.write_file(f"/tmp/sweworld-{safe}.diff", with_newline(patch))
    run = _Runner(executor, workdir)
    if run(_COMMANDS[0].format(file=file))[0] == 0:
        return _applied(run, label, METHODS[0], [])
    # git apply is atomic: the tree is still as it was. What of the patch does it hold already?
    present = _present_hunks(executor, run, patch, f"/tmp/sweworld-{safe}-hunks")
    before, own = run.leftovers(), set(patch_paths(patch))
    if run(_snapshot(index, sorted(own)))[0] != 0 or run(_save_index(saved))[0] != 0:
        run.lines.append(f"{label}: cannot snapshot the tree; not trying the non-atomic methods")
        return PatchApplyResult(already_present=present, log="\n".join(run.lines))
    rejected: list[str] = []
    for method, template in zip(METHODS[1:], _COMMANDS[1:], strict=True):
        code, out = run(template.format(file=file))
        run(_restore_index(saved), quiet=True)  # the patch changes the working tree only
        if code == 0:
            run.remove(run.leftovers() - before - own)  # patch keeps .orig backups of fuzzy hunks
            return _applied(run, label, method, present)
        if method == "git apply --reject":
            rejected = _rejected_hunks(out)
        _reset(run, index, before, label)
    if run(f"git apply --check --reverse {file}")[0] == 0:
        return _applied(run, label, ALREADY_APPLIED, present)
    run.lines.append(f"{label}: could not be applied" + (f"; rejected: {', '.join(rejected)}" if rejected else ""))
    return PatchApplyResult(already_present=present, rejected=rejected, log="\n".join(run.lines))


def _applied(run: _Runner, label: str, method: str, present: list[str]) -> PatchApplyResult:
    note = f"; already in the tree, so left as they were: {', '.join(present)}" if present else ""
    run.lines.append(f"{label}: applied with {method}{note}")
    return PatchApplyResult(applied=True, method=method, already_present=present, log="\n".join(run.lines))


MAX_HUNKS_CHECKED = 200
"""Hunks of a patch ``_present_hunks`` looks at (one ``git apply --check --reverse`` each)."""


def _single_hunks(patch: str) -> list[tuple[str, str]]:
    """(label, a patch of that one hunk) for every text hunk of ``patch``; [] when it does not parse."""
    try:
        files = unidiff.PatchSet(patch)
    except (unidiff.UnidiffParseError, ValueError, IndexError, UnicodeError):
        return []
    out = []
    for pf in files:
        if pf.is_binary_file:
            continue
        header = "".join(pf.patch_info) if pf.patch_info else ""
        head = f"{header}--- {pf.source_file}\n+++ {pf.target_file}\n"
        for hunk in pf:
            spec = f"@@ -{hunk.source_start},{hunk.source_length} +{hunk.target_start},{hunk.target_length} @@"
            out.append((f"{pf.path} {spec}", with_newline(head + str(hunk))))
    return out[:MAX_HUNKS_CHECKED]


def _present_hunks(executor: Executor, run: _Runner, patch: str, scratch: str) -> list[str]:
    """The hunks of ``patch`` the tree holds already: each one that applies in reverse."""
    hunks = _single_hunks(patch)
    if not hunks:
        return []
    for n, (_, text) in enumerate(hunks):
        executor.write_file(f"{scratch}/{n}.diff", text)
    quoted = shlex.quote(scratch)
    code, out = run(f"for n in $(seq 0 {len(hunks) - 1}); do git apply --check --reverse {quoted}/$n.diff "
                    f">/dev/null 2>&1 && echo \"present $n\"; done; rm -rf {quoted}", quiet=True)
    found = {int(line.split()[1]) for line in out.splitlines() if line.startswith("present ")}
    return [label for n, (label, _) in enumerate(hunks) if n in found] if code == 0 else []


def _rejected_hunks(output: str) -> list[str]:
    """'path hunk #N' for each hunk a ``git apply -v --reject`` says it rejected."""
    rejected, current = [], "?"
    for match in _REJECTED.finditer(output):
        if match.group(1):
            current = match.group(1)
        else:
            rejected.append(f"{current} hunk #{match.group(2)}")
    return rejected


def _save_index(saved: str) -> str:
    """The command that refreshes the repository's index and copies it aside (nothing to copy:
    nothing to restore). ``--3way`` refuses a file whose stat data differs from its index entry
    ("does not match index") even when its content is the same: the owner and inode an ordinary
    user's episode sees are not those the index recorded when the environment was built. A refresh
    records them for the files whose content is unchanged, as the image's own index holds them."""
    return (f"{{ git update-index -q --refresh >/dev/null 2>&1 || true; }}; rm -f {saved}; "
            f"index=$(git rev-parse --git-path index) && {{ [ ! -f \"$index\" ] || cp \"$index\" {saved}; }}")


def _restore_index(saved: str) -> str:
    return f"[ ! -f {saved} ] || cp {saved} \"$(git rev-parse --git-path index)\""


def _snapshot(index: str, paths: list[str]) -> str:
    """The command that records the tree as it is in the index file ``index``: a copy of the
    repository's index, the assume-unchanged bit cleared (``git add`` skips such entries, and files
    the install rewrote carry it, see envs/build.py), every change added, and the ignored files
    among ``paths`` (the patch's: ``patch`` deletes an existing file the patch creates, e.g. an
    install's ``build/lib`` copy) added by force, so that a reset puts them back too."""
    env = f"GIT_INDEX_FILE={index}"
    quoted = " ".join(shlex.quote(p) for p in paths)
    return (f"rm -f {index} && {{ cp \"$(git rev-parse --git-path index)\" {index} 2>/dev/null || true; }}"
            f" && {{ {env} git ls-files -v -z | sed -z -n 's/^[a-z] //p'"
            f" | {env} git update-index --no-assume-unchanged -z --stdin; }} && {env} git add -A"
            f" && {{ for p in {quoted}; do {{ [ -f \"$p\" ] || [ -L \"$p\" ]; }} && printf '%s\\0' \"$p\"; done"
            f" | xargs -0 -r env {env} git add -f -- || true; }}")  # best effort (a path in a submodule)


def _reset(run: _Runner, index: str, before: set[str], label: str) -> None:
    """Put the tree back to the snapshot index; leave no new .rej/.orig behind; verify."""
    env = f"GIT_INDEX_FILE={index}"
    # first the .gitattributes the attempt created: checkout would convert the files it restores by them
    code, _ = run(f"{env} git clean -fdqx -- {_ATTRIBUTES} && {env} git checkout -q -- . && {env} git clean -fdq")
    run.remove(run.leftovers() - before)
    check, out = run(f"{env} git diff --quiet && {env} git ls-files --others --exclude-standard", quiet=True)
    if code != 0 or check != 0 or out.strip():
        raise PatchApplyError(f"could not restore the tree after a failed attempt to apply the {label}",
                              where=run.workdir, hint="discard this episode; its workspace is inconsistent:\n"
                              + "\n".join(run.lines[-3:]))
