"""SWE-Gym's installs that need root or a global tool, made to run in a virtualenv build.

pdm (pydantic). SWE-Gym's pydantic specs install pdm with pipx (``apt-get install pipx; pipx install pdm``), then run
``pdm add pre-commit; make install``; ``make install`` is ``pdm install --group :all`` followed by
``pre-commit install --install-hooks`` (git clones of every hook repository from GitHub). Here:

- pdm goes into a tool venv of its own (``PDM_VENV``, made with the environment's interpreter), not
  into the environment the tests run in, pinned to the release SWE-Gym's images of late 2024 had;
- ``make install`` (``pdm install --group :all``) becomes ``pdm sync`` of every group but ``docs``:
  the repository's own ``pdm.lock`` decides every version, into the active virtualenv (pdm uses
  ``$VIRTUAL_ENV``); ``pdm install`` would re-lock (pdm 2.19 no longer matches the hash of a lock
  written by an older pdm) and so resolve every group anew; ``docs`` has ``mike`` from GitHub, which
  no test uses;
- ``pdm add pre-commit`` and the hooks are left out: they re-lock the project and fetch linters the
  tests never run.

npm (bokeh). SWE-Gym's bokeh specs run ``cd bokehjs && npm install --location=global npm && npm ci``:
the global upgrade of npm writes to the system's prefix, so it is left out and the host's node and
npm run ``npm ci`` (bokehjs's own lock file) as the spec says.
"""

from __future__ import annotations

import re

from sweworld.envs import vcs
from sweworld.envs.shell import command_segments

PDM_VENV = "/tmp/sweworld-pdm"
PDM_PIN = "pdm==2.19.3"
"""The pdm of October 2024 (the era of SWE-Gym's images); it runs on Python 3.8 and reads lock files 4.x."""

_PIPX_PDM = re.compile(r"^\s*pipx\s+install\s+pdm\b")
_PIPX_OTHER = re.compile(r"^\s*pipx\s+ensurepath\s*$|^\s*which\s+python\s*$|^\s*python\s+--version\s*$")
_LOCAL_BIN_PATH = re.compile(r'^\s*export\s+PATH="\$HOME/\.local/bin:\$PATH"\s*$')


def uses_pdm(pre_install: list[str]) -> bool:
    return any(_PIPX_PDM.match(c) for c in pre_install)


#: ``-G NAME`` for each group the lock file's metadata lists, but ``default`` (always installed) and
#: ``docs`` (``--group :all`` would take docs' packages too).
_GROUPS_BUT_DOCS = ("$(sed -n 's/^groups = \\[\\(.*\\)\\]/\\1/p' pdm.lock | tr -d '\",' | tr ' ' '\\n' "
                    "| grep -v -x -e docs -e default -e '' | sed 's/^/-G /')")
_GLOBAL_NPM = re.compile(r"npm\s+install\s+(?:--location=global|-g|--global)\s+npm(?:@\S+)?\s*&&\s*")


def translate(pre_install: list[str], install: str | None, notes: list[str]) -> tuple[list[str], str | None]:
    """(pre_install, install) of a spec or a SWE-Rebench row, for a virtualenv build: global npm
    upgrades left out, pdm installed aside (``translate_pdm``), then the rewrites of the install's
    requirement files that ``SWEWORLD_VCS_FROM_INDEX`` asks for (``vcs.install_rewrites``)."""
    for command in pre_install:
        if _GLOBAL_NPM.search(command):
            notes.append("left out `npm install --location=global npm` (writes the system's prefix): the host's npm runs")
    pre, install = translate_pdm([_GLOBAL_NPM.sub("", c) for c in pre_install], install, notes)
    return pre + vcs.install_rewrites(install, notes), install


def translate_pdm(pre_install: list[str], install: str | None, notes: list[str]) -> tuple[list[str], str | None]:
    """(pre_install, install) of a spec that installs pdm with pipx, for a virtualenv build."""
    if not uses_pdm(pre_install):
        return pre_install, install
    pre = [c for c in pre_install if not (_PIPX_OTHER.match(c) or _LOCAL_BIN_PATH.match(c))]
    pre = [f'python -m venv {PDM_VENV} && {PDM_VENV}/bin/python -m pip install -q "{PDM_PIN}"'
           if _PIPX_PDM.match(c) else c for c in pre]
    notes.append(f"pipx install pdm -> {PDM_PIN} in a tool venv of its own ({PDM_VENV}), not in the test environment")
    if install is None:
        return pre, install
    kept = []
    for segment in command_segments(install):
        if _LOCAL_BIN_PATH.match(segment):
            continue  # pipx's bin directory: pdm is called by its path
        if segment.startswith("pdm add "):
            notes.append(f"dropped install step `{segment}` (pre-commit re-locks the project; the tests do not use it)")
        elif segment == "make install":
            kept.append(f"{PDM_VENV}/bin/pdm sync {_GROUPS_BUT_DOCS}")
            notes.append("make install -> pdm sync of every group of pdm.lock but docs (its Makefile's `pdm install "
                         "--group :all` from the lock as it is: pdm install re-locks a lock whose hash it no longer "
                         "matches, resolving anew; without `pre-commit install --install-hooks`, which clones hook "
                         "repositories from GitHub, and without the docs group, whose mike is a git requirement on GitHub)")
        else:
            kept.append(segment)
    return pre, "; ".join(kept) + ";"
