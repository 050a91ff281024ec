"""``tox --current-env`` in a virtualenv: the lines that keep its interpreter inside the venv.

On the floor (standard library only): the environments write these lines into an instance's
install layer, so that any script running the test command finds them (inspect_evals' eval script,
a Harbor task's ``test.sh``), and the harness's own eval script writes them again before the tests.
"""

from __future__ import annotations

import re
import shlex

_TOX_ENV = re.compile(r"(?:^|\s)-e\s*([A-Za-z0-9_.,-]+)")


def tox_current_env_shims(test_cmd: str, python: str, venv: str = "/sweworld/venv") -> list[str]:
    """Lines that give ``tox --current-env`` a working interpreter in ``.tox/<env>/bin``.

    tox-current-env links ``.tox/<env>/bin/python`` to ``sys.executable``; a virtualenv's python is
    itself a link to the base interpreter, so Python started through the second link finds no
    ``pyvenv.cfg`` and runs outside the venv (``No module named pytest``). In SWE-bench's conda
    environments the link ends at a real prefix. The plugin keeps a ``python`` that already
    exists, so a small script that execs the venv's python is put there first.
    """
    if not re.match(r"\s*tox\b", test_cmd) or "--current-env" not in test_cmd:
        return []
    names = [name for match in _TOX_ENV.finditer(test_cmd) for name in match.group(1).split(",")]
    lines = []
    for name in names:
        bindir = shlex.quote(f".tox/{name}/bin")
        lines.append(f"mkdir -p {bindir}")
        for suffix in ("", python.split(".")[0], python):
            target = f"{bindir}/python{suffix}"
            lines.append(f"printf '#!/bin/sh\\nexec {venv}/bin/python \"$@\"\\n' > {target} && chmod +x {target}")
    return lines


__all__ = ["tox_current_env_shims"]
