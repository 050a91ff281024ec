"""The builder's side of an environment source (``sweworld.envsource``): fetch what this node lacks
from a node that has it, else say why in one warning and let the builder build it.

Called by ``EnvBuilder`` under the file lock of the key (``store.locked``), so a concurrent build
or fetch of the same key on this node waits and then finds it published.
"""

from __future__ import annotations

import logging
import time

from sweworld.envs import archive
from sweworld.envsource import EnvSource, current_source

log = logging.getLogger(__name__)


def fetched(kind: str, key: str, source: EnvSource | None = None) -> bool:
    """Whether ``(kind, key)`` was fetched and published here (``source``: the process's by default).
    False with no source, when no other node holds it, or after any failure (logged once: the
    caller builds it)."""
    source = source or current_source()
    if source is None:
        return False
    started = time.monotonic()
    try:
        packed = source.fetch(kind, key, archive.pack)
        if packed is None:
            return False
        final = archive.unpack(packed, kind, key)
    except Exception as exc:  # a lost holder, a damaged archive, a full disk...: build instead
        log.warning("fetching %s %s from another node failed, building it here instead: %s: %s",
                    kind, key, type(exc).__name__, exc)
        return False
    log.info("fetched %s %s from node %s: %d bytes in %.1fs (%s)", kind, key, packed.node or "?",
             len(packed.data), time.monotonic() - started, final)
    return True


def announce(kind: str, key: str, source: EnvSource | None = None) -> None:
    """Tell the source that this node holds ``(kind, key)``; a failure to tell is logged, not raised."""
    source = source or current_source()
    if source is None:
        return
    try:
        source.announce(kind, key)
    except Exception as exc:  # other nodes then build it themselves
        log.warning("announcing %s %s to the other nodes failed (they build it themselves): %s: %s",
                    kind, key, type(exc).__name__, exc)
