"""Pure parts of the synthesis pipeline: combinations, coverage maps, stats, CLI errors."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from sweworld.cli.app import app
from sweworld.covmap import CoverageMap, function_spans
from sweworld.synth import mutations_for_file
from sweworld.synth.check import Outcome
from sweworld.synth.coverage import pytest_command
from sweworld.synth.pipeline import combinations
from sweworld.synth.stats import SynthStats

MODULE = '''
def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


class Box:
    def area(self, w, h):
        s = w * h
        return s + 0

    def grow(self, w, k):
        def inner(v):
            return v * k
        return inner(w)
'''


def test_function_spans_and_coverage_map():
    spans = function_spans(MODULE)
    assert spans["clamp"] == [(3, 7)]
    assert spans["Box.area"] == [(12, 13)] and spans["Box.grow.inner"] == [(17, 17)]
    cov = CoverageMap(tests=["t::a", "t::b", "t::c"], files={"m.py": {3: [0], 4: [0], 12: [1], 17: [2]}})
    assert cov.tests_for("m.py", MODULE, ["clamp"]) == ["t::a"]
    assert cov.tests_for("m.py", MODULE, ["Box.grow", "clamp"]) == ["t::a", "t::c"]
    assert cov.tests_for("other.py", MODULE, ["clamp"]) == []
    assert CoverageMap.from_json(cov.to_json()) == cov
    twice = "def f(a):\n    if a:\n        def g():\n            return 1\n    else:\n        def g():\n            return 2\n    return g\n"
    assert function_spans(twice)["f.g"] == [(4, 4), (7, 7)]
    both = CoverageMap(tests=["t::a", "t::b"], files={"m.py": {4: [0], 7: [1]}})
    assert both.tests_for("m.py", twice, ["f.g"], {7}) == ["t::b"]  # the definition holding the change
    assert both.tests_for("m.py", twice, ["f.g"]) == ["t::a", "t::b"]
    at_import = CoverageMap(tests=["t::a", "t::b"], files={"m.py": {3: [-1, 0]}}, durations={"t::a": 0.5})
    assert at_import.tests_for("m.py", MODULE, ["clamp"]) == ["t::a", "t::b"]  # run when the module loads
    assert at_import.seconds(["t::a", "t::b"]) == 0.5


def test_interpreter_paths_are_scrubbed_from_statements():
    from sweworld.synth.instance import scrub_paths

    text = ("where <class 'operator.itemgetter'> = getattr(<module 'operator' from "
            "'/home/u/.pyenv/versions/3.11.7/lib/python3.11/operator.py'>, 'itemgetter')\n"
            "tests/test_x.py:12: in test_y")
    assert scrub_paths(text) == ("where <class 'operator.itemgetter'> = getattr(<module 'operator' from "
                                 "'<python3.11>/operator.py'>, 'itemgetter')\ntests/test_x.py:12: in test_y")


def test_pytest_command():
    assert pytest_command("pytest -rA") == "python -m pytest"
    assert pytest_command("pytest -rA -x tests") == "python -m pytest -x tests"
    with pytest.raises(ValueError, match="pytest"):
        pytest_command("tox -e py")


def test_combinations_are_deterministic_and_of_one_file():
    validated = mutations_for_file("m.py", MODULE)[:6]
    assert len(validated) >= 4
    first = combinations(validated, seed=3, limit=3)
    assert [m.key for m in first] == [m.key for m in combinations(validated, seed=3, limit=3)]
    assert first and all(m.kind == "combine" and 2 <= len(m.components) <= 3 for m in first)
    assert combinations(validated[:1], seed=3, limit=3) == []


def test_stats_yield_per_method():
    stats = SynthStats(repo="r", naive=False, workers=2, seed=0)
    stats.start()
    for method, status in [("a", "validated"), ("a", "passes"), ("b", "uncovered"), ("a", "validated")]:
        stats.add(Outcome(index=0, key="k", method=method, path="p", status=status, screened=status != "uncovered"))
    stats.finish()
    data = stats.to_dict()
    assert data["validated"] == 2 and data["candidates"] == 4 and data["screen_runs"] == 3
    assert data["yields"]["a"] == {"candidates": 3, "validated": 2, "yield": 0.667, "passes": 1}
    assert data["yields"]["b"]["yield"] == 0.0


def test_cli_synth_bad_input_is_one_clear_error(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["synth", "--repo", str(tmp_path / "missing"), "--out", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 2 and "error:" in result.stderr and "does not exist" in result.stderr
    result = runner.invoke(app, ["synth", "--repo", "pypi:x==1", "--methods", "flip_comparison,bogus",
                                 "--out", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 2 and "bogus" in result.stderr and "flip_comparison" in result.stderr
    assert not (tmp_path / "o.jsonl").exists()
