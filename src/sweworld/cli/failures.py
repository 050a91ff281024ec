"""The console's account of failed instances: one line per distinct cause, with the instance ids,
so that the reason of a failure is on the console and not only in a per-instance log."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import takewhile

from sweworld.cli import common
from sweworld.harness.predictions import listing


def reason(text: str) -> str:
    """The first line of an error text; for a failed command (a ``stderr:`` block follows), with the
    line of its stderr that says why (the first ``fatal:``/``error:`` one, else the first)."""
    lines = text.strip().splitlines() or ["(no message)"]
    if "stderr:" not in (stripped := [line.strip() for line in lines]):
        return lines[0]
    said = [line.replace("\0", "").strip() for line in stripped[stripped.index("stderr:") + 1:]]
    said = list(takewhile(lambda line: not line.startswith("what to do:"), filter(None, said)))
    why = next((line for line in said if "fatal:" in line or "error:" in line), said[0] if said else "")
    return f"{lines[0]}: {why}" if why else lines[0]


def causes(errors: Mapping[str, str]) -> list[str]:
    """``{instance id: error text}`` -> one line per distinct cause (``reason``: the text's first line,
    and the failed command's own words), without the instance's own id, the most frequent first:
    ``<cause> [<ids>]``."""
    groups: dict[str, list[str]] = {}
    for instance_id, text in sorted(errors.items()):
        cause = reason(text).replace(f"instance {instance_id}: ", "").replace(f"{instance_id}: ", "")
        groups.setdefault(cause, []).append(instance_id)
    ordered = sorted(groups.items(), key=lambda item: -len(item[1]))
    return [f"{cause} [{len(ids)}: {listing(ids)}]" for cause, ids in ordered]


def report(title: str, errors: Mapping[str, str]) -> None:
    """Print ``title`` and the causes of ``errors`` (nothing when there are none)."""
    if not errors:
        return
    common.out.print(f"{title}:", markup=False)
    for line in causes(errors):
        common.out.print(f"  {line}", markup=False, soft_wrap=True)


def of_trajectory(traj) -> str | None:
    """Why an episode has no verdict: its own error, or its evaluation's infrastructure failure."""
    report = traj.report or {}
    return traj.error or (report.get("error") if report.get("error_kind") == "infra" else None)
