"""Moved to :mod:`sweworld.testing.isolation`; this name stays, as the same module object."""

from sweworld.core.moved import alias

alias(__name__, "sweworld.testing.isolation")
