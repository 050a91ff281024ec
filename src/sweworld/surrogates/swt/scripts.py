"""A path of the embedded SWT for scripts of the workspace that run tests by id.

Agents write reproduction scripts; many name the failing tests (``pytest.main(["tests/t.py::f"])``,
a list of node ids the script imports and calls, as the explorer's does). For
``python FILE.py`` (``testcmd.parse_script_command``) whose source names test ids of the task
(string constants equal to a known test id, or of the form ``path.py::name``), the exit code is
1 when one of those tests is predicted to fail and 0 otherwise, with each test's status from the
same per-test machinery as test commands (``structured.statuses``; the script itself is left out
of the workspace's diff: it changes no test's outcome). The printed output is that of the nearest
recorded step with the same exit code (``recorded``), piped through the command's filters.

Confidence: the least confident test, times ``SCRIPT`` (a script can fail for its own reasons),
0.7 when the script gets arguments, 0.6 for a filter that was not understood. Scripts that name
no test return None: the caller falls back to the nearest recorded step.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from sweworld.pyast import parse
from sweworld.surrogates.swt.affected import without_scratch
from sweworld.surrogates.swt.facts import InstanceFacts, RepoFacts
from sweworld.surrogates.swt.fulltext import context_texts
from sweworld.surrogates.swt.predictor import TestOutcomePredictor
from sweworld.surrogates.swt.shellfilters import apply_filters
from sweworld.surrogates.swt.structured import SWTPrediction, statuses
from sweworld.surrogates.swt.testcmd import TestRun
from sweworld.world.context import SWTContext
from sweworld.world.parse import SWTOutput

if TYPE_CHECKING:
    from sweworld.surrogates.swr.patched import FileSource

SCRIPT = 0.95
_NODE_ID = re.compile(r"^[\w./-]+\.py::[\w\[\]./:-]+$")


def named_tests(source: str, known: set[str]) -> list[str]:
    """The test ids ``source`` names as string constants, in order (none when it does not parse)."""
    try:
        tree = parse(source)
    except (SyntaxError, ValueError):
        return []
    found = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    return list(dict.fromkeys(t for t in found if t in known or _NODE_ID.match(t)))


def predict_script(run: TestRun, context: SWTContext, facts: InstanceFacts, repo: RepoFacts,
                   predictor: TestOutcomePredictor, recorded: Callable[[int], SWTPrediction],
                   read: FileSource | None = None) -> SWTPrediction | None:
    """The outcome of running the script ``run`` names (module docstring), or None; ``read``: the
    task's base files, to read the test files the script names (``fulltext``)."""
    script = run.targets[0]
    tests = named_tests(context_texts(context).get(script, ""), set(facts.known_tests()))
    if not tests:
        return None
    texts = context_texts(context, read, also=[t.split("::", 1)[0] for t in tests if "::" in t])
    state = context.model_copy(update={"diff": without_scratch(context.diff, also=[script])})
    rows = statuses(tests, set(), state, facts, repo, predictor, texts)
    code = 1 if any(status in ("FAILED", "ERROR") for _, status, _, _ in rows) else 0
    like = recorded(code)
    stdout, confidence = like.output.stdout, min(c for _, _, c, _ in rows) * SCRIPT * (1.0 if run.exact else 0.7)
    if run.filters:
        stdout, code, understood = apply_filters(stdout, run.filters, code)
        confidence *= 1.0 if understood else 0.6
    detail = {"tests": len(rows), "failed": sum(s in ("FAILED", "ERROR") for _, s, _, _ in rows),
              "why": {why: sum(r[3] == why for r in rows) for why in {r[3] for r in rows}}, **like.detail}
    return SWTPrediction(SWTOutput(stdout=stdout, stderr="", exit_code=code), round(confidence, 4), "script", detail)
