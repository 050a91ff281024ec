"""The embedded SWT behind the ``WorldModel`` interface: ``create_model("embedded", config)``.

SWT hands a world model rendered messages, not its context; ``context_from_messages`` reads the
context back from either shipped prompt style (``sweworld``: task line, diff, executed files,
command; ``swe-world``: problem statement, command, files, diff, gold patch; the instance is then
found by its problem statement). The reply is SWT's JSON with ``confidence`` (which ``parse_swt``
reads and hybrid routing uses) and ``source``; the latest ``SWTPrediction`` is kept in ``last`` and
every one is counted by source in ``counts``. ``predict_context(context)`` skips the prompt
altogether, for a caller that holds the context (the SWT hook proposed in docs/world.md).

Config (``create_model("embedded", {...})``): ``model`` (a saved ``EmbeddedSWT``), and/or
``traces`` (trace files or run directories to fit on), ``dataset`` (a dataset name or path whose
rows become known tasks), ``predictor`` (``"module:factory"`` of a ``TestOutcomePredictor``) and
``predictor_model`` (a model file its factory takes), ``calibrate`` (confidences calibrated on the
traces, leaving one repository out at a time),
``replay`` (exact replay on, default true), ``import_graph`` (build each traced repository's import
graph from its cached base tree).
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sweworld.core.errors import WorldError
from sweworld.core.registry import refuse_unknown
from sweworld.surrogates.swt.model import EmbeddedSWT
from sweworld.surrogates.swt.predictor import load_predictor
from sweworld.surrogates.swt.structured import SWTPrediction
from sweworld.world.context import FileText, SWTContext, TaskInfo
from sweworld.world.parse import SWTOutput
from sweworld.world.replay import FENCE, message_text

_TASK = re.compile(r"^Repository: (.+) \(instance (\S+), base commit ([^,)]+)(?:, version ([^)]*))?\)$", re.M)
_FILE = re.compile(r'<file path="(.*?)"( truncated="middle cut")?>\n(.*?)\n</file>', re.S)
_SWE_FILE = re.compile(r"^--- Content of `(.*?)` \(executed by the command\)( \[middle cut\])? ---\n\n", re.M)
_EMPTY = {"(no changes)", "No changes yet.", "Not available.", "(none)"}


def _fence_after(text: str, heading: str) -> str | None:
    """The body of the code fence right after ``heading`` (a line of its own), if any."""
    at = text.find(heading + "\n")
    if at < 0:
        return None
    match = FENCE.match(text, at + len(heading) + 1)
    if not match:
        return None
    body = match.group(3)
    return "" if body.strip() in _EMPTY else body


def _between(text: str, start: str, end: str) -> str:
    a = text.find(start)
    if a < 0:
        return ""
    a += len(start)
    b = text.find(end, a)
    return text[a:b if b >= 0 else len(text)]


def _command(body: str | None) -> str:
    return (body or "")[:-1] if (body or "").endswith("\n") else body or ""


def _sweworld(user: str) -> SWTContext:
    task = _TASK.search(user)
    repo, instance, commit, version = task.groups() if task else ("?", "?", "?", "")
    problem = _between(user, "## Issue\n", "\n\n## ")
    workdir = (re.findall(r"^## Command \(run in (.+)\)$", user, re.M) or ["/testbed"])[-1]
    files_text = _between(user, "## Code the command executes\n", "\n\n## Command (run in")
    files = [FileText(path=m.group(1), content=m.group(3), truncated=bool(m.group(2))) for m in _FILE.finditer(files_text)]
    gold = _fence_after(user, "## Reference fix")
    lists = [json.loads(_between(user, f"## {name}\n", "\n\n##") or "[]") for name in
             ("Tests the reference fix makes pass (FAIL_TO_PASS)", "Tests that must keep passing (PASS_TO_PASS)")]
    return SWTContext(task=TaskInfo(instance_id=instance, repo=repo, base_commit=commit, version=version or "",
                                    problem_statement=problem), workdir=workdir,
                      command=_command(_fence_after(user, f"## Command (run in {workdir})")),
                      diff=_fence_after(user, "## Agent's diff against the base commit") or "", files=files,
                      privileged=gold is not None, gold_patch=gold or "", fail_to_pass=lists[0], pass_to_pass=lists[1])


def _swe_world(user: str) -> SWTContext:
    problem = _between(user, "### 2. Problem Description\n", "\n\n### 3. Human Discussion (Hints)")
    files_text = _between(user, "### 5. Content of Code to be Executed\n", "\n### 6. Original Content")
    heads = list(_SWE_FILE.finditer(files_text))
    files = [FileText(path=m.group(1), truncated=bool(m.group(2)),
                      content=files_text[m.end():heads[k + 1].start() if k + 1 < len(heads) else len(files_text)]
                      .removesuffix("\n").removesuffix("\n")) for k, m in enumerate(heads)]
    gold = _fence_after(user, "### 8. Gold Standard Patch (For Your Reference)") or ""
    return SWTContext(task=TaskInfo(instance_id="?", repo="?", base_commit="?", problem_statement=problem),
                      workdir="/testbed", command=_command(_fence_after(user, "### 4. Command to Simulate")),
                      diff=_fence_after(user, "### 7. Agent's Current Code Modifications (Patch)") or "",
                      files=files, gold_patch=gold)


def context_from_messages(messages: Sequence[Mapping[str, Any]]) -> SWTContext:
    """SWT's context as far as the rendered ``messages`` show it (see the module docstring)."""
    user = next((message_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
    if user.startswith("### 1. Initial Analysis of the Problem"):
        return _swe_world(user)
    if user.startswith("## Task\n"):
        return _sweworld(user)
    raise WorldError("the embedded SWT cannot read this prompt: neither shipped SWT prompt style",
                     hint="the embedded model answers SWT prompts rendered by sweworld.world.templates")


class EmbeddedWorldModel:
    """``WorldModel`` over an ``EmbeddedSWT`` (see the module docstring); thread-safe."""

    def __init__(self, swt: EmbeddedSWT):
        self.swt = swt
        self.last: SWTPrediction | None = None
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def predict_context(self, context: SWTContext) -> SWTOutput:
        """The prediction for a structured context (no prompt to read back; ``confidence`` set)."""
        return self._predict(context).output

    def predict_messages(self, messages: Sequence[Mapping[str, Any]]) -> SWTPrediction:
        return self._predict(context_from_messages(messages))

    def _predict(self, context: SWTContext) -> SWTPrediction:
        facts = self.swt.facts_for(context)
        if facts is not None and context.task.instance_id == "?":
            task = facts.task
            context.task = TaskInfo(instance_id=task["instance_id"], repo=task["repo"],
                                    base_commit=task["base_commit"], problem_statement=context.task.problem_statement)
        prediction = self.swt.predict(context)
        with self._lock:
            self.last = prediction
            self.counts[prediction.source] += 1
        return prediction

    def complete(self, messages: list[dict], n: int = 1, *, attempt: int = 0) -> list[str]:
        got = self.predict_messages(messages)
        reply = json.dumps({**got.output.model_dump(), "source": got.source}, ensure_ascii=False)
        return [reply] * n


CONFIG_KEYS = ("model", "traces", "dataset", "predictor", "predictor_model", "calibrate", "replay", "import_graph")
"""The keys of ``create``'s config (the module docstring)."""


def create(config: Mapping[str, Any]) -> EmbeddedWorldModel:
    """The registry factory of ``embedded`` (see the module docstring for the keys; another key is
    a ``ConfigError``)."""
    from sweworld.surrogates.swt.learn import learn, repo_trees
    from sweworld.world.traces import load_traces

    refuse_unknown("the embedded world model", config, CONFIG_KEYS)

    options = {"predictor": load_predictor(config.get("predictor"), config.get("predictor_model")),
               "replay": bool(config.get("replay", True))}
    swt = EmbeddedSWT.load(config["model"], **options) if config.get("model") else EmbeddedSWT(**options)
    traces = config.get("traces") or []
    if traces:
        loaded = load_traces(*([traces] if isinstance(traces, (str, Path)) else traces))
        trees = repo_trees() if config.get("import_graph") else None
        learn(loaded, data=swt.data, trees=trees)
        if config.get("calibrate"):
            from sweworld.surrogates.swt.calibrate import calibration
            swt.calibration = calibration(loaded, trees=trees, predictor=options["predictor"])
    if config.get("dataset"):
        from sweworld.datasets import is_shipped, path_of
        from sweworld.tasks.load import load_tasks

        source = str(config["dataset"])
        swt.add_tasks(load_tasks(path_of(source) if is_shipped(source) else source))
    return EmbeddedWorldModel(swt)
