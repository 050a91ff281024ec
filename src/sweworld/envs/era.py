"""The packaging tools an environment is seeded with, pinned to the era of SWE-bench's images.

SWE-bench's Docker images create a conda environment per task (``conda create python=X.Y``), which
brings the pip, setuptools and wheel of the time the images were built (2024). Newer tools change
what a task's own install and tests see: setuptools >= 81 has no ``pkg_resources`` (pytest 5.x
and old sphinx import it), pip >= 25 no longer falls back to ``setup.py develop`` for a build
backend without PEP 660 hooks (pylint 2.x pins ``setuptools~=62.6`` in its build requirements),
and a PEP 660 editable install does not put the tree on ``sys.path`` the way ``develop`` did.
Recipes from swebench specs are therefore seeded with these pins; a spec's own ``pip_packages``
(e.g. ``setuptools==68.0.0``) are installed afterwards and win. The requirements a spec leaves
unpinned are resolved as of ``SWEBENCH_ERA_DATE`` for the same reason.

The pins per Python version are the newest releases of the 2024 line that support it (pip 24.2,
setuptools 75.1.0 and wheel 0.44.0 from 3.8 on; older Pythons get the last releases that still
support them).
"""

from __future__ import annotations

SWEBENCH_ERA_DATE = "2024-10-01"
"""Unpinned requirements of swebench specs resolve as of this date (uv ``--exclude-newer``): after
the pins below, before docutils 0.22 (2025) dropped ``docutils.utils.roman`` that sphinx 3.x imports."""

SWEBENCH_ERA_SEEDS: dict[tuple[int, int], tuple[str, ...]] = {
    (3, 6): ("pip==21.3.1", "setuptools==59.6.0", "wheel==0.37.1"),
    (3, 7): ("pip==24.0", "setuptools==68.0.0", "wheel==0.42.0"),
    (3, 8): ("pip==24.2", "setuptools==75.1.0", "wheel==0.44.0"),
}
"""Minimum Python version -> seed requirements (the entry with the largest key <= the version)."""


SWEBENCH_ERA_CONSTRAINTS: dict[tuple[str, str], tuple[str, ...]] = {
    ("sphinx-doc/sphinx", "3."): ("docutils<0.21",),
}
"""(repository, release-line prefix) -> constraints, measured against SWE-bench's Docker verdicts.

sphinx 3.x: with docutils 0.21 (2024-04) the gold patches of sphinx-8273 and sphinx-8474 fail tests
that pass in SWE-bench's images (the man page writer's literal blocks became ``.EX``/``.EE``, and
footnote references changed in the HTML writer); with docutils 0.20.1 they pass. The cutoff date
alone cannot express it: the specs pin tools of mid 2024 (tox 4.16.0) in the same environments."""


def era_constraints(repo: str, version: str | None) -> list[str]:
    """The constraints of (repo, release line); [] when none is known."""
    if not version:
        return []
    return [c for (name, prefix), constraints in SWEBENCH_ERA_CONSTRAINTS.items()
            if name == repo and version.startswith(prefix) for c in constraints]


def era_seeds(python: str) -> list[str]:
    """The seed requirements for a venv of Python ``python`` ('X.Y'); [] below the table."""
    try:
        version = tuple(int(part) for part in python.split(".")[:2])
    except ValueError:
        return []
    chosen: tuple[str, ...] = ()
    for minimum, seeds in sorted(SWEBENCH_ERA_SEEDS.items()):
        if version >= minimum:
            chosen = seeds
    return list(chosen)
