"""Deciding with the classifier: P(resolved) of a patch, and per-test statuses from it.

``decide(model, task, patch, read) -> (probability, features)``: an empty patch, one that does not
parse as a diff, one leaving a patched Python file that does not parse, or one that changes nothing
executable (comments, docs, tests only) is unresolved (0.0) without the classifier (its training runs hold too few of them to learn it); else the
classifier's probability. The behaviour features (a sandboxed probe) are computed only for a model
that weighs them.

``test_statuses(model, task, probability, features, test_ids)`` -> {test: (status, confidence)}:
a patch that breaks the syntax of a Python file makes every test an ERROR (confidence 0.9, as a
collection error does); else a FAIL_TO_PASS test PASSED when the patch is predicted resolved,
FAILED otherwise (confidence max(p, 1 - p)), every other test PASSED (confidence: the share of
PASS_TO_PASS tests that passed in the training runs, ``model.pass_rate``).
``pytest_log(statuses)``: those statuses as pytest's ``-rA`` summary lines, which the harness
parses and grades like a real run's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from sweworld.core.errors import WorldError
from sweworld.core.types import Task
from sweworld.surrogates.swr.features import features, uses_behaviour
from sweworld.surrogates.swr.model import SWRClassifier
from sweworld.surrogates.swr.patched import FileSource, tree_source
from sweworld.surrogates.swt.pytestlog import sep

BROKEN_CONFIDENCE = 0.9


def decide(model: SWRClassifier, task: Task, patch: str | None, read: FileSource, *,
           probe: Sequence[str] | None = None) -> tuple[float, dict[str, float]]:
    """See the module docstring; ``probe``: see ``features`` (needed by a model weighing the
    behaviour features, a ``WorldError`` without it)."""
    if uses_behaviour(model.features) and probe is None:
        raise WorldError("this SWR model weighs the behaviour features, whose calls run in an isolated "
                         "probe process, and none was given",
                         hint="pass probe=sweworld.sandbox.oneshot.probe_command(), or train the model "
                              "without the behaviour features (the shipped ones do not weigh them)")
    values = features(task, patch, read, probe=probe if uses_behaviour(model.features) else None)
    return (0.0 if ruled_out(values) else model.probability(values)), values


def ruled_out(values: dict[str, float]) -> bool:
    """Unresolved without the classifier: the features of an empty patch, one that does not parse as
    a diff, one leaving a Python file that does not parse, or one changing nothing executable."""
    return bool(values["empty"] or not values["parsed"] or not values["syntax_ok"] or not values.get("executable", 1))


def test_statuses(model: SWRClassifier, task: Task, probability: float, values: dict[str, float],
                  test_ids: Sequence[str]) -> dict[str, tuple[str, float]]:
    """See the module docstring."""
    if not values["empty"] and not values["syntax_ok"]:
        return {t: ("ERROR", BROKEN_CONFIDENCE) for t in test_ids}
    fixed = probability >= model.threshold
    failing = set(task.FAIL_TO_PASS)
    sure = max(probability, 1 - probability)
    return {t: (("PASSED" if fixed else "FAILED", sure) if t in failing else ("PASSED", model.pass_rate))
            for t in test_ids}


def pytest_log(statuses: dict[str, tuple[str, float]]) -> str:
    """pytest's short test summary for ``statuses`` (exit code: 1 when a test failed, else 0)."""
    lines = [f"{status} {test}" for test, (status, _) in statuses.items()]
    return sep("=", "short test summary info") + "\n" + "\n".join(lines) + "\n"


def repo_sources(repos_dir: str | Path | None = None) -> Callable[[Task], FileSource]:
    """A task's base files, one reader per (repo, commit): read through git's objects in the
    repository cache's mirror when the commit is there (no checkout: milliseconds, no disk), else
    from its base tree (``RepoStore.base_tree``: a synthesized commit is derived there); a
    repository that cannot be had reads as empty (every file absent)."""
    from sweworld.core.errors import SWEWorldError
    from sweworld.repos import RepoStore
    from sweworld.repos.blobs import GitBlobs
    from sweworld.surrogates.swt.learn import repo_trees

    store, trees = RepoStore(repos_dir=repos_dir), repo_trees(repos_dir)
    blobs: dict[str, GitBlobs | None] = {}
    readers: dict[tuple[str, str], FileSource] = {}

    def mirror_reader(task: Task) -> FileSource | None:
        if task.repo not in blobs:
            try:
                blobs[task.repo] = GitBlobs(store.mirror(task.repo, task.repo_source, instance_id=task.instance_id))
            except SWEWorldError:
                blobs[task.repo] = None
        found = blobs[task.repo]
        return found.source(task.base_commit) if found is not None and found.has(task.base_commit) else None

    def source(task: Task) -> FileSource:
        key = (task.repo, task.base_commit)
        if key not in readers:
            reader = mirror_reader(task)
            if reader is None:
                tree = trees(task)
                reader = tree_source(tree) if tree is not None else (lambda path: None)
            readers[key] = reader
        return readers[key]

    return source
