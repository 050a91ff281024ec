"""Datasets shipped inside the package.

``smoke.jsonl``: real PyPI releases at their reproducible sdist commits (see ``sweworld.repos.pypi``),
used by ``make demo`` until the synthesized default dataset lands.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def default_path() -> Path:
    """The embedded default dataset."""
    return Path(str(resources.files(__name__).joinpath("smoke.jsonl")))


def available() -> dict[str, Path]:
    root = Path(str(resources.files(__name__)))
    return {p.stem: p for p in sorted(root.glob("*.jsonl"))}
