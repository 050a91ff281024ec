"""``perturb``: the gold patch with probability ``p``, else a plausible wrong or partial edit.

Traces with both outcomes without a model (issue 12 part 1). Per sample (see ``regions.PlanPolicy``
for how a sample's choices stay the same on a rerun) the policy draws gold or not, views a window
around every hunk of the gold patch (what it edits must be what it saw), then edits with the editor:

- ``gold``: the oracle's edits (one ``str_replace`` per hunk);
- ``mutated_fix``: the gold patch plus another mutation of the fixed function;
- ``bug_kept``: the bug left in place and a mutation elsewhere in the same function;
- ``partial``: only some hunks of a multi-hunk fix;
- ``wrong_place``: a hunk's change applied to a similar line elsewhere in the window (the same
  token change on another line, or an inserted statement at another place in its block), the
  other hunks fixed;
- ``no_edit``: none of the above could be built from what was viewed (the policy submits as is).

The kind is chosen uniformly among the kinds with at least one candidate, then one candidate. It is
recorded as ``perturb: <kind>`` in the thought of the first action after the views (the first edit,
or the submit of ``no_edit``); :func:`perturb_kind` reads it back. Mutations are those of
``sweworld.synth`` (``mutations_for_file``), passed in as ``mutate`` (agents do not import the
synthesizer; ``sweworld rollout --policy perturb`` passes it). Whether a patch resolves is never
assumed: some mutations are equivalent, and only the harness says.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterable

from unidiff import PatchSet

from sweworld.agents.policies import OraclePolicy
from sweworld.agents.regions import (
    AFTER,
    BEFORE,
    Action,
    Plan,
    PlanPolicy,
    edit_actions,
    enclosing_function,
    view_above,
    view_region,
)
from sweworld.agents.wrong_edits import WRONG_KINDS, Hunk, Mutate, Site, options
from sweworld.core.types import Task

KINDS = ("gold", *WRONG_KINDS, "no_edit")
MARK = "perturb: "
_MARKED = re.compile(r"^perturb: (\w+)", re.M)
_SCROLLS = 4


def perturb_kind(thoughts: Iterable[str]) -> str | None:
    """The kind a perturb trajectory recorded (pass its steps' thoughts), None if none."""
    return next((m[1] for t in thoughts if (m := _MARKED.search(t or ""))), None)


class PerturbPolicy(PlanPolicy):
    """The gold patch with probability ``p``, else a wrong or partial edit (see the module docstring)."""

    name = "perturb"

    def __init__(self, p: float = 0.5, seed: int = 0, mutate: Mutate | None = None, workdir: str = "/testbed"):
        super().__init__(seed=seed, workdir=workdir)
        self.p, self.mutate = p, mutate
        self.kind = ""

    def read(self, task: Task) -> Plan:
        """View a window around each (group of) gold hunk(s) of modified Python files; returns the sites."""
        sites: list[Site] = []
        for patched in PatchSet(task.patch or ""):
            if patched.is_added_file or patched.is_removed_file or not patched.path.endswith(".py"):
                continue
            hunks = [Hunk.of(h) for h in patched]
            groups: list[list[Hunk]] = []
            for hunk in hunks:
                if groups and hunk.start - groups[-1][-1].end <= BEFORE + AFTER:
                    groups[-1].append(hunk)
                else:
                    groups.append([hunk])
            for group in groups:
                region = yield from view_region(f"{self.workdir}/{patched.path}", group[0].start, group[-1].end)
                for _ in range(_SCROLLS):
                    if region is None or all(enclosing_function(region.lines, region.index(h.first), h.indent)
                                             for h in group):
                        break
                    region = yield from view_above(region)
                if region is not None:
                    sites.append(Site(patched.path, region, group))
        return sites

    def edits(self, task: Task, sites: list[Site]) -> Generator[Action, str, str]:
        """The edits of this sample's draw, after ``read``; returns the ``perturb: <kind>`` marker
        when no edit carried it (for the caller's next action)."""
        rng = self.rng("perturb")
        found: dict[str, list] = {}
        if rng.random() < self.p:
            self.kind = "gold"
        else:
            found = {k: v for k, v in options(sites, self.mutate).items() if v}
            self.kind = rng.choice(sorted(found)) if found else "no_edit"
        marker = f"{MARK}{self.kind}"
        if self.kind == "gold":
            for tool, args, thought in [a for a in OraclePolicy(self.workdir).actions(task)
                                        if a[1].get("command") != "view"]:
                yield tool, args, f"{marker}\n{thought}" if marker else thought
                marker = ""
        elif found:
            chosen = rng.choice(found[self.kind])
            for i, site in enumerate(sites):
                if chosen[i] != site.region.lines:
                    yield from edit_actions(site.region, chosen[i], f"{marker}\nedit {site.rel}" if marker else "")
                    marker = ""
        return marker

    def plan(self, task: Task) -> Plan:
        sites = yield from self.read(task)
        marker = yield from self.edits(task, sites)
        yield "submit", {}, marker or "submit"
