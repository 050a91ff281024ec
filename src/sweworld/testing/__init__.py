"""What every episode must keep, as checks any backend, seam or test can run.

- ``conformance``: ``check_executor``, the one conformance suite for every ``Executor`` (real
  sandboxes, sim and hybrid worlds, test fakes);
- ``isolation``: ``check_isolation``, the sandbox's isolation probed through any exec call (what
  each framework seam must keep). It was ``sweworld.isolation_probes``, which stays as an alias.

Both speak only ``Executor`` or a callable that runs a command (an import contract).
"""

from sweworld.testing.conformance import CHECKS, check_executor

__all__ = ["CHECKS", "check_executor"]
