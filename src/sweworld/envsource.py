"""Where a node gets an environment another node has built, instead of building it (none by default).

``EnvBuilder`` (``sweworld.envs.build``) asks the process's source, when one is installed, for an
environment, an install layer or a stand-in service it lacks, before building it; it announces
each one it has (built, fetched or found) so that other nodes can fetch it from this one. With no
source installed (one machine) nothing changes. The packing and unpacking stay in
``sweworld.envs.archive``: a source carries bytes and runs the ``pack`` callable it is handed on
a node that holds the environment (``sweworld.parallel.envshare`` is the Ray one).

This module sits on the floor (standard library only) so that the environments (which ask) and
the runners (which install a source) both import it, not each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

Kind = Literal["env", "instance", "service"]
"""``env``: ``envs/<env_key>`` (key ``env_key``); ``instance``: ``envs/<env_key>/instances/<inst_key>``
(key ``env_key/inst_key``); ``service``: ``envs/services/<key>``."""


@dataclass(frozen=True)
class Packed:
    """One environment, layer or service packed on the node holding it: a compressed tar stream and
    the sha256 of those bytes, computed when packing and checked before anything is unpacked."""

    kind: str
    key: str
    data: bytes
    digest: str
    node: str = ""
    """Who packed it (a node id, for the log and the metadata), when the source knows."""


Pack = Callable[[str, str], "Packed | None"]
"""``pack(kind, key)``: the archive of what this node holds under that name, None when it holds nothing
complete there."""


class EnvSource(Protocol):
    """Finds what a node lacks on another node."""

    def fetch(self, kind: str, key: str, pack: Pack) -> Packed | None:
        """``pack(kind, key)`` run on another node that announced ``(kind, key)``; None when no other
        node holds it. Any other failure raises (the builder logs it and builds)."""
        ...

    def announce(self, kind: str, key: str) -> None:
        """This node now holds ``(kind, key)``, complete (cheap: called on every use)."""
        ...


_SOURCE: list[EnvSource] = []


def install_source(source: EnvSource | None) -> None:
    """Make ``source`` this process's source (None: none, the default)."""
    _SOURCE[:] = [source] if source is not None else []


def current_source() -> EnvSource | None:
    """The source ``install_source`` installed in this process, if any."""
    return _SOURCE[0] if _SOURCE else None
