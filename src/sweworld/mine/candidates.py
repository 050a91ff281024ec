"""Steps of a history -> candidate instances (SWE-bench rows without FAIL_TO_PASS yet).

For each step that ``rules.skip_reason`` lets through: the diff split into ``patch`` and
``test_patch``, ``base_commit`` = the first parent, ``version`` read from the tree and snapped as
swebench does (``mine.version``), the statement from the message, and the environment: instances
of one version share one ``environment_setup_commit`` (the newest base commit of that version among
the candidates, as in SWE-bench's rows) and one recipe (``mine.recipes``). Steps that an excluded
dataset already holds are dropped first (``mine.exclude``).

The language of the repository (``envs.lang``) is detected once, from the newest step's tree: its
path rules screen the steps and split the diffs, its ``package.json`` (or the like) gives the
release line, and it infers the recipe of another language than Python (``language`` and an
``install_config`` on the row, as SWE-rebench V2's rows; Python's is ``mine.recipes``'). A version
whose recipe cannot be inferred (no test runner found) drops its steps with the reason.

Provenance written on every row: ``mined_from`` (the fix commit), ``version_read`` (what the tree
said, and where), ``recipe_source`` (``swebench``, ``swegym`` or ``inferred``: which table's recipe
builds it), ``recipe_spec_version`` (the version key of that table whose spec is used; null for an
inferred recipe, or when the table has no spec for it and the default recipe builds it) and
``recipe_specs`` (the table itself: ``swebench==<package version>`` or SWE-Gym's published specs).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sweworld.core.errors import EnvBuildError
from sweworld.core.types import Task
from sweworld.envs import lang
from sweworld.envs.lang import Language
from sweworld.mine.envgroups import group_name, lock_state
from sweworld.mine.exclude import Excluded, exclusion_reason
from sweworld.mine.history import Commit, step_diff, step_message
from sweworld.mine.quality import quality_reason
from sweworld.mine.recipes import Choice, infer, provenance, version_for
from sweworld.mine.rules import Limits, skip_reason
from sweworld.mine.split import split_diff
from sweworld.mine.statement import message_statement, pull_number
from sweworld.mine.version import read_version


@dataclass
class Candidate:
    commit: Commit
    task: Task
    message: str = ""
    """The step's whole message (a merge's and those of the commits it brings)."""


@dataclass
class Screen:
    """The candidates of a history and the steps dropped before validation, by reason."""

    steps: int = 0
    candidates: list[Candidate] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    """sha -> why the step is not a candidate."""

    @property
    def dropped(self) -> Counter:
        """The skipped steps counted by reason."""
        return Counter(self.skipped.values())
    versions: dict[str, Choice] = field(default_factory=dict)
    language: str = "python"
    """The repository's language (``envs.lang``), detected once from the newest step's tree."""


def _when(commit: Commit) -> datetime:
    return datetime.fromisoformat(commit.committed)


def instance_id(repo: str, commit: Commit, taken: set[str]) -> str:
    """``owner__name-<pull request>`` as SWE-bench names them, ``owner__name-<sha>`` without one."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", repo.replace("/", "__"))
    number = pull_number(commit.message)
    out = f"{stem}-{number}" if number else f"{stem}-{commit.sha[:10]}"
    if out in taken:
        out = f"{stem}-{commit.sha[:10]}"
    taken.add(out)
    return out


def screen(commits: list[Commit], *, mirror: Path, repo: str, source: str, limits: Limits,
           tree_of: Callable[[str], Path], available_pythons: list[str],
           on_step: Callable[[], None] | None = None, excluded: list[Excluded] | None = None,
           model_statements: bool = False, language: Language | None = None) -> Screen:
    """Candidates of ``commits`` (newest first); ``tree_of(sha)`` checks out a commit (the newest, whose
    tree says the repository's language when ``language`` is not given, and the environment commits
    of recipes inferred from the tree); steps ``excluded`` datasets hold are dropped; so are those a
    reviewer would not keep (``mine.quality``; ``model_statements``: a model writes them)."""
    out = Screen(steps=len(commits))
    if language is None:
        language = lang.detect(tree_of(commits[0].sha)) if commits else lang.get("python")
    out.language = language.name
    taken: set[str] = set()
    drafts: list[tuple[Commit, str, dict[str, Any]]] = []
    for commit in commits:
        if on_step:
            on_step()
        reason = skip_reason(commit, limits, language.paths)
        if reason is None and excluded:
            reason = exclusion_reason(excluded, base_commit=commit.first_parent, fix_commit=commit.sha,
                                      instance_id=instance_id(repo, commit, set(taken)))
        if reason is None:
            patch, test_patch = split_diff(step_diff(mirror, commit), what=commit.sha, is_test=language.paths.is_test)
            if not patch.strip() or not test_patch.strip():
                reason = "no source change" if not patch.strip() else "no test change"
        if reason is None:  # mine/quality.py: formatting, lint/style only, a statement that says nothing
            reason = quality_reason(commit, patch, test_patch, step_message(mirror, commit), mirror=mirror,
                                    model_statements=model_statements)
        if reason is not None:
            out.skipped[commit.sha] = reason
            continue
        drafts.append(_draft(commit, mirror, repo, source, language, patch, test_patch, taken))
    groups = {commit.sha: group_name(row["version"], lock_state(mirror, row["base_commit"]))
              for commit, _message, row in drafts}
    failed = _environments(out, drafts, groups, language, tree_of, available_pythons)
    for commit, message, row in drafts:
        if groups[commit.sha] in failed:
            out.skipped[commit.sha] = failed[groups[commit.sha]]
            continue
        choice = out.versions[groups[commit.sha]]
        row.update(choice.fields)
        if choice.notes:
            row["recipe_notes"] = choice.notes
        out.candidates.append(Candidate(commit=commit, task=Task.model_validate(row), message=message))
    return out


def _draft(commit: Commit, mirror: Path, repo: str, source: str, language: Language, patch: str, test_patch: str,
           taken: set[str]) -> tuple[Commit, str, dict[str, Any]]:
    """(commit, its whole message, its row without the environment) of a candidate step."""
    reader = language.read_version or read_version
    read, where = reader(mirror, commit.first_parent)
    kind, version = version_for(repo, read)
    message = step_message(mirror, commit)
    statement = message_statement(message)
    return commit, message, {
        "instance_id": instance_id(repo, commit, taken), "repo": repo, "base_commit": commit.first_parent,
        "patch": patch, "test_patch": test_patch, "problem_statement": statement.text,
        "created_at": commit.committed, "version": version, "repo_source": source,
        "mined_from": commit.sha, "statement_source": statement.source,
        "references": list(statement.references), "version_read": f"{read} ({where})", **provenance(repo, kind, version)}


def _environments(out: Screen, drafts: list[tuple[Commit, str, dict[str, Any]]], groups: dict[str, str],
                  language: Language, tree_of: Callable[[str], Path], available_pythons: list[str]) -> dict[str, str]:
    """One environment per group (``out.versions``: a version, split where its lock files differ,
    ``mine.envgroups``): the newest step of a group gives its environment commit; group -> why its
    steps are dropped, for a language that cannot infer one (no test runner, an unreadable package.json)."""
    newest: dict[str, tuple[Commit, dict[str, Any]]] = {}
    for commit, _message, row in drafts:
        group = groups[commit.sha]
        if group not in newest or _when(commit) > _when(newest[group][0]):
            newest[group] = (commit, row)
    failed: dict[str, str] = {}
    for version, (commit, row) in newest.items():
        choice = out.versions[version] = Choice(kind=row["recipe_source"], version=row["version"])
        choice.fields["environment_setup_commit"] = row["base_commit"]
        if choice.kind != "inferred":
            continue
        try:
            if language.infer is None:
                fields, notes = infer(tree_of(row["base_commit"]), commit.committed, available_pythons)
            else:
                fields, notes = language.infer(tree_of(row["base_commit"]), commit.committed)
        except EnvBuildError as exc:
            failed[version] = f"environment: {exc.message.splitlines()[0]}"
            choice.notes = [f"{failed[version]} (at {row['base_commit'][:12]}; {exc.hint or ''})"]
            continue
        choice.fields.update(fields)
        choice.notes = notes
    return failed
