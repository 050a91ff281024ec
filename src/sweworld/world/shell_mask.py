"""Moved to :mod:`sweworld.shell.mask`; this name stays, as the same module object."""

from sweworld.core.moved import alias

alias(__name__, "sweworld.shell.mask")
