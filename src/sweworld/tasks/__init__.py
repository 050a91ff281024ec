"""Task supply: load and save SWE-bench-format datasets, and validate their rows.

Public API::

    load_tasks(source, *, split=None, skip_invalid=False, instance_ids=None) -> TaskSet
    save_tasks(tasks, path) -> Path                # .json / .jsonl / .parquet by extension
    validate_rows(rows, *, source="<rows>", skip_invalid=False, instance_ids=None) -> TaskSet
    dump_row(task) -> dict                         # a Task as a plain SWE-bench row
    TaskSet                                        # .tasks, .errors, .source, .split, by_id, len, iter

Every bad row gives one ``DatasetError`` located ``file:line`` (JSON, JSONL) or ``file[row N]``
(Parquet, ``datasets``), with the instance id when known, the bad fields and what to do. Without
``skip_invalid`` the first one is raised (its ``errors`` attribute lists all of them).
"""

from sweworld.tasks.load import load_tasks, validate_rows
from sweworld.tasks.rows import dump_row
from sweworld.tasks.save import save_tasks
from sweworld.tasks.taskset import TaskSet

__all__ = ["TaskSet", "dump_row", "load_tasks", "save_tasks", "validate_rows"]
