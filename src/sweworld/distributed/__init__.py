"""Where work items run: a thread pool on this machine (``local``, the default) or Ray tasks over
a cluster (``ray``, extra ``[ray]``).

Every entry point that fans work out (rollouts, evaluation, validation, synthesis checks, world
collection) asks its runner for a pool and submits items to it; results come back to the driver as
``concurrent.futures.Future`` objects, and the driver alone writes the stores, with the same resume
logic whatever ran the items. ``make_runner(name, address=...)`` builds one by name.
"""

from __future__ import annotations

from sweworld.distributed.runner import (
    RUNNERS,
    Hints,
    LocalRunner,
    Pool,
    Runner,
    environment_group,
    make_runner,
)

__all__ = ["RUNNERS", "Hints", "LocalRunner", "Pool", "Runner", "environment_group", "make_runner"]
