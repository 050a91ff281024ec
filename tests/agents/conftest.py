"""The agents' tests share the branching rollouts' real instance and backend (``task``, ``backend``)."""

from tests.runs.test_branching_rollouts import backend, task  # noqa: F401 (fixtures)
