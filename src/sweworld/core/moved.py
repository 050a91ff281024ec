"""Old module names kept after a move: the old name becomes the new module itself.

``alias(__name__, "sweworld.core.types")`` in the old file puts the new module in ``sys.modules`` under
the old name, so ``import sweworld.types``, ``from sweworld.types import Task``, a pickle that names
the old path and a ``monkeypatch`` of ``"sweworld.types.X"`` all reach the one module object (a star
re-export would make a second namespace that a patch would miss). A moved package names its
submodules too, so that ``sweworld.config.backend`` is not loaded a second time under the old name.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable


def alias(old: str, new: str, submodules: Iterable[str] = ()) -> None:
    sys.modules[old] = importlib.import_module(new)
    for name in submodules:
        sys.modules[f"{old}.{name}"] = importlib.import_module(f"{new}.{name}")
