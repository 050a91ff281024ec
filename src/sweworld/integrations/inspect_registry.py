"""What inspect-ai's ``inspect_ai`` entry point loads: the ``sweworld`` sandbox and sweworld's tasks.

``pyproject.toml`` names this module in the ``inspect_ai`` entry-point group, so installing sweworld
with its ``inspect`` extra makes ``inspect eval ... --sandbox sweworld`` and
``inspect eval sweworld/sweworld_task`` work without an import of the user's.
"""

from sweworld.integrations import inspect_sandbox, inspect_task

__all__ = ["inspect_sandbox", "inspect_task"]
