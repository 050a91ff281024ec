"""Rows of the dataset families that ship images, read as sweworld's ``Task`` (before validation).

Each family writes its rows its own way; ``normalize(row)`` gives the fields a ``Task`` needs and keeps
every field of the row:

- **SWE-bench >= 5.0** (Verified, Multilingual): the row's ``image`` names its image (copied to
  ``docker_image``); its ``log_parser`` is read by the grader when swebench has that parser.
- The rows of the families that ship nothing but images (SWE-smith, R2E-Gym) say so:
  ``env_source: image`` (``envs.image.image_name`` runs them on their image unless told ``recipe``).
- **SWE-smith**: ``image_name``; no base commit (the image's tree, ``HEAD``); the row's ``patch``
  *introduces* the bug, so it is kept as ``bug_patch`` (applied and committed on the image's tree
  when an episode opens: ``envs.image``) and the gold ``patch`` is its reverse.
- **R2E-Gym**: ``docker_image``, ``repo_name``, ``commit_hash``; no instance id (made from the
  repository and the commit), no base commit (``HEAD``), no gold patch; the tests are the image's
  ``/run_tests.sh``, and the grade is R2E-Gym's: every parsed status equals the row's
  ``expected_output_json`` (``harness.grade``).
- **SWE-rebench V2**: ``image_name`` and ``install_config`` as SWE-rebench's V1 rows, in the
  repository's directory ``/<name>`` (``envs.image.workdir_of``): nothing to change.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

R2E_TEST_CMD = "bash /run_tests.sh"
"""What R2E-Gym's images run their tests with (the script lies in the image)."""

_HUNK = re.compile(r"^@@ -(\d+(?:,\d+)?) \+(\d+(?:,\d+)?) @@(.*)$")
_SWAPS = {"new file mode ": "deleted file mode ", "deleted file mode ": "new file mode ",
          "old mode ": "new mode ", "new mode ": "old mode ", "rename from ": "rename to ",
          "rename to ": "rename from ", "copy from ": "copy to ", "copy to ": "copy from "}


def _count(span: str) -> int:
    return int(span.split(",")[1]) if "," in span else 1


def _side(name: str, prefix: str) -> str:
    """A ``---``/``+++`` path written for the other side (``a/`` and ``b/`` exchanged)."""
    if name.startswith(("a/", "b/")):
        return prefix + name[2:]
    return name


def reverse_patch(patch: str) -> str:
    """The unified diff that undoes ``patch`` (git's headers included: modes, renames, indexes)."""
    out: list[str] = []
    lines = patch.splitlines(keepends=True)
    i, old_left, new_left = 0, 0, 0
    while i < len(lines):
        line = lines[i]
        body, end = line.rstrip("\n"), line[len(line.rstrip("\n")):]
        if old_left > 0 or new_left > 0:  # inside a hunk: exchange what goes and what comes
            mark = body[:1]
            if mark == "-":
                out.append("+" + body[1:] + end)
                old_left -= 1
            elif mark == "+":
                out.append("-" + body[1:] + end)
                new_left -= 1
            else:
                out.append(line)
                if mark != "\\":
                    old_left, new_left = old_left - 1, new_left - 1
            i += 1
            continue
        hunk = _HUNK.match(body)
        if body.startswith("diff --git "):
            parts = body[len("diff --git "):].split(" ")
            half = len(parts) // 2
            a, b = " ".join(parts[:half]), " ".join(parts[half:])
            out.append(f"diff --git {_side(b, 'a/')} {_side(a, 'b/')}{end}")
        elif body.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            new = lines[i + 1].rstrip("\n")[4:]
            old = body[4:]
            out.append(f"--- {_side(new, 'a/')}{end}")
            out.append(f"+++ {_side(old, 'b/')}{lines[i + 1][len(lines[i + 1].rstrip(chr(10))):]}")
            i += 2
            continue
        elif hunk:
            out.append(f"@@ -{hunk[2]} +{hunk[1]} @@{hunk[3]}{end}")
            old_left, new_left = _count(hunk[1]), _count(hunk[2])
        elif body.startswith("index ") and ".." in body:
            ids, _, mode = body[len("index "):].partition(" ")
            left, _, right = ids.partition("..")
            out.append(f"index {right}..{left}{' ' + mode if mode else ''}{end}")
        else:
            swapped = next((body.replace(k, v, 1) for k, v in _SWAPS.items() if body.startswith(k)), None)
            out.append(swapped + end if swapped is not None else line)
        i += 1
    # git wants rename/copy and mode lines in their usual order: "from" before "to", "old" before "new"
    return _reorder("".join(out))


def _reorder(patch: str) -> str:
    lines = patch.splitlines(keepends=True)
    for first, second in (("rename to ", "rename from "), ("copy to ", "copy from "), ("new mode ", "old mode ")):
        for i in range(len(lines) - 1):
            if lines[i].startswith(first) and lines[i + 1].startswith(second):
                lines[i], lines[i + 1] = lines[i + 1], lines[i]
    return "".join(lines)


def _swesmith(row: dict[str, Any]) -> bool:
    return "swesmith" in str(row.get("image_name") or "") or str(row.get("repo") or "").startswith("swesmith/")


def _r2egym(row: dict[str, Any]) -> bool:
    return "expected_output_json" in row and "docker_image" in row and "repo_name" in row


def normalize(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """``data`` with the fields a ``Task`` needs, for the families above; other rows as they are."""
    row = dict(data)
    if isinstance(row.get("image"), str) and "eval_script" in row:  # SWE-bench >= 5.0
        row.setdefault("docker_image", row["image"])
        return row
    if _swesmith(row) and not row.get("base_commit") and "bug_patch" not in row:
        row["bug_patch"] = row.get("patch") or ""
        row["patch"] = reverse_patch(row["bug_patch"])
        row["base_commit"] = "HEAD"
        row.setdefault("env_source", "image")
        return row
    if _r2egym(row) and not row.get("instance_id"):
        commit = str(row.get("commit_hash") or "")[:12]
        row["instance_id"] = f"{row['repo_name']}__r2e-{commit}"
        row.setdefault("repo", str(row["repo_name"]))
        row.setdefault("base_commit", "HEAD")
        row.setdefault("install_config", {"test_cmd": [R2E_TEST_CMD], "log_parser": "parse_log_pytest"})
        row.setdefault("env_source", "image")
        return row
    return data
