"""Moved to :mod:`sweworld.parallel.envshare`; this name stays, as the same module object."""

from sweworld.core.moved import alias

alias(__name__, "sweworld.parallel.envshare")
