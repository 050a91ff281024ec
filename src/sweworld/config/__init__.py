"""Moved to :mod:`sweworld.core.config`; this name stays, as the same module object."""

from sweworld.core.moved import alias

alias(__name__, "sweworld.core.config", ('backend', 'files', 'runs', 'timeouts'))
