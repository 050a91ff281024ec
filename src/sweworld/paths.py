"""Moved to :mod:`sweworld.core.paths`; this name stays, as the same module object."""

from sweworld.core.moved import alias

alias(__name__, "sweworld.core.paths")
