"""The task index every seam looks tasks up in: by instance id, or by the image a framework names.

``index_of(dataset, split)`` loads a dataset once per process (a shipped name, a file, a
``save_to_disk`` directory or a hub name; a file is read again when it changes); ``TaskIndex(tasks)``
indexes tasks a caller holds. ``find`` raises one ``DatasetError`` naming the dataset and what to do.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from sweworld.core import images
from sweworld.core.errors import DatasetError

if TYPE_CHECKING:
    from sweworld.core.types import Task


class TaskIndex(Mapping[str, "Task"]):
    """Tasks by instance id (a mapping, in the order given; ``tasks`` is the list), and by image name."""

    def __init__(self, tasks: Iterable[Task], *, where: str = "the tasks", errors: Iterable[DatasetError] = ()):
        self.tasks: list[Task] = list(tasks)
        self.where = where
        self.errors = list(errors)  # the rows that did not load: each fails alone, when it is asked for
        self._by_id = {task.instance_id: task for task in self.tasks}

    def __len__(self) -> int:
        return len(self.tasks)

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_id)

    def __getitem__(self, instance_id: str) -> Task:
        return self._by_id[instance_id]

    @property
    def ids(self) -> list[str]:
        return list(self._by_id)

    def get(self, instance_id: str | None) -> Task | None:
        return self._by_id.get(instance_id) if instance_id else None

    def of_image(self, image: str) -> Task | None:
        """The task ``image`` stands for: the row whose ``docker_image`` or ``image_name`` is ``image``
        (registry, tag and digest aside), else the one whose id is the image's id in any case
        (SWE-rebench lowercases ids in its image names); None when none is."""
        key = images.image_key(image)
        for task in self.tasks:
            if any(images.image_key(name) == key for name in images.images_of_row(task.model_extra or {})):
                return task
        wanted = images.instance_of_image(image)
        if wanted is None:
            return None
        return self._by_id.get(wanted) or next(
            (t for t in self.tasks if t.instance_id.lower() == wanted.lower()), None)

    def find(self, instance_id: str | None = None, *, image: str | None = None, hint: str | None = None) -> Task:
        """The task ``instance_id`` names, else the one ``image`` stands for (an image whose id is not in the
        index as it is written, as SWE-rebench lowercases ids, is looked up among the rows' images);
        ``DatasetError`` when none."""
        found = self.get(instance_id) or (self.of_image(image) if image else None)
        if found is not None:
            return found
        bad = next((e for e in self.errors if instance_id and instance_id in str(e.where)), None)
        if bad is not None:
            raise bad
        listed = ", ".join(self.ids[:5]) + (", ..." if len(self) > 5 else "")
        what = f"instance {instance_id!r}" if instance_id else (f"the image {image!r}" if image else "no instance")
        raise DatasetError(f"{what} is not in {self.where}" if instance_id or image else "no instance named",
                           where=self.where, hint=hint or (f"name one of {listed}" if listed else "the dataset is empty"))


_CACHE: dict[tuple[str, str | None], tuple[tuple[int, int] | None, TaskIndex]] = {}
_LOCK = threading.Lock()


def _stamp(source: str) -> tuple[int, int] | None:
    """A file's (mtime, size): a changed file is read again; None for what is not a local file."""
    try:
        stat = os.stat(source)
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size)


def source_of(dataset: str) -> str:
    """What ``tasks.load_tasks`` reads for ``dataset``: a shipped dataset's file, else ``dataset`` itself."""
    from sweworld import datasets
    return str(datasets.path_of(dataset)) if datasets.is_shipped(dataset) else dataset


def index_of(dataset: str, split: str | None = None) -> TaskIndex:
    """The index of every task of ``dataset`` (loaded once per process, again when its file changes)."""
    from sweworld.tasks import load_tasks
    source = source_of(str(dataset))
    key, stamp = (source, split), _stamp(source)
    with _LOCK:
        held = _CACHE.get(key)
        if held is not None and held[0] == stamp:
            return held[1]
    where = f"dataset {dataset}" + (f" (split {split})" if split else "")
    loaded = load_tasks(source, split=split, skip_invalid=True)
    index = TaskIndex(loaded.tasks, where=where, errors=loaded.errors)
    with _LOCK:
        _CACHE[key] = (stamp, index)
    return index
