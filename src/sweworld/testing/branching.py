"""Conformance of snapshot, fork and restore (``protocols.Branchable``): ``check_branching``.

One episode is changed (a file edited, one created, a directory made, a variable exported, the cwd
moved), snapshotted, changed again (the edit redone, a file created, the edited file deleted, the
variable and cwd changed). Then:

- a fork of the snapshot shows the snapshot's state, files and shell, and none of the later changes;
- the fork and the parent never see each other's writes;
- ``restore`` puts the parent back to the snapshot: what was written since is gone, what was deleted
  since is back, the cwd and the variable are the snapshot's;
- restored to a snapshot taken before all this, the parent passes ``check_executor`` as a fresh
  episode does, and so does a fork of that snapshot (the suite closes both).

``why_not_branchable`` answers first: an executor that cannot branch fails with its reason.
Importable without pytest.
"""

from __future__ import annotations

import posixpath

from sweworld.core.executor import Executor
from sweworld.core.protocols import why_not_branchable
from sweworld.testing.conformance import _expect, _run, check_executor

DIR = "sweworld-branch"
VAR = "SWEWORLD_BRANCH_VAR"


def _state(executor: Executor, workdir_file: str) -> dict[str, str]:
    """What the checks compare: the edited file, the created ones, the cwd and the variable."""
    out = _run(executor, f"pwd; echo \"var=${VAR}\"; ( cd {executor.workdir} && "
                         f"ls {DIR} 2>/dev/null | tr '\\n' ' '; echo; tail -c 200 {workdir_file} 2>&1 | tail -1 )").output
    lines = out.splitlines()
    _expect(len(lines) >= 4, f"unexpected state output {out!r}")
    return {"cwd": lines[0], "var": lines[1], "files": lines[2].strip(), "edited": lines[3]}


def check_branching(executor: Executor, *, workdir_file: str) -> None:
    """The checks of the module docstring on ``executor`` (closed at the end, with its fork)."""
    reason = why_not_branchable(executor)
    _expect(reason is None, f"{type(executor).__name__} cannot branch: {reason}")
    sub = posixpath.join(executor.workdir, DIR)
    clean = executor.snapshot()  # type: ignore[attr-defined]
    _run(executor, f"cd {executor.workdir} && mkdir -p {DIR}/inner && echo first > {DIR}/kept && "
                   f"echo '# snapshot line' >> {workdir_file} && export {VAR}=before && cd {DIR}")
    before = _state(executor, workdir_file)
    _expect(before["cwd"] == sub and before["var"] == "var=before", f"the setup did not hold: {before}")
    handle = executor.snapshot()  # type: ignore[attr-defined]
    _run(executor, f"cd {executor.workdir} && echo later > {DIR}/later && rm {workdir_file} && "
                   f"echo second >> {DIR}/kept && export {VAR}=after && cd /")
    after = _state(executor, workdir_file)
    _expect(after["var"] == "var=after" and "later" in after["files"], f"the later changes did not hold: {after}")
    child = executor.fork(handle)  # type: ignore[attr-defined]
    try:
        seen = _state(child, workdir_file)
        _expect(seen == before, f"the fork shows {seen}, not the snapshot's state {before}")
        _expect(child.read_file(f"{DIR}/kept") == "first\n", "the fork's file is not the snapshot's")
        _run(child, f"echo from-child > {executor.workdir}/{DIR}/child-only")
        _run(executor, f"echo from-parent > {executor.workdir}/{DIR}/parent-only")
        _expect("parent-only" not in _state(child, workdir_file)["files"], "the fork sees the parent's later write")
        _expect("child-only" not in _state(executor, workdir_file)["files"], "the parent sees the fork's write")
        executor.restore(handle)  # type: ignore[attr-defined]
        back = _state(executor, workdir_file)
        _expect(back == before, f"after restore the episode shows {back}, not the snapshot's state {before}")
        _expect(executor.read_file(f"{DIR}/kept") == "first\n", "restore did not put the edited file back")
        executor.release(handle)  # type: ignore[attr-defined]
    finally:
        child.close()
    executor.restore(clean)  # type: ignore[attr-defined]
    fresh = executor.fork(clean)  # type: ignore[attr-defined]
    executor.release(clean)  # type: ignore[attr-defined]
    check_executor(fresh, workdir_file=workdir_file)
    check_executor(executor, workdir_file=workdir_file)
