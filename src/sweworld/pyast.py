"""``ast.parse`` that is safe to call from several threads.

CPython 3.11's AST constructor keeps its recursion depth in interpreter state shared by threads
(python/cpython#106905): two threads parsing at once can fail with ``SystemError: AST constructor
recursion depth mismatch``. Rollouts, fidelity and synthesis parse from thread pools, so every
parse in sweworld goes through this lock (parsing is short; the GIL serialised most of it anyway).
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    with _LOCK:
        return ast.parse(source, filename)
