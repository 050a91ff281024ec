"""A pytest plugin that records which lines each test executes (runs INSIDE the sandbox).

Loaded with ``-p sweworld_covmap`` from a directory on ``PYTHONPATH``; needs ``coverage`` in the
environment and nothing from sweworld. One coverage session for the whole run, its dynamic
context switched to the pytest node id of the test around setup, call and teardown (what
pytest-cov's ``--cov-context=test`` does). At the end it writes ``$SWEWORLD_COVMAP_OUT`` as JSON::

    {"tests": [node ids], "files": {"pkg/mod.py": {"12": [0, 3], ...}}, "durations": {node id: s}}

where the file paths are relative to the current directory (the repository root), each line
maps to the indices of the tests that executed it (-1: run outside any test, at import or
collection time, so every test may depend on it), and each test has its setup + call + teardown
time (under coverage: an over-estimate). Lines run outside any test (imports,
collection) are recorded as -1.
"""

import json
import os

import coverage
import pytest

_state = {}


def pytest_configure(config):
    root = os.getcwd()
    cov = coverage.Coverage(data_file=None, source=[root], branch=False, config_file=False)
    cov.start()
    _state.update(cov=cov, root=root)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cov = _state.get("cov")
    if cov is not None:
        cov.switch_context(item.nodeid)
    yield
    if cov is not None:
        cov.switch_context("")


def pytest_runtest_logreport(report):
    durations = _state.setdefault("durations", {})
    durations[report.nodeid] = durations.get(report.nodeid, 0.0) + report.duration


def pytest_unconfigure(config):
    cov = _state.pop("cov", None)
    if cov is None:
        return
    cov.stop()
    data = cov.get_data()
    root = _state["root"] + os.sep
    tests, index, files = [], {}, {}
    for path in sorted(data.measured_files()):
        if not path.startswith(root):
            continue
        lines = {}
        for lineno, contexts in sorted(data.contexts_by_lineno(path).items()):
            ids = []
            for context in contexts:
                if not context:
                    ids.append(-1)
                    continue
                if context not in index:
                    index[context] = len(tests)
                    tests.append(context)
                ids.append(index[context])
            if ids:
                lines[str(lineno)] = sorted(ids)
        if lines:
            files[path[len(root):].replace(os.sep, "/")] = lines
    out = os.environ.get("SWEWORLD_COVMAP_OUT", "covmap.json")
    with open(out, "w", encoding="utf-8") as handle:
        json.dump({"tests": tests, "files": files, "durations": _state.get("durations", {})}, handle)
