"""The hybrid backend's audit counts, carried on what they count.

A *tally* is the counts of one episode or one evaluation, a plain dict that travels on the
trajectory (``Trajectory.audits``) and on the evaluation report (``InstanceReport.audits``):
``{"steps": {...}, "evaluations": {...}}``, each with ``audited``, ``agreed``, ``same`` (the outcome
or verdict agreed, whatever the output), ``simulated`` (items the world predicted) and ``ran_real``
(of those, routed to real execution). A run's summary adds up the tallies of its trajectories or
reports (``summarize``), so it counts the same whichever runner ran the items and across a resume.
The audit records themselves go, one JSON line each, to ``<traces>.audits.jsonl`` through
``sweworld.parallel.shipping`` (written by the run's driver).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sweworld.core.protocols import Audited
from sweworld.parallel import shipping
from sweworld.world.metrics import wilson

KINDS = ("steps", "evaluations")
FIELDS = ("audited", "agreed", "same", "simulated", "ran_real")


def new_tally() -> dict[str, dict[str, int]]:
    return {kind: dict.fromkeys(FIELDS, 0) for kind in KINDS}


def routed(tally: dict, kind: str, real: bool) -> None:
    """One simulated step or evaluation, ``real`` when it was routed to real execution."""
    tally[kind]["simulated"] += 1
    tally[kind]["ran_real"] += real


def audited(tally: dict, kind: str, agreed: bool, *, outcome_agreed: bool | None = None) -> None:
    """One audit; ``outcome_agreed``: the outcome (steps) or verdict agrees, whatever the output."""
    tally[kind]["audited"] += 1
    tally[kind]["agreed"] += agreed
    tally[kind]["same"] += agreed if outcome_agreed is None else outcome_agreed


def merge(tallies: Iterable[dict | None]) -> dict | None:
    """The sum of the tallies given (None when none is)."""
    total = None
    for tally in tallies:
        if tally is None:
            continue
        total = total or new_tally()
        for kind in KINDS:
            for name in FIELDS:
                total[kind][name] += tally.get(kind, {}).get(name, 0)
    return total


def summarize(tallies: Iterable[dict | None]) -> dict | None:
    """A run's audits from its items' tallies, with 95 % Wilson intervals (None: nothing was
    audited or routed, not a hybrid run). ``agreement_with_routing``: where every item not routed
    was audited, the agreement the agent experienced (a routed item agrees by construction)."""
    total = merge(tallies)
    if total is None:
        return None
    out = {}
    for kind, c in total.items():
        n, k, same, simulated, real = (c[name] for name in FIELDS)
        out[kind] = {"audited": n, "agreed": k, "agreement": round(k / n, 4) if n else None,
                     "wilson95": list(wilson(k, n)), "outcome_agreement": round(same / n, 4) if n else None,
                     "simulated": simulated, "ran_real": real,
                     "share_real": round(real / simulated, 4) if simulated else None}
        if simulated and n == simulated - real:
            out[kind]["agreement_with_routing"] = round((k + real) / simulated, 4)
            out[kind]["wilson95_with_routing"] = list(wilson(k + real, simulated))
            out[kind]["outcome_agreement_with_routing"] = round((same + real) / simulated, 4)
    return out


def summary_part(carriers: Iterable[Any]) -> dict:
    """A run summary's ``audits`` from what its trajectories or reports carry (``protocols.Audited``:
    their ``audits``); {} when none carries any (not a hybrid run)."""
    summary = summarize(item.audits if isinstance(item, Audited) else None for item in carriers)
    return {} if summary is None else {"audits": summary}


class AuditRecords:
    """Where each audit's record goes: ``path`` (a JSONL file), or nowhere (None)."""

    def __init__(self, path: Path | None):
        self.path = path

    def write(self, kind: str, agreed: bool, record: dict) -> None:
        if self.path is not None:
            shipping.append(self.path, json.dumps({"kind": kind, "agreed": agreed, **record}))
