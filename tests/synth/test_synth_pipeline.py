"""The synthesis pipeline on a real release (cachetools 5.5.0 from PyPI, its own 215 tests).

Coverage-based selection, each verdict of a candidate (validated, uncovered, passes, timeout,
broken, flaky), the naive mode, the end-to-end run (deterministic, resumable) and the harness
validating a synthesized instance.
"""

from __future__ import annotations

import json
import shutil

import pytest

from sweworld.backends.real import RealBackend
from sweworld.covmap import function_spans
from sweworld.envs import EnvBuilder
from sweworld.runs.validate import validate_instance
from sweworld.synth import Mutation
from sweworld.synth.check import check_candidate, covering_tests, test_budgets
from sweworld.synth.instance import changed_lines
from sweworld.synth.pipeline import SynthOptions, synthesize
from sweworld.synth.release import ReleaseSpec, prepare
from sweworld.synth.runs import CandidateRun

pytestmark = [pytest.mark.bwrap, pytest.mark.network, pytest.mark.slow, pytest.mark.xdist_group("synth-cachetools")]

REPO = "pypi:cachetools==5.5.0"
MODULE = "src/cachetools/__init__.py"
GETITEM = "        try:\n            return self.__data[key]\n        except KeyError:\n            return self.__missing__(key)\n"
FLAKY = ("        import os as _os\n        if not _os.path.exists('/tmp/flaky-marker'):\n"
         "            open('/tmp/flaky-marker', 'w').close()\n            raise RuntimeError('first call fails')\n")


@pytest.fixture(scope="module")
def release():
    return prepare(ReleaseSpec(repo=REPO), EnvBuilder())


def hand(release, old: str, new: str, function: str = "Cache.__getitem__") -> Mutation:
    original = release.files[MODULE]
    start = original.index(old)
    return Mutation(kind="hand", path=MODULE, function=function, lineno=original.count("\n", 0, start) + 1,
                    description="hand-made", original=original, mutated=original.replace(old, new, 1),
                    edits=((start, start + len(old), new),))


def test_release_baseline_and_coverage(release):
    assert len(release.baseline) == 215 and not release.flaky
    assert MODULE in release.files and not any("tests/" in p for p in release.files)
    tests = release.coverage.tests_for(MODULE, release.files[MODULE], ["Cache.__getitem__"])
    assert "tests/test_cache.py::CacheTest::test_missing" in tests and len(tests) > 100
    assert set(tests) <= release.baseline
    ttl = release.coverage.tests_for(MODULE, release.files[MODULE], ["TTLCache.expire"])
    assert ttl and all(t.startswith(("tests/test_ttl.py", "tests/test_tlru.py", "tests/test_func.py",
                                     "tests/test_cached")) for t in ttl), ttl


def test_validated_candidate(release):
    bug = hand(release, "            return self.__missing__(key)\n", "            return None\n")
    outcome = check_candidate(release, bug, 0, timeout=60,
                              statement=lambda r, m, f, o: ("statement", "test"))
    assert outcome.status == "validated", outcome
    assert outcome.screened and outcome.suite_run and outcome.problem_statement == "statement"
    assert "tests/test_cache.py::CacheTest::test_missing" in outcome.fail_to_pass
    assert set(outcome.fail_to_pass) | set(outcome.pass_to_pass) == release.baseline
    assert not set(outcome.fail_to_pass) & set(outcome.pass_to_pass)
    naive = check_candidate(release, bug, 0, timeout=60, naive=True)
    assert naive.status == "validated" and not naive.screened
    assert naive.fail_to_pass == outcome.fail_to_pass


@pytest.mark.parametrize(("case", "old", "new", "status"), [
    ("equivalent", GETITEM, "        pass\n" + GETITEM, "passes"),
    ("hangs", GETITEM, "        while True:\n            pass\n" + GETITEM, "timeout"),
    ("import error", "class Cache(collections.abc.MutableMapping):",
     "raise RuntimeError('boom')\n\n\nclass Cache(collections.abc.MutableMapping):", "broken"),
])
def test_discarded_candidates(release, case, old, new, status):
    outcome = check_candidate(release, hand(release, old, new), 0, timeout=8)
    assert outcome.status == status, (case, outcome)
    assert not outcome.fail_to_pass


def test_a_hang_is_cut_by_the_per_test_budgets(release):
    hang = hand(release, GETITEM, "        while True:\n            pass\n" + GETITEM)
    budgets = test_budgets(release)
    assert set(budgets) == release.baseline and min(budgets.values()) >= 1.5
    with CandidateRun(release.task, release.layer, timeout=120) as run:
        run.set_budgets(budgets, 120)
        outcome = check_candidate(release, hang, 0, timeout=120, naive=True, run=run)
        assert outcome.status == "timeout", outcome
        fine = check_candidate(release, hand(release, "            return self.__missing__(key)\n",
                                             "            return None\n"), 1, timeout=120, run=run)
        assert fine.status == "validated", fine  # the episode was restored and still works


def test_uncovered_candidate_is_never_run(release):
    text = release.files[MODULE]
    assert all(covering_tests(release, hand(release, "", "", name)) for name in function_spans(text))
    dead = "\n\ndef _never_called(x):\n    y = x + 1\n    return y\n"
    bug = hand(release, "\n\nclass Cache(", dead + "\n\nclass Cache(", function="_never_called")
    assert "_never_called" in function_spans(bug.mutated)
    outcome = check_candidate(release, bug, 0, timeout=30)
    assert outcome.status == "uncovered" and not outcome.screened and not outcome.suite_run


def test_flaky_failure_is_dropped(release):
    outcome = check_candidate(release, hand(release, GETITEM, FLAKY + GETITEM), 0, timeout=60, naive=True)
    assert outcome.status == "flaky", outcome
    assert outcome.flaky and not outcome.fail_to_pass


def test_changed_lines_are_the_bug(release):
    bug = hand(release, "            return self.__missing__(key)\n", "            return None\n")
    assert changed_lines(bug) == ["return None", "return self.__missing__(key)"]


def test_synthesize_end_to_end_deterministic_resumable_and_valid(tmp_path):
    spec = ReleaseSpec(repo=REPO)
    options = SynthOptions(max_instances=3, seed=7, workers=2, combine_share=0.34)
    first = synthesize(spec, options, work=tmp_path / "work")
    assert len(first.instances) == 3
    methods = [t.model_extra["method"] for t in first.instances]
    assert "combine" in methods, methods
    lines = (tmp_path / "work" / "outcomes.jsonl").read_text().splitlines()
    assert len(lines) >= first.stats.candidates
    again = synthesize(spec, options, work=tmp_path / "work")  # every outcome comes from the cache
    assert [t.model_dump() for t in again.instances] == [t.model_dump() for t in first.instances]
    # nothing decided is checked again; at most the look-ahead window beyond the stopping point is new
    assert len(lines) <= len((tmp_path / "work" / "outcomes.jsonl").read_text().splitlines()) <= len(lines) + 4
    stats = first.stats.to_dict()
    assert stats["validated"] == 3 and stats["validated_per_core_hour"] > 0
    assert json.dumps(stats)
    task = first.instances[0]
    assert task.patch.startswith("diff --git") and task.environment_setup_commit != task.base_commit
    assert task.problem_statement and not any(line in task.problem_statement
                                              for line in changed_lines(first.mutations[_key(first, task)]))
    layer = EnvBuilder().instance(task)  # derived from the release's layer: no install, same venv
    shutil.rmtree(layer.path)  # built by an earlier run of this test? derive it again
    layer = EnvBuilder().instance(task)
    meta = json.loads((layer.path / "meta.json").read_text())
    assert meta["derived_from"] == first.release.layer.key and meta["changed"] == [task.patch.split()[2][2:]]
    verdict = validate_instance(task, RealBackend(EnvBuilder()), timeout=300)
    assert verdict.kept, verdict.reason
    assert verdict.fail_to_pass == sorted(task.FAIL_TO_PASS)
    assert set(verdict.pass_to_pass) == set(task.PASS_TO_PASS)


def _key(result, task):
    from sweworld.synth.instance import instance_id

    return next(k for k, m in result.mutations.items() if instance_id(result.release, m) == task.instance_id)


def test_cli_synth_with_an_issue_model(tmp_path):
    from typer.testing import CliRunner

    from chatserver import ChatServer
    from sweworld.cli.app import app
    from sweworld.tasks import load_tasks

    issue = "Caches misbehave\n\nSome cache tests fail since the last change; see the failing tests."
    with ChatServer(default=issue) as server:
        out = tmp_path / "synth.jsonl"
        result = CliRunner().invoke(app, ["synth", "--repo", REPO, "--max", "2", "--methods", "remove_statement",
                                          "--seed", "3", "--out", str(out), "--issue-model-url", server.url,
                                          "--issue-model", "writer"])
        assert result.exit_code == 0, result.output + result.stderr
        assert server.requests and all(r["model"] == "writer" for r in server.requests)
        prompt = json.dumps(server.requests[0]["messages"])
    tasks = list(load_tasks(out))
    assert len(tasks) == 2 and all(t.model_extra["method"] == "remove_statement" for t in tasks)
    assert all(t.problem_statement.strip() == issue for t in tasks)
    assert "tests/test_" in prompt  # the failing tests were sent to the model
    stats = json.loads((tmp_path / "synth.stats.json").read_text())
    assert stats["validated"] == 2 and set(stats["yields"]) == {"remove_statement"}
    assert "remove_statement" in result.output and "instances ->" in result.output
