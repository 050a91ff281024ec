"""Datasets shipped inside the package.

``demo.jsonl`` (the default): real bugs in real PyPI releases with the release's own tests (their
buggy base commits are derived deterministically from the release and the fix, see
``sweworld.repos.derive``), then the releases themselves as smoke tasks. ``smoke.jsonl``: the
releases only. The synthesized default dataset of issue [synth] replaces ``demo.jsonl``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def default_path() -> Path:
    """The embedded default dataset."""
    return Path(str(resources.files(__name__).joinpath("demo.jsonl")))


def available() -> dict[str, Path]:
    root = Path(str(resources.files(__name__)))
    return {p.stem: p for p in sorted(root.glob("*.jsonl"))}
