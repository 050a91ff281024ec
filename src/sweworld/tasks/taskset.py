"""``TaskSet``: the tasks loaded from one source, plus the errors of the rows that were skipped."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from sweworld.core.errors import DatasetError
from sweworld.core.types import Task


@dataclass
class TaskSet:
    """Tasks in source order; ``errors`` holds one ``DatasetError`` per skipped (invalid) row."""

    tasks: list[Task] = field(default_factory=list)
    errors: list[DatasetError] = field(default_factory=list)
    source: str = ""
    split: str | None = None
    _index: dict[str, Task] | None = field(default=None, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.tasks)

    def __iter__(self) -> Iterator[Task]:
        return iter(self.tasks)

    def __getitem__(self, index: int) -> Task:
        return self.tasks[index]

    def __contains__(self, instance_id: object) -> bool:
        return instance_id in self._ids()

    def _ids(self) -> dict[str, Task]:
        if self._index is None or len(self._index) != len(self.tasks):
            self._index = {task.instance_id: task for task in self.tasks}
        return self._index

    @property
    def ids(self) -> list[str]:
        """Instance ids in source order."""
        return [task.instance_id for task in self.tasks]

    def by_id(self, instance_id: str) -> Task:
        """The task with this instance id; ``KeyError`` naming the source when there is none."""
        try:
            return self._ids()[instance_id]
        except KeyError:
            raise KeyError(f"no instance '{instance_id}' in {self.source or 'this task set'}") from None

    def get(self, instance_id: str) -> Task | None:
        """The task with this instance id, or None."""
        return self._ids().get(instance_id)

    def summary(self) -> str:
        """One line for logs and the CLI: how many tasks loaded and how many rows were skipped."""
        where = f" from {self.source}" + (f" [{self.split}]" if self.split else "") if self.source else ""
        text = f"{len(self.tasks)} task{'' if len(self.tasks) == 1 else 's'} loaded{where}"
        if self.errors:
            text += f"; {len(self.errors)} invalid row{'' if len(self.errors) == 1 else 's'} skipped"
        return text
