"""A validated candidate as a SWE-bench instance, and its problem statement.

``base_commit`` is the release with the bug (derived: release + reversed fix, committed
deterministically, so any machine rebuilds the same sha from the PyPI release); ``patch`` is the
FIX; the environment fields are the release's, so every instance of a release shares one
environment with the run that validated it.
"""

from __future__ import annotations

import difflib
import hashlib
import re

from sweworld.core.types import Task
from sweworld.envs import EnvBuilder
from sweworld.models.base import ChatModel
from sweworld.repos.derive import derive_commit, derived_message
from sweworld.synth import Mutation, fix_patch
from sweworld.synth.check import Outcome, StatementWriter
from sweworld.synth.release import Release

REPRODUCE = "python -m pytest"
_INTERPRETER_PATH = re.compile(r"/[^\s'\"<>()]*?/lib/(python\d+\.\d+)/")


def scrub_paths(text: str) -> str:
    """Paths of the interpreter's library (``/home/u/.pyenv/.../lib/python3.11/operator.py`` in an
    assertion's module repr) as ``<python3.11>/operator.py``: the machine's layout is not the task's."""
    return _INTERPRETER_PATH.sub(r"<\1>/", text)


def changed_lines(mutation: Mutation) -> list[str]:
    """The original and mutated text of every changed line, stripped (never to be shown)."""
    diff = difflib.ndiff(mutation.original.splitlines(), mutation.mutated.splitlines())
    lines = {line[2:].strip() for line in diff if line[:2] in ("- ", "+ ")}
    return sorted(line for line in lines if line)


def template_statement(release: Release, mutation: Mutation, failing: list[str], output: str) -> tuple[str, str]:
    """The templated problem statement, written from the failing tests' output."""
    from sweworld.synth.statement import failure_details, write_statement

    details = failure_details(output, failing)
    text = write_statement(details, repo=release.task.repo, test_cmd=REPRODUCE, forbidden=changed_lines(mutation))
    return text, "template"


def model_statement_writer(model: ChatModel) -> StatementWriter:
    """A statement writer that asks ``model`` (falls back to the template, see ``statement``)."""
    from sweworld.synth.statement import failure_details, model_statement

    def write(release: Release, mutation: Mutation, failing: list[str], output: str) -> tuple[str, str]:
        result = model_statement(model, failure_details(output, failing), repo=release.task.repo,
                                 test_cmd=REPRODUCE, forbidden=changed_lines(mutation))
        return result.text, result.source

    return write


def instance_id(release: Release, mutation: Mutation) -> str:
    digest = hashlib.sha1(f"{release.task.base_commit}:{mutation.key}".encode()).hexdigest()[:8]
    return f"{release.slug}__{mutation.kind}__{digest}"


def make_instance(release: Release, mutation: Mutation, outcome: Outcome, builder: EnvBuilder) -> Task:
    """The SWE-bench row of a validated candidate (derives and stores its buggy commit)."""
    base = release.task
    iid = instance_id(release, mutation)
    fix = fix_patch(mutation)
    mirror = builder.repos.mirror(base.repo, base.repo_source, instance_id=iid)
    commit = derive_commit(mirror, base.base_commit, fix, derived_message(iid))
    return Task.model_validate({
        "instance_id": iid, "repo": base.repo, "base_commit": commit, "patch": fix, "test_patch": "",
        "problem_statement": scrub_paths(outcome.problem_statement), "hints_text": "", "created_at": "",
        "version": base.version, "environment_setup_commit": base.base_commit,
        "FAIL_TO_PASS": outcome.fail_to_pass, "PASS_TO_PASS": outcome.pass_to_pass,
        "python": release.layer.env.recipe.python, "packages": base.packages, "pip_packages": base.pip_packages,
        "test_cmd": base.test_cmd, "repo_source": base.repo_source, "method": mutation.kind,
    })
