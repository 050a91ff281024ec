"""Real tasks from real history: SWE-Gym-style instances mined from a repository's commits.

- ``repository.open_repository`` / ``repository.steps``: the source, its mirror, the first-parent chain;
- ``candidates.screen``: steps -> candidate rows (``rules`` decides which steps, ``split`` splits the
  diff, ``version`` and ``recipes`` choose the environment, ``statement`` writes the statement);
- ``pipeline.validate_candidates``: validation on a real backend, resumable through ``ledger``.

``sweworld mine`` (cli/mine_cmd.py) runs them in that order.
"""
