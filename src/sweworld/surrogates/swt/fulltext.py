"""The files of SWT's context by repository path, with the test files it shows cut made whole.

SWT's context keeps the beginning and the end of each file (``ContextLimits.file_chars``, 16,000
characters by default), and real test files are longer: the tests defined in the middle are then
unknown to ``selection`` and ``unlisted``. ``context_texts(context, read, also)``: each file's text
by its path relative to the repository; where ``read`` (the task's base files) is given, a cut test
file, and each file of ``also`` the context does not show (the test files a script names), is its
base text with the workspace's diff applied (``swr.patched.apply_patch_text``); one that ``read``
does not hold, or that the diff's section does not apply to, stays as the context shows it (or
absent). ``evaluated_below(task, targets)``: the files of the task's test patch that exist at the
base and that a pytest run of ``targets`` collects (a directory above them, or no target): the files
whose tests ``unlisted`` reads, which a context shows only when the command names them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from sweworld.harness.directives import base_test_files
from sweworld.surrogates.swt.affected import file_sections
from sweworld.surrogates.swt.testcmd import relative
from sweworld.surrogates.swt.testsource import is_test_file
from sweworld.world.context import SWTContext

if TYPE_CHECKING:
    from sweworld.surrogates.swr.patched import FileSource


def context_texts(context: SWTContext, read: FileSource | None = None, also: Iterable[str] = ()) -> dict[str, str]:
    """See the module docstring."""
    texts, cut = {}, []
    for f in context.files:
        path = relative(f.path, context.workdir, context.workdir)
        texts[path] = f.content
        if f.truncated and is_test_file(path):
            cut.append(path)
    cut += [path for path in dict.fromkeys(also) if path not in texts]
    if not cut or read is None:
        return texts
    from sweworld.surrogates.swr.patched import apply_patch_text  # the swr package imports this one's

    sections = {path: text for path, text in file_sections(context.diff) if path in cut}
    patched = apply_patch_text("".join(sections.values()), read) if sections else None
    for path in cut:
        whole = (patched.after.get(path) if patched.applied else None) if path in sections else read(path)
        if whole:
            texts[path] = whole
    return texts


def evaluated_below(task: dict[str, Any], targets: Sequence[str]) -> list[str]:
    """See the module docstring."""
    files = [p for p in base_test_files(task.get("test_patch") or "")[0] if is_test_file(p)]
    dirs = [t.rstrip("/") for t in targets if "::" not in t and not t.endswith(".py")]
    return [p for p in files if not targets or any(not d or d == "." or p.startswith(d + "/") for d in dirs)]
