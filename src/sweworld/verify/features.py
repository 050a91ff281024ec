"""What a verifier may read of a sample without an environment: the trajectory and its final diff.

``trajectory_features(trajectory)`` -> {name: float} (``TRAJECTORY_FEATURES``): steps, edits, views,
commands, the test runs the agent made (pytest or a Python script) and whether the last one, and
the last one after the last edit, passed (pytest's summary line: no failed or error counts and at
least one pass; a script: exit code 0 and no traceback), tracebacks and non-zero exits seen,
format errors, how the episode ended. The thoughts are never read: scripted policies record
their choice there (``perturb: <kind>``), which would be the label.

``agreement(samples)`` -> {(instance, sample): share}: for self-consistency (Agentless' majority
vote over normalised patches), the share of the instance's other samples whose final diff makes
the same change: the same removed and added lines (stripped) at the same places of the same files
(hunk ranges kept, context lines and ``index`` lines ignored: every sample starts from the same base,
so equal signatures give equal files); 0 for an empty diff.

The diff's own features are the embedded SWR's (``surrogates.swr.features``): ``DIFF_FEATURES`` need
no gold patch (size, parses, applies, syntax, tests touched); ``REFERENCE_FEATURES`` compare with
the gold patch, as SWE-World's SWR is shown it.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable

from sweworld.surrogates.swr.behaviour import FEATURES as BEHAVIOUR
from sweworld.surrogates.swr.features import FEATURES
from sweworld.trajectory import LIMIT_STATUSES, Step, Trajectory

DIFF_FEATURES = ("empty", "parsed", "applies", "syntax_ok", "files", "hunks", "added", "removed", "new_files",
                 "tests_modified")
REFERENCE_FEATURES = tuple(f for f in FEATURES if f not in DIFF_FEATURES and f not in BEHAVIOUR)
"""The diff against the gold patch; not the behaviour features (their calls need an isolated probe)."""
TRAJECTORY_FEATURES = (
    "steps", "edits", "views", "commands", "test_runs", "tested_after_edit", "last_test_passed",
    "last_test_failed", "passed_after_edit", "failed_after_edit", "tracebacks", "nonzero_exits",
    "format_errors", "submitted", "hit_limit", "agreement",
)
EDITS = {"create", "str_replace", "insert", "undo_edit"}
_TEST_COMMAND = re.compile(r"\bpytest\b|\bpython3?\s+(?:-m\s+unittest\b|[\w./-]+\.py\b)|\btox\b|\bnosetests\b")
_SUMMARY = re.compile(r"(\d+) (passed|failed|errors?|xfailed|xpassed)\b")
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\)|^E\s+\w+(Error|Exception)\b", re.M)


def _log(n: float) -> float:
    return math.log1p(max(n, 0))


def is_edit(step: Step) -> bool:
    return step.tool in ("str_replace_editor", "edit", "file_editor") and step.arguments.get("command") in EDITS


def is_test_run(step: Step) -> bool:
    command = str(step.arguments.get("command", "")) if step.tool == "execute_bash" else ""
    return bool(_TEST_COMMAND.search(command))


def run_passed(step: Step) -> bool:
    """Did this test run pass: pytest's last summary counts, else the exit code and no traceback."""
    output = step.observation or ""
    counts: Counter[str] = Counter()
    for line in output.splitlines()[::-1]:
        found = _SUMMARY.findall(line)
        if found:
            counts.update({kind.rstrip("s"): int(n) for n, kind in found})
            break
    if counts:
        return counts["passed"] + counts["xfailed"] > 0 and not counts["failed"] and not counts["error"]
    return step.exit_code == 0 and not _TRACEBACK.search(output)


def trajectory_features(trajectory: Trajectory) -> dict[str, float]:
    """See the module docstring (``agreement`` is left to ``agreement``)."""
    steps = trajectory.steps
    last_edit = max((s.index for s in steps if is_edit(s)), default=-1)
    tests = [s for s in steps if is_test_run(s)]
    after = [s for s in tests if s.index > last_edit] if last_edit >= 0 else []
    last, last_after = (tests[-1] if tests else None), (after[-1] if after else None)
    return {
        "steps": _log(len(steps)), "edits": _log(sum(is_edit(s) for s in steps)),
        "views": _log(sum(s.tool in ("str_replace_editor", "file_editor") and s.arguments.get("command") == "view"
                          for s in steps)),
        "commands": _log(sum(s.tool == "execute_bash" for s in steps)), "test_runs": _log(len(tests)),
        "tested_after_edit": float(bool(after)),
        "last_test_passed": float(last is not None and run_passed(last)),
        "last_test_failed": float(last is not None and not run_passed(last)),
        "passed_after_edit": float(last_after is not None and run_passed(last_after)),
        "failed_after_edit": float(last_after is not None and not run_passed(last_after)),
        "tracebacks": _log(sum(bool(_TRACEBACK.search(s.observation or "")) for s in steps)),
        "nonzero_exits": _log(sum(s.exit_code not in (None, 0) for s in steps)),
        "format_errors": _log(sum(s.format_error for s in steps)),
        "submitted": float(trajectory.exit_status == "submitted"),
        "hit_limit": float(trajectory.exit_status in LIMIT_STATUSES),
        "agreement": 0.0,
    }


def signature(patch: str) -> str:
    """What the diff changes and where (see the module docstring)."""
    kept = []
    for line in patch.splitlines():
        if line.startswith(("diff --git ", "@@")):
            kept.append(line.split(" @@")[0] if line.startswith("@@") else line)
        elif line[:1] in "+-" and not line.startswith(("+++ ", "--- ")):
            kept.append(line[0] + line[1:].strip())
    return "\n".join(kept)


def agreement(samples: Iterable[Trajectory]) -> dict[tuple[str, int], float]:
    """See the module docstring."""
    groups: dict[str, list[Trajectory]] = defaultdict(list)
    for t in samples:
        groups[t.instance_id].append(t)
    out = {}
    for group in groups.values():
        signatures = [signature(t.patch) if t.patch.strip() else "" for t in group]
        counts = Counter(signatures)
        for t, sig in zip(group, signatures, strict=True):
            out[t.key] = (counts[sig] - 1) / (len(group) - 1) if sig and len(group) > 1 else 0.0
    return out
