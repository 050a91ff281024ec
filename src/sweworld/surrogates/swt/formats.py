"""A test command's output in its runner's format, written from per-test outcomes.

``render(run, outcomes, facts, repo, ...)`` picks the writer from the command (``testcmd``):
pytest's (``pytestfmt``: the repository's recorded header, failure sections and summary lines, a
failure section from the test's source when none was recorded), unittest's and Django's
(``unittestfmt``, with ``djangofmt``'s lines around the report), sympy's ``bin/test``
(``sympyfmt``); a tox or nox command gets the wrapper's lines around the pytest run it makes
(``wrappers``). It returns the output and the failed tests whose failure text was not recorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sweworld.surrogates.swt.djangofmt import epilogue, preamble
from sweworld.surrogates.swt.facts import InstanceFacts, RepoFacts
from sweworld.surrogates.swt.pytestfmt import RenderFacts, render_pytest
from sweworld.surrogates.swt.pytestlog import failure_key
from sweworld.surrogates.swt.selection import Selection
from sweworld.surrogates.swt.sympyfmt import render_sympy
from sweworld.surrogates.swt.testcmd import TestRun
from sweworld.surrogates.swt.testsource import failure_body
from sweworld.surrogates.swt.unittestfmt import render_unittest, unittest_name
from sweworld.surrogates.swt.wrappers import wrap


@dataclass
class Rendered:
    stdout: str
    stderr: str
    exit_code: int
    unrecorded: list[str] = field(default_factory=list)
    """Failed tests written without a recorded failure section."""


def _message(facts: InstanceFacts, test_id: str) -> str:
    """The exception a recorded summary line names for ``test_id`` (not when pytest trimmed it)."""
    message = facts.summaries.get(test_id, "").partition(" - ")[2]
    return message if message and not message.endswith("...") else "AssertionError"


def _cachedir(run: TestRun) -> str:
    """The ``cachedir:`` header line pytest writes (``-v``, or under tox: the cache is the tox env's)."""
    if not run.cache or run.verbosity < 0:
        return ""
    if run.wrapper is not None and run.wrapper.tool == "tox":
        return f"cachedir: .tox/{run.wrapper.env}/.pytest_cache"
    return "cachedir: .pytest_cache" if run.verbosity >= 1 else ""


def _pytest(run: TestRun, outcomes: Sequence[tuple[str, str]], facts: InstanceFacts, repo: RepoFacts,
            texts: Mapping[str, str], workdir: str, duration: float, chosen: Selection) -> Rendered:
    render = RenderFacts(header=repo.header, failures=facts.failures, summaries=facts.summaries,
                         fallback=lambda t, tb: failure_body(t.split("::")[0], texts.get(t.split("::")[0]), t,
                                                             tb, workdir, _message(facts, t)),
                         duration=duration, python=repo.python, warnings=repo.warnings,
                         warning_count=repo.warning_count, cachedir=_cachedir(run),
                         reasons=facts.reasons)
    stdout, stderr, code = render_pytest(run, outcomes, render, deselected=chosen.deselected,
                                         missing=chosen.missing, not_found=chosen.not_found, root=workdir,
                                         texts=texts)
    failed = [t for t, s in outcomes if s in ("FAILED", "ERROR")]
    return Rendered(stdout, stderr, code, [t for t in failed if failure_key(t, run.tb) not in facts.failures])


def render(run: TestRun, outcomes: Sequence[tuple[str, str]], facts: InstanceFacts, repo: RepoFacts, *,
           texts: Mapping[str, str], workdir: str, duration: float, chosen: Selection) -> Rendered:
    """The output of ``run`` for ``outcomes`` ((test, status) in run order); see the module docstring."""
    if run.runner == "pytest":
        got = _pytest(run, outcomes, facts, repo, texts, workdir, duration, chosen)
        if run.wrapper is not None:
            command = ["pytest", *run.wrapper.posargs]
            got.stdout, got.stderr, got.exit_code = wrap(
                run.wrapper, command, got.stdout, got.stderr, got.exit_code, merged=run.merged,
                duration=duration, learned=repo.wrapped.get(run.wrapper.tool, []))
        return got
    bad = [t for t, s in outcomes if s in ("FAILED", "ERROR")]
    if run.runner == "sympy":
        stdout, stderr, code = render_sympy(run, outcomes, facts.failures, header=repo.sympy_header,
                                            duration=duration)
        return Rendered(stdout, stderr, code, [t for t in bad if t not in facts.failures])
    named = [(unittest_name(t) or t, s) for t, s in outcomes]
    django = run.runner == "django"
    stdout, stderr, code = render_unittest(
        run, named, facts.failures, duration=duration, descriptions=facts.descriptions, reasons=facts.reasons,
        preamble=preamble(run, repo.preamble, len(named)) if django else (),
        epilogue=epilogue(run, repo.epilogue) if django else ())
    unrecorded = [n for n, s in named if s in ("FAILED", "ERROR") and n not in facts.failures]
    return Rendered(stdout, stderr, code, unrecorded)
