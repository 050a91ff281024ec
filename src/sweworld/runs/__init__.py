"""Runs: what fans work out over items and keeps its results (evaluation, validation, rollouts).

Where items run: a thread pool on this machine (``local``, the default) or Ray tasks over a cluster
(``ray``, extra ``[ray]``), built by ``runner.make_runner(name, address=...)``. Every entry point that
fans work out asks its runner for a pool and submits items to it; results come back to the driver as
``concurrent.futures.Future`` objects, and the driver alone writes the stores, with the same resume
logic whatever ran the items.

Modules: ``eval`` (a parallel, resumable evaluation run in SWE-bench's layout), ``validate``
(SWE-Gym-style validation of instances), ``rollout`` (trajectories), ``store`` (the crash-safe
trajectory store), ``metrics`` (resolve rates, pass@k), ``runner``/``ray_runner`` (where items run),
``parallel`` (the one map over items every run fans out with: ``map_items``, ``map_ordered``),
``envshare`` (environments fetched between nodes), ``localcluster`` (a local multi-node Ray cluster on
one machine, for tests and benchmarks).
"""
