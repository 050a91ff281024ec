"""SWR, the reward model: the predicted evaluation of a patch, in the harness's report type.

``SWR(model, config).evaluate(task, patch, executor, k)``:

1. an empty patch is unresolved at once (no model call), as in the real harness;
2. one script through ``executor`` (``sweworld.world.testfiles``) checks that the patch applies to
   the base commit (if not: unresolved, no call) and reads the test files after the test patch;
3. the context (``swr_context``) is rendered and ``k`` replies are sampled (invalid ones asked
   again up to ``max_attempts`` rounds), each parsed into reasoning + ``{test_report, reward}``;
4. each ``test_report`` is graded by the harness's own code (``harness.grade.grade``, with the
   repository's ``swebench`` log parser), exactly as the output of a real test run between its
   markers; its exit code is the one the reply gives, else 1 when the parsed report holds a
   FAILED/ERROR test and 0 otherwise. A report that names none of the listed tests (prose instead of
   a runner's log) is graded from the stated reward when ``trust_reward_when_unparsed`` (every listed
   test PASSED when 1, FAILED when 0; ``sim_graded_from`` says "reward"), else as it is (all missing);
5. the per-sample rewards (1 = graded resolved) give ``sim_probability`` (their mean); the instance
   is resolved when it reaches ``threshold``; the report's ``tests_status`` is that of the first
   sample agreeing with the verdict (its text in ``sim_test_report``). The model's own 0/1 answers
   are kept in ``sim_stated_rewards``.

No valid reply at all: a report with ``error`` and ``error_kind="infra"`` (the simulator failed,
not the patch), so a rerun evaluates it again.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from sweworld.core.types import Task
from sweworld.harness.grade import (
    FAILED_STATUSES,
    GradeResult,
    TestRun,
    gold_results,
    grade,
    listed_tests,
    parse_status,
)
from sweworld.harness.report import InstanceReport
from sweworld.world.context import ContextLimits, SWRContext, swr_context, test_file_paths
from sweworld.world.parse import SWROutput, parse_swr, sample
from sweworld.world.templates import render
from sweworld.world.testfiles import Workspace, inspect_patch
from sweworld.world.worldmodels import WorldModel


class SimInstanceReport(InstanceReport):
    """An ``InstanceReport`` predicted by SWR; the ``sim_*`` fields are sweworld extras (never in
    report.json, always in sweworld_report.json)."""

    simulated: bool = Field(default=True, description="Predicted by the reward model, not run.")
    sim_probability: float | None = Field(default=None, description="Mean per-sample reward (P(resolved)).")
    sim_rewards: list[int] = Field(default_factory=list, description="Per valid sample: 1 when its report grades resolved.")
    sim_stated_rewards: list[int] = Field(default_factory=list, description="Per valid sample: the reward the model wrote.")
    sim_graded_from: list[str] = Field(default_factory=list, description="Per valid sample: 'report' or 'reward'.")
    sim_test_report: str = Field(default="", description="The test report of the sample whose grade the report carries.")
    sim_samples: int = Field(default=0, description="Samples asked for (k).")
    sim_invalid: int = Field(default=0, description="Samples without a valid reply after every attempt.")
    sim_attempts: int = Field(default=0, description="Rounds of requests made.")


class SWRConfig(BaseModel):
    """How SWR builds its prompt, samples and decides."""

    style: str = Field(default="sweworld", description="Prompt style (sweworld.world.templates.styles()).")
    k: int = Field(default=1, ge=1, description="Samples per evaluation (SWE-World's test-time scaling: 3).")
    max_attempts: int = Field(default=3, ge=1, description="Rounds of requests before a sample counts as invalid.")
    threshold: float = Field(default=0.5, gt=0, le=1, description="Resolved when sim_probability >= threshold.")
    trust_reward_when_unparsed: bool = Field(default=True, description=(
        "Grade a report naming none of the listed tests from the stated reward (else: all missing, unresolved)."))
    limits: ContextLimits = Field(default_factory=ContextLimits, description="Bounds on the context.")


def _from_reward(task: Task, reward: int) -> GradeResult:
    """The grade of a run in which every listed test has the status the stated reward implies."""
    from swebench.harness.constants import EvalType, ResolvedStatus
    from swebench.harness.grading import get_eval_tests_report, get_resolution_status

    status_map = {name: "PASSED" if reward else "FAILED" for name in listed_tests(task)}
    tests_status = get_eval_tests_report(status_map, gold_results(task), calculate_to_fail=True,
                                         eval_type=EvalType.PASS_AND_FAIL)
    resolution = get_resolution_status(tests_status)
    return GradeResult(status_map=status_map, parsed_status_map={}, crashed=False, exit_code=0 if reward else 1,
                       tests_status=tests_status, resolution=resolution,
                       resolved=resolution == ResolvedStatus.FULL.value)


def grade_prediction(task: Task, output: SWROutput, *, trust_reward_when_unparsed: bool = True
                     ) -> tuple[GradeResult, str]:
    """(grade, "report" | "reward") of one SWR reply (see the module docstring, step 4)."""
    exit_code = output.exit_code
    if exit_code is None:
        parsed = parse_status(task, output.test_report)
        exit_code = 1 if any(status in FAILED_STATUSES for status in parsed.values()) else 0
    run = TestRun(test_output=output.test_report, exit_code=exit_code, markers_found=True, test_patch_applied=True)
    graded = grade(task, run)
    listed = listed_tests(task)
    if trust_reward_when_unparsed and listed and not any(name in graded.parsed_status_map for name in listed):
        return _from_reward(task, output.reward), "reward"
    return graded, "report"


def patch_context(task: Task, patch: str, executor: Workspace, limits: ContextLimits) -> tuple[SWRContext, bool | None]:
    """SWR's context of ``patch`` (the test files after the test patch, read in ``executor``, left
    as it was) and whether the patch applies to the base commit: what ``SWR.evaluate`` asks about and
    what traces record."""
    view = inspect_patch(executor, task, patch, test_file_paths(task)[:limits.max_files], limit=limits.file_chars)
    return swr_context(task, patch, executor, limits=limits, test_files=view.files), view.applied


class SWR:
    """The reward model (see the module docstring)."""

    def __init__(self, model: WorldModel, config: SWRConfig | None = None):
        self.model = model
        self.config = config or SWRConfig()
        render(self.config.style, "swr", _EMPTY)  # an unknown style fails here

    def messages(self, context: SWRContext) -> list[dict[str, str]]:
        return render(self.config.style, "swr", context)

    def evaluate(self, task: Task, patch: str | None, executor: Workspace, k: int | None = None) -> SimInstanceReport:
        """The predicted report of ``patch`` on ``task``; ``executor`` holds the repository (an episode,
        or a base tree read in place: ``testfiles.Inspects``)."""
        k = k or self.config.k
        if not patch or not patch.strip():
            return SimInstanceReport.build(task.instance_id, patch).model_copy(update={"sim_probability": 0.0})
        context, applies = patch_context(task, patch, executor, self.config.limits)
        if applies is False:
            return SimInstanceReport.build(task.instance_id, patch).model_copy(update={"sim_probability": 0.0})
        return self.evaluate_messages(task, patch, self.messages(context), k)

    def evaluate_context(self, task: Task, patch: str, context: SWRContext) -> SimInstanceReport:
        """The predicted report for a context already built (fidelity scoring of recorded traces)."""
        return self.evaluate_messages(task, patch, self.messages(context), self.config.k)

    def evaluate_messages(self, task: Task, patch: str, messages: list[dict[str, str]], k: int) -> SimInstanceReport:
        """Steps 3-5 of the module docstring for ``messages`` (already rendered)."""
        got = sample(self.model, messages, k, parse_swr, max_attempts=self.config.max_attempts)
        extras = {"sim_samples": k, "sim_invalid": k - len(got.valid), "sim_attempts": got.attempts}
        if not got.valid:
            error = next((e for e in got.errors if e), "no reply")
            report = SimInstanceReport.build(task.instance_id, patch, patch_applied=True, error=(
                f"the reward model gave no valid reply in {got.attempts} attempt(s): {error}"))
            return report.model_copy(update=extras)
        grades = [grade_prediction(task, o, trust_reward_when_unparsed=self.config.trust_reward_when_unparsed)
                  for o in got.valid]
        rewards = [int(g.resolved) for g, _ in grades]
        probability = sum(rewards) / len(rewards)
        resolved = probability >= self.config.threshold
        index = next(i for i, (g, _) in enumerate(grades) if g.resolved == resolved)  # exists: 0 < threshold <= 1
        report = SimInstanceReport.build(task.instance_id, patch, patch_applied=True, graded=grades[index][0])
        return report.model_copy(update={**extras, "resolved": resolved, "sim_probability": probability,
                                         "sim_test_report": got.valid[index].test_report,
                                         "sim_rewards": rewards, "sim_stated_rewards": [o.reward for o in got.valid],
                                         "sim_graded_from": [source for _, source in grades]})


_EMPTY = SWRContext(task={"instance_id": "-", "repo": "-", "base_commit": "-"}, test_command="true", patch="")
