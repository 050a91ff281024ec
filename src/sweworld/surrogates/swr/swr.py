"""``EmbeddedSWR``: the reward model on the CPU, a drop-in for ``sweworld.world.swr.SWR``.

``EmbeddedSWR(model, config).evaluate(task, patch, executor)`` decides as ``SWR.evaluate`` does:

1. an empty patch is unresolved at once (no model), as in the real harness;
2. ``inspect_patch`` (one script through ``executor``) checks that the patch applies to the base
   commit; if not: unresolved, no model;
3. the base files the patch touches are read through ``executor``; ``predict.decide`` gives
   P(resolved) (``sim_probability``), resolved when it reaches the threshold;
4. per-test statuses (``predict.test_statuses``) are written as a pytest summary and graded by the
   harness's own code (``swr.grade_prediction``: ``harness.grade.grade`` with the repository's
   log parser; a log the parser cannot read is graded from the verdict), giving ``tests_status``.

So ``SimBackend(swr=EmbeddedSWR())`` writes the harness's layout (report.json, test_output.txt...)
with no GPU and no served model. ``EmbeddedSWR`` is also the embedded SWT's
``TestOutcomePredictor``: ``predict(task, diff, test_ids)`` reads the base files from the
repository cache (``predict.repo_sources``). ``EmbeddedSWRConfig.path`` None means the model shipped
in the package (``SHIPPED``, trained on the default dataset).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from sweworld.core.types import Task
from sweworld.surrogates.swr.model import SWRClassifier
from sweworld.surrogates.swr.patched import FileSource, executor_source
from sweworld.surrogates.swr.predict import decide, pytest_log, repo_sources, test_statuses
from sweworld.world.parse import SWROutput
from sweworld.world.swr import SimInstanceReport, grade_prediction
from sweworld.world.testfiles import Workspace, inspect_patch
from sweworld.world.traces import EvalTrace, StepTrace

SHIPPED = "swr-default.json"
"""The model for synthesized instances in ``sweworld/world/models_data/`` (``sweworld world train``
on default-dataset traces: the gold patch reverts an injected bug)."""
SHIPPED_REAL = "swr-real.json"
"""The model for real instances (a fix from a repository's history, with its test patch): trained
on real agent patches of six SWE-bench repositories with SWE-bench's Docker verdicts."""


def shipped_path(name: str = SHIPPED) -> Path:
    return Path(str(resources.files("sweworld.world").joinpath("models_data", name)))


def synthesized(task: Task) -> bool:
    """A synthesized single-bug instance: no test patch (the existing tests catch the injected bug,
    the gold patch reverts it), unlike a real fix, which comes with the tests it added."""
    return not task.test_patch.strip()


class EmbeddedSWRConfig(BaseModel):
    """Which classifier the embedded SWR uses and how it decides (another field is an error)."""

    model_config = ConfigDict(extra="forbid")
    path: str | None = Field(default=None, description="Model JSON (`sweworld world train --out`); None: the shipped one.")
    threshold: float | None = Field(default=None, gt=0, le=1, description="Resolved when P >= threshold (None: the model's).")
    repos_dir: str | None = Field(default=None, description="Existing clones, for `predict` (the repository cache).")
    style: str = Field(default="embedded", description="Named in logs where SWR names its prompt style.")
    k: int = Field(default=1, description="Samples (always 1: the classifier is deterministic).")


class EmbeddedSWR:
    """The embedded reward model (see the module docstring)."""

    def __init__(self, model: SWRClassifier | None = None, config: EmbeddedSWRConfig | None = None, *,
                 sources: Callable[[Task], FileSource] | None = None):
        self.config = config or EmbeddedSWRConfig()
        self.model = self._tuned(model or SWRClassifier.load(self.config.path or shipped_path()))
        self.real_model = self.model if model is not None or self.config.path else self._tuned(
            SWRClassifier.load(shipped_path(SHIPPED_REAL)))
        self._sources = sources

    def _tuned(self, model: SWRClassifier) -> SWRClassifier:
        return model if self.config.threshold is None else model.model_copy(update={"threshold": self.config.threshold})

    def model_for(self, task: Task) -> SWRClassifier:
        """The classifier of ``task``'s kind: the shipped models are one for synthesized instances
        and one for real ones; a given model (or ``config.path``) decides every task."""
        return self.model if synthesized(task) else self.real_model

    def sources(self, task: Task) -> FileSource:
        if self._sources is None:
            self._sources = repo_sources(self.config.repos_dir)
        return self._sources(task)

    def without(self, traces: Iterable[StepTrace | EvalTrace], repo: str) -> EmbeddedSWR:
        """An SWR fitted on the evaluations of ``traces`` outside ``repo`` (what it would predict
        for a repository it never saw: calibration's cross-validation folds); itself when those
        evaluations lack either outcome."""
        from sweworld.surrogates.swr.train import examples, fit_traces

        pairs = examples([t for t in traces if isinstance(t, EvalTrace) and t.repo != repo], self.sources)
        if len({t.resolved for t, _ in pairs}) < 2:
            return self
        return EmbeddedSWR(fit_traces(pairs), self.config.model_copy(update={"path": None, "threshold": None}),
                           sources=self.sources)

    def evaluate(self, task: Task, patch: str | None, executor: Workspace, k: int | None = None) -> SimInstanceReport:
        """The predicted report of ``patch`` on ``task``; ``executor`` holds the base commit (an episode,
        or a base tree read in place: ``testfiles.Inspects``)."""
        unresolved = SimInstanceReport.build(task.instance_id, patch).model_copy(
            update={"sim_probability": 0.0, "sim_samples": 1})
        if not patch or not patch.strip():
            return unresolved
        if inspect_patch(executor, task, patch, [], limit=1).applied is False:
            return unresolved
        return self.report(task, patch, executor_source(executor))

    def evaluate_context(self, task: Task, patch: str, context: object = None) -> SimInstanceReport:
        """The predicted report of ``patch`` with the base files from the repository cache (the
        context is not needed: the classifier reads the patch and the base tree)."""
        return self.report(task, patch, self.sources(task))

    def report(self, task: Task, patch: str, read: FileSource) -> SimInstanceReport:
        """Steps 3-4 of the module docstring (the patch known to apply)."""
        model = self.model_for(task)
        probability, values = decide(model, task, patch, read)
        resolved = probability >= model.threshold
        tests = [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]
        log = pytest_log(test_statuses(model, task, probability, values, tests))
        graded, source = grade_prediction(task, SWROutput(reasoning="", test_report=log, reward=int(resolved)))
        report = SimInstanceReport.build(task.instance_id, patch, patch_applied=True, graded=graded)
        return report.model_copy(update={
            "resolved": resolved, "sim_probability": probability, "sim_rewards": [int(resolved)],
            "sim_stated_rewards": [int(resolved)], "sim_graded_from": [source], "sim_test_report": log,
            "sim_samples": 1, "sim_attempts": 1})

    def predict(self, task: Task, diff: str, test_ids: Sequence[str]) -> dict[str, tuple[str, float]]:
        """``TestOutcomePredictor``: the status and confidence of each test with ``diff`` applied."""
        model = self.model_for(task)
        probability, values = decide(model, task, diff, self.sources(task))
        return test_statuses(model, task, probability, values, test_ids)


def create(options: dict) -> EmbeddedSWR:
    """The embedded SWR from its options (``EmbeddedSWRConfig``'s fields; an unknown one is an error):
    what ``WorldConfig.make_swr`` loads by name for ``kind="embedded"``."""
    return EmbeddedSWR(config=EmbeddedSWRConfig(**options))


def predictor(path: str | None = None) -> EmbeddedSWR:
    """The embedded SWR (the shipped model, or the one at ``path``) as the embedded SWT's predictor
    (``load_predictor("sweworld.surrogates.swr:predictor", path)``)."""
    return EmbeddedSWR(config=EmbeddedSWRConfig(path=path))
