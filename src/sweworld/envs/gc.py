"""``sweworld env gc``: what the caches hold that nothing will use again.

- episode directories whose owner process is gone (killed, or never closed them): always;
- with an age (``--older-than``): environments (with their install layers) and base trees not used
  for that long (see ``sweworld.usage``) and not mounted by a live episode, and episodes kept on
  purpose (``keep=True``) whose owner is gone and that are that old.

Removal takes the lock their builders take and looks again under it, so an artefact used or rebuilt
in the meantime stays. Mirrors and downloaded sdists are kept (a tree is rebuilt from its mirror).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

from sweworld.core.paths import remove_tree
from sweworld.envs.store import envs_root, locked
from sweworld.repos.cache import locked as repos_locked
from sweworld.repos.cache import repos_root
from sweworld.sandbox import workdirs
from sweworld.usage import forget, last_used

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_NOT_ENVS = {"locks", "logs", "services"}


def parse_age(text: str) -> float:
    """Seconds in ``7d``, ``12h``, ``30m``, ``90s``, ``2w``. Raises ValueError for anything else."""
    match = _AGE.match(text.lower())
    if not match:
        raise ValueError(f"{text!r} is not an age: write a number and a unit (s, m, h, d, w), e.g. 7d or 12h")
    return float(match.group(1)) * UNITS[match.group(2)]


def _age(seconds: float) -> str:
    return f"{seconds / 86400:.1f} days" if seconds >= 86400 else f"{seconds / 3600:.1f} hours"


@dataclass
class Garbage:
    """One thing to remove: ``kind`` is episode, environment or tree."""

    kind: str
    path: Path
    reason: str
    cutoff: float = 0.0  # an environment or tree used after this (epoch seconds) stays


def _in_use(path: Path, uses: list[Path]) -> bool:
    return any(use == path or path in use.parents for use in uses)


def _stale(kind: str, paths: list[Path], cutoff: float, uses: list[Path], now: float) -> list[Garbage]:
    return [Garbage(kind, p, f"unused for {_age(now - last_used(p))}", cutoff) for p in paths
            if last_used(p) < cutoff and not _in_use(p, uses)]


def environments() -> list[Path]:
    return [p for p in sorted(envs_root().iterdir())
            if p.name not in _NOT_ENVS and not p.name.startswith(".") and (p / "env.json").is_file()]


def trees() -> list[Path]:
    root = repos_root() / "trees"
    repos = [r for r in sorted(root.iterdir()) if r.is_dir() and not r.name.startswith(".")] if root.is_dir() else []
    return [t for r in repos for t in sorted(r.iterdir()) if t.is_dir() and not t.name.startswith(".")]


def collect(older_than: float | None = None, *, now: float | None = None) -> list[Garbage]:
    """What ``gc`` would remove now (see the module docstring)."""
    found = [Garbage("episode", p, why) for p, why in workdirs.orphans()]
    if older_than is None:
        return found
    now = time.time() if now is None else now
    cutoff = now - older_than
    for directory in sorted(workdirs.root().iterdir()):
        owner = workdirs.read_owner(directory)
        if owner and owner.get("keep") and workdirs.owner_state(owner) == "gone" \
                and owner.get("created", now) < cutoff:
            found.append(Garbage("episode", directory, f"kept episode, owner pid {owner.get('pid')} is gone"))
    uses = workdirs.live_uses()
    return (found + _stale("environment", environments(), cutoff, uses, now)
            + _stale("tree", trees(), cutoff, uses, now))


def remove(item: Garbage) -> bool:
    """Remove ``item``; False when it went meanwhile, or was used again since ``collect``."""
    if item.kind == "episode":
        return workdirs.remove(item.path)
    lock = (locked(item.path.name) if item.kind == "environment"
            else repos_locked(repos_root(), f"tree-{item.path.parent.name}-{item.path.name}"))
    with lock:
        if not item.path.exists() or last_used(item.path) >= item.cutoff \
                or _in_use(item.path, workdirs.live_uses()):
            return False
        remove_tree(item.path)
        forget(item.path)
    if item.kind == "environment":
        (envs_root() / "logs" / f"{item.path.name}.log").unlink(missing_ok=True)
    return True
