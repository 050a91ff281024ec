"""Test selection: which tests execute which functions, from one coverage run per repository.

``collect_coverage`` runs the whole suite once inside an episode with the ``covplugin`` pytest
plugin (per-test coverage contexts) and returns a :class:`CoverageMap`. ``tests_for`` then names
the tests that execute any line of the functions a mutation touches: the only tests that can
notice the bug, so the only ones a candidate is screened on.
"""

from __future__ import annotations

import shlex
from importlib import resources

from sweworld.core.errors import SandboxError
from sweworld.core.executor import Executor
from sweworld.covmap import CoverageMap

PLUGIN_DIR = "/tmp/.sweworld-synth"
PLUGIN_NAME = "sweworld_covmap"
COVMAP_OUT = f"{PLUGIN_DIR}/covmap.json"


def plugin_source() -> str:
    return resources.files("sweworld.synth").joinpath("covplugin.py").read_text(encoding="utf-8")


def collect_coverage(sb: Executor, test_cmd: str, *, timeout: float) -> CoverageMap:
    """Run ``test_cmd`` (pytest) once in ``sb`` with per-test coverage contexts; the map it records."""
    sb.write_file(f"{PLUGIN_DIR}/{PLUGIN_NAME}.py", plugin_source())
    command = (f"cd {shlex.quote(sb.workdir)} && PYTHONPATH={PLUGIN_DIR}${{PYTHONPATH:+:$PYTHONPATH}} "
               f"SWEWORLD_COVMAP_OUT={COVMAP_OUT} {pytest_command(test_cmd)} -q -p {PLUGIN_NAME} "
               f"-p no:cacheprovider > {PLUGIN_DIR}/coverage.log 2>&1; echo exit=$?")
    result = sb.run(command, timeout=timeout)
    if result.timed_out:
        raise SandboxError(f"the coverage run timed out after {timeout:.0f}s",
                           hint="raise --timeout, or pass a faster --test-cmd")
    try:
        return CoverageMap.from_json(sb.read_file(COVMAP_OUT))
    except (OSError, SandboxError, ValueError, KeyError) as exc:
        log = sb.run(f"tail -n 30 {PLUGIN_DIR}/coverage.log", timeout=30).output
        raise SandboxError(f"the coverage run wrote no map ({result.output.strip()}): {exc}\n{log}",
                           hint="is `coverage` installed in the environment? (synth adds it to packages)") from exc


def pytest_command(test_cmd: str) -> str:
    """``test_cmd`` as ``python -m pytest ...`` (keeps its options, drops ``-rA``)."""
    words = shlex.split(test_cmd)
    if words and words[0] == "pytest":
        words = ["python", "-m", "pytest", *words[1:]]
    if words[:3] != ["python", "-m", "pytest"]:
        raise ValueError(f"synthesis needs a pytest test command, got {test_cmd!r}")
    return shlex.join([w for w in words if w != "-rA"])
