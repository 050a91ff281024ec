"""``sweworld mine --exclude DATASET``: candidates that an existing dataset already holds are dropped.

A step of the history is excluded (before it is validated) when, for some row of an excluded
dataset (a shipped dataset's name, a file, a ``save_to_disk`` directory or a hub name such as
``princeton-nlp/SWE-bench_Verified``):

- its base commit (the step's first parent) is the row's ``base_commit``, or
- its fix commit (the step itself) is the row's fix commit (``mined_from`` of sweworld's mined rows,
  ``fix_commit`` or ``merge_commit`` where a dataset has one), or
- its instance id (``owner__name-<pull request>``, as SWE-bench names its rows) is the row's
  ``instance_id``: the same pull request of the same repository.

Each excluded step is counted in the summary's ``dropped`` as ``excluded: <what> in <DATASET>``.
SWE-bench's rows carry no fix commit: their fix is a pull request, whose merge is the step here, so
the instance id and the base commit are what match them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sweworld.core.types import Task

FIX_FIELDS = ("mined_from", "fix_commit", "merge_commit")
"""Fields of a row that name its fix commit."""


@dataclass
class Excluded:
    """The commits and ids of one excluded dataset."""

    name: str
    base_commits: set[str] = field(default_factory=set)
    fix_commits: set[str] = field(default_factory=set)
    instance_ids: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, name: str, tasks: list[Task]) -> Excluded:
        out = cls(name)
        for task in tasks:
            out.base_commits.add(task.base_commit.lower())
            out.instance_ids.add(task.instance_id)
            extra = task.model_extra or {}
            out.fix_commits.update(str(extra[f]).lower() for f in FIX_FIELDS if extra.get(f))
        return out

    def reason(self, *, base_commit: str, fix_commit: str, instance_id: str) -> str | None:
        """Why a step with these commits and id is excluded, or None."""
        if base_commit.lower() in self.base_commits:
            return f"excluded: base commit in {self.name}"
        if fix_commit.lower() in self.fix_commits:
            return f"excluded: fix commit in {self.name}"
        if instance_id in self.instance_ids:
            return f"excluded: instance id in {self.name}"
        return None


def load_excluded(names: list[str]) -> list[Excluded]:
    """The datasets ``names`` (shipped names, files, directories or hub names), read once each."""
    from sweworld import datasets
    from sweworld.tasks import load_tasks

    out = []
    for name in dict.fromkeys(names):
        source = str(datasets.path_of(name)) if datasets.is_shipped(name) else name
        out.append(Excluded.of(name, list(load_tasks(source))))
    return out


def exclusion_reason(excluded: list[Excluded], *, base_commit: str, fix_commit: str, instance_id: str) -> str | None:
    """The first reason any of ``excluded`` gives, or None."""
    for one in excluded:
        reason = one.reason(base_commit=base_commit, fix_commit=fix_commit, instance_id=instance_id)
        if reason:
            return reason
    return None
