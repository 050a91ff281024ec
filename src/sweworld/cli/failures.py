"""The console's account of failed instances: one line per distinct cause, with the instance ids,
so that the reason of a failure is on the console and not only in a per-instance log."""

from __future__ import annotations

from collections.abc import Mapping

from sweworld.cli import common
from sweworld.harness.predictions import listing


def causes(errors: Mapping[str, str]) -> list[str]:
    """``{instance id: error text}`` -> one line per distinct cause (the text's first line, without the
    instance's own id), the most frequent first: ``<cause> [<ids>]``."""
    groups: dict[str, list[str]] = {}
    for instance_id, text in sorted(errors.items()):
        first = (text.strip().splitlines() or ["(no message)"])[0]
        cause = first.replace(f"instance {instance_id}: ", "").replace(f"{instance_id}: ", "")
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
