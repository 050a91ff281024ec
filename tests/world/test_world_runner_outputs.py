"""Real runners' output, rendered back by the embedded SWT (issue 20).

``data/runner_outputs/NAME.txt`` is what a runner printed on a real project (``NAME.json``: the
command, run in /testbed, its exit code, the Python, what was run): pytest 9 with plugins, plain
unittest (Python 3.11 and 3.9), Django 4.2's ``tests/runtests.py --verbosity 2``, sympy 1.12's
``bin/test -C --verbose``, ``tox -e py`` and ``nox -s tests`` running pytest. The embedded SWT knows
the per-test statuses of the recorded run (and the names the runner prints: unittest's docstring
lines) and predicts the command's output; swebench's parser for that runner reads the same
statuses from the prediction as from the real output, the exit code is the real one, and the text
is close (``similarity``), with what it learned of the repository as well: ``self``, the recorded
run itself (its header, failure text, Django's preamble, the wrapper's lines); ``others``, the
other recordings of the same project only; ``cold``, nothing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from swebench.harness.log_parsers.python import parse_log_django, parse_log_pytest, parse_log_sympy

from sweworld.core.types import Task
from sweworld.surrogates.swt.facts import EmbeddedData
from sweworld.surrogates.swt.learn import learn_run
from sweworld.surrogates.swt.model import EmbeddedSWT
from sweworld.surrogates.swt.testcmd import parse_test_command
from sweworld.world.context import FileText, SWTContext
from sweworld.world.metrics import similarity

DATA = Path(__file__).parent / "data" / "runner_outputs"
PARSERS = {"pytest": parse_log_pytest, "django": parse_log_django, "sympy": parse_log_sympy}
TASK = Task(instance_id="recorded__run-1", repo="recorded/run", base_commit="0" * 40)
MODES = ("self", "others", "cold")

# recording, project, swebench parser, the earlier verbose run naming its tests, least similarity by mode
TABLE = [
    ("pytest_verbose", "cachetools", "pytest", None, (0.99, 0.99, 0.8)),
    ("pytest_quiet", "cachetools", "pytest", "pytest_verbose", (0.99, 0.99, 0.38)),
    ("pytest_rA_tb_short", "cachetools", "pytest", "pytest_verbose", (0.99, 0.9, 0.88)),
    ("pytest_swebench", "cachetools", "pytest", "pytest_verbose", (0.99, 0.99, 0.98)),
    ("unittest_verbose", "cachetools-unittest", "django", None, (0.99, 0.99, 0.87)),
    ("unittest_dots", "cachetools-unittest", "django", "unittest_verbose", (0.99, 0.99, 0.54)),
    ("unittest_verbose_py39", "cachetools-unittest-3.9", "django", None, (0.99, None, 0.87)),
    ("django_verbosity2", "django", "django", None, (0.99, 0.9, 0.87)),
    ("django_verbosity2_text", "django", "django", None, (0.99, 0.8, 0.87)),
    ("django_dots", "django", "django", "django_verbosity2", (0.99, 0.93, 0.75)),
    ("sympy_bin_test", "sympy", "sympy", None, (0.99, 0.92, 0.72)),
    ("sympy_bin_test_one_file", "sympy", "sympy", None, (0.99, 0.92, 0.69)),
    ("sympy_bin_test_dots", "sympy", "sympy", "sympy_bin_test", (0.99, 0.92, 0.6)),
    ("tox_py", "tinycalc", "pytest", "tox_py_verbose", (0.98, 0.98, 0.72)),
    ("tox_py_verbose", "tinycalc", "pytest", None, (0.98, 0.97, 0.77)),
    ("tox_py_posargs", "tinycalc", "pytest", "tox_py_verbose", (0.98, 0.98, 0.68)),
    ("nox_tests", "tinycalc", "pytest", "tox_py_verbose", (0.99, 0.97, 0.89)),
]


def recording(name: str) -> tuple[dict, str]:
    return json.loads((DATA / f"{name}.json").read_text()), (DATA / f"{name}.txt").read_text()


def _learn(data: EmbeddedData, names: list[str], state: str | None) -> None:
    for name in names:
        meta, text = recording(name)
        run = parse_test_command(meta["command"], meta["workdir"])
        learn_run(data, data.instances[TASK.instance_id], run, text, state)


def predicted(name: str, mode: str):
    """The embedded SWT's prediction of recording ``name``'s command, knowing its tests' statuses and
    what ``mode`` says of the repository (module docstring)."""
    row = next(r for r in TABLE if r[0] == name)
    runs = [row[3], name] if row[3] else [name]
    scratch = EmbeddedData()
    scratch.add_task(TASK)
    _learn(scratch, runs, "")
    tests = scratch.instances[TASK.instance_id]
    data = EmbeddedData()
    facts = data.add_task(TASK)
    facts.states, facts.descriptions, facts.reasons = tests.states, tests.descriptions, tests.reasons
    if mode == "self":
        _learn(data, runs, None)
    elif mode == "others":
        _learn(data, [r[0] for r in TABLE if r[1] == row[1] and r[0] != name], None)
    meta, _ = recording(name)
    run = parse_test_command(meta["command"], meta["workdir"])
    paths = [t.split("::")[0] for t in run.targets]
    files = [FileText(path=path, content="") for path in paths if path.endswith(".py")]  # there, text unknown
    task = {"instance_id": TASK.instance_id, "repo": TASK.repo, "base_commit": TASK.base_commit}
    context = SWTContext(task=task, workdir=meta["workdir"], command=meta["command"], files=files)
    return EmbeddedSWT(data, replay=False).predict(context)


@pytest.mark.parametrize(("name", "parser", "least"), [(r[0], r[2], r[4]) for r in TABLE],
                         ids=[r[0] for r in TABLE])
def test_a_recorded_run_is_rendered_back_as_the_runner_prints_it(name, parser, least):
    meta, real = recording(name)
    statuses = PARSERS[parser](real, None)
    assert statuses and any(s in ("FAILED", "ERROR") for s in statuses.values())
    for mode, bound in zip(MODES, least, strict=True):
        if bound is None:
            continue
        got = predicted(name, mode)
        text = got.output.stdout + got.output.stderr
        assert (got.source, got.output.exit_code) == ("tests", meta["exit_code"])
        assert PARSERS[parser](text, None) == statuses
        figure = similarity(text, real)
        print(f"\n{name} ({mode}): similarity {figure:.3f}")
        assert figure >= bound


ABSOLUTE = re.compile(r"(?:^|[\s\"'(=:])/([A-Za-z_][\w.-]*)", re.M)
"""The first component of each absolute path a recording prints."""


def test_every_recording_is_in_the_table_and_names_no_machine_path():
    names = {path.stem for path in DATA.glob("*.json")}
    assert names == {row[0] for row in TABLE} and names == {path.stem for path in DATA.glob("*.txt")}
    for name in names:
        meta, text = recording(name)
        assert set(meta) == {"command", "workdir", "exit_code", "python", "recorded"}
        roots = {m.group(1) for m in ABSOLUTE.finditer(text)}
        assert roots <= {"testbed", "opt"}, roots  # only the sandbox's /testbed and /opt/venv
