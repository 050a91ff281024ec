"""Per-instance reports and the run summary, in SWE-bench's layout.

``InstanceReport.to_swebench()`` is exactly what SWE-bench writes to ``report.json``
(``{instance_id: {patch_is_None, patch_exists, patch_successfully_applied, resolved,
tests_status}}``, tests_status only when the tests were graded). sweworld's extras (resolution,
exit code, crash verdict, apply method, infrastructure error) live beside it, never inside it:
``write_report`` writes ``report.json`` and ``sweworld_report.json`` next to it. Both are written
with sorted keys, so grading the same output again gives byte-identical files.

``summarize`` follows ``swebench.harness.reporting.make_run_report`` (4.1.0) key by key:

- ``incomplete_ids``: dataset instances WITHOUT a prediction (SWE-bench's naming);
- ``empty_patch_ids``: predictions whose patch is ``""`` or None (no test run, never "completed");
- ``completed_ids``: instances with a report; each is resolved or unresolved;
- ``error_ids``: a non-empty prediction without a report, or (sweworld) any prediction, an empty one
  too, with a report that records an infrastructure failure (its base tree or environment could not
  be made: SWE-bench writes no report for those, so they are not completed); ``infra_error_ids``
  lists the latter apart, exactly the reports whose ``error_kind`` is ``infra``. Model failures
  (patch does not apply, tests crash or time out) have a report and are unresolved; SWE-bench counts
  them as errors;
- ``submitted_instances``/``submitted_ids``: every prediction, in the dataset or not (as SWE-bench).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from sweworld.harness.grade import GradeResult

REPORT_FILE = "report.json"
EXTRAS_FILE = "sweworld_report.json"
PATCH_FILE = "patch.diff"
LOG_FILE = "run_instance.log"
EVAL_SCRIPT_FILE = "eval.sh"
TEST_OUTPUT_FILE = "test_output.txt"
SWEBENCH_KEYS = ("patch_is_None", "patch_exists", "patch_successfully_applied", "resolved")
SCHEMA_VERSION = 2


def _dumps(data: Any) -> str:
    return json.dumps(data, sort_keys=True, indent=4)


class InstanceReport(BaseModel):
    """The evaluation of one prediction: SWE-bench's fields, then sweworld's extras."""

    instance_id: str = Field(description="The task instance.")
    patch_is_None: bool = Field(default=False, description="The prediction's model_patch is None.")
    patch_exists: bool = Field(default=False, description="model_patch holds a non-empty patch.")
    patch_successfully_applied: bool = Field(default=False, description="The model patch applied.")
    resolved: bool = Field(default=False, description="RESOLVED_FULL.")
    tests_status: dict[str, dict[str, list[str]]] | None = Field(
        default=None, description="SWE-bench's tests_status; None when the tests were not graded.")
    # sweworld extras, never written into report.json
    resolution: str | None = Field(default=None, description="RESOLVED_FULL/PARTIAL/NO; None when not graded.")
    test_exit_code: int | None = Field(default=None, description="Exit code of the test command.")
    crashed: bool = Field(default=False, description="The test run was not trusted (see harness.grade).")
    apply_method: str | None = Field(default=None, description="Which step of the apply chain applied the patch.")
    tests_missing: list[str] = Field(default_factory=list, description=(
        "Listed tests the test output does not mention (graded as failed); also in report.json when any."))
    hunks_already_present: list[str] = Field(default_factory=list, description=(
        "Hunks of the model patch the workspace held already (left as they were, never reversed); also in "
        "report.json when any."))
    hunks_rejected: list[str] = Field(default_factory=list, description=(
        "Hunks of the model patch `git apply --reject` could not place when the patch did not apply; also in "
        "report.json when any."))
    error: str | None = Field(default=None, description="Why the run could not be graded, or None.")
    error_kind: Literal["infra", "timeout"] | None = Field(
        default=None, description="'infra': not the model's fault (environment, sandbox, test patch); "
        "'timeout': the tests ran past the timeout (a model failure, as SWE-bench counts it).")
    audits: dict[str, dict[str, int]] | None = Field(default=None, description=(
        "A hybrid evaluation's audit and routing counts (sweworld.backends.audits); None otherwise."))

    @classmethod
    def build(cls, instance_id: str, model_patch: str | None, *, patch_applied: bool = False,
              apply_method: str | None = None, graded: GradeResult | None = None,
              error: str | None = None) -> InstanceReport:
        """A report from what happened: the patch, whether it applied, the grade, or an infra error."""
        report = cls(instance_id=instance_id, patch_is_None=model_patch is None,
                     patch_exists=bool(model_patch and model_patch.strip()), patch_successfully_applied=patch_applied,
                     apply_method=apply_method, error=error, error_kind="infra" if error else None)
        if graded is not None and error is None:
            report.record_grade(graded)
        return report

    def record_grade(self, graded: GradeResult) -> None:
        """Take the grade's verdict: statuses, resolution, exit code, crash, missing tests."""
        self.tests_status = graded.tests_status
        self.resolution = graded.resolution
        self.resolved = graded.resolved
        self.test_exit_code = graded.exit_code
        self.crashed = graded.crashed
        self.tests_missing = graded.missing

    @property
    def is_infra_error(self) -> bool:
        return self.error_kind == "infra"

    def to_swebench(self) -> dict[str, dict[str, Any]]:
        """Exactly SWE-bench's report.json content."""
        body: dict[str, Any] = {key: getattr(self, key) for key in SWEBENCH_KEYS}
        if self.tests_status is not None:
            body["tests_status"] = self.tests_status
        if self.tests_missing:  # sweworld: a grading problem made visible (absent otherwise)
            body["tests_missing"] = self.tests_missing
        for key in ("hunks_already_present", "hunks_rejected"):  # sweworld: what the apply chain did (when any)
            if getattr(self, key):
                body[key] = getattr(self, key)
        return {self.instance_id: body}

    def to_json(self) -> str:
        """report.json text: ``to_swebench()`` with sorted keys, indent 4 (byte-stable)."""
        return _dumps(self.to_swebench())

    def extras_json(self) -> str:
        """The whole record (SWE-bench's fields and sweworld's extras), sorted keys, indent 4."""
        return _dumps(self.model_dump(mode="json"))


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` by one rename: a reader (or a rerun after a kill) sees the old
    file or the whole new one, never a part."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_report(path: str | Path, report: InstanceReport) -> Path:
    """Write ``report.json`` at ``path`` (a file, or a directory to hold it) and the full record
    in ``sweworld_report.json`` next to it. Returns the report.json path."""
    path = Path(path)
    if path.is_dir() or not path.suffix:
        path = path / REPORT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    # extras first, report.json last, each by rename: a report.json on disk means a finished instance
    write_atomic(path.parent / EXTRAS_FILE, report.extras_json())
    write_atomic(path, report.to_json())
    return path


def clear_report(directory: Path) -> None:
    """Unmark an instance before it is evaluated again: report.json (the marker) goes first, so a
    kill at any point afterwards leaves an instance that a rerun evaluates again."""
    for name in (REPORT_FILE, EXTRAS_FILE):
        (directory / name).unlink(missing_ok=True)


def read_report(path: str | Path) -> InstanceReport:
    """Read a report written by ``write_report`` (the full record when present), or a plain
    SWE-bench report.json. ``report.json`` must exist: without it the instance is not finished,
    whatever else is there (``FileNotFoundError``). Raises ValueError for a file that is neither."""
    path = Path(path)
    if path.is_dir() or not path.suffix:
        path = path / REPORT_FILE
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or len(data) != 1:
        raise ValueError(f"{path}: not a SWE-bench report (one instance id at the top level)")
    ((instance_id, body),) = data.items()
    extras = path.parent / EXTRAS_FILE
    if extras.is_file():
        report = InstanceReport.model_validate_json(extras.read_text(encoding="utf-8"))
        if report.instance_id != instance_id:
            raise ValueError(f"{extras}: written for {report.instance_id}, report.json for {instance_id}")
        return report
    return InstanceReport(instance_id=instance_id, **body)


def instance_files(report: InstanceReport) -> tuple[str, ...]:
    """The files an evaluated instance's directory holds (the test files only when the tests ran)."""
    tests_ran = report.test_exit_code is not None or report.error_kind == "timeout"
    return (PATCH_FILE, LOG_FILE, *((EVAL_SCRIPT_FILE, TEST_OUTPUT_FILE) if tests_ran else ()),
            EXTRAS_FILE, REPORT_FILE)


def is_finished(directory: Path) -> InstanceReport | None:
    """The report of a finished instance directory: report.json (written last) and every other file
    of the instance present; else None (a run killed mid-instance, or never run)."""
    try:
        report = read_report(directory / REPORT_FILE)
    except (OSError, ValueError):
        return None
    return report if all((directory / name).is_file() for name in instance_files(report)) else None


class RunSummary(BaseModel):
    """SWE-bench's run summary (schema_version 2) plus ``infra_error_ids``."""

    total_instances: int
    submitted_instances: int
    completed_instances: int
    resolved_instances: int
    unresolved_instances: int
    empty_patch_instances: int
    error_instances: int
    completed_ids: list[str]
    incomplete_ids: list[str]
    empty_patch_ids: list[str]
    submitted_ids: list[str]
    resolved_ids: list[str]
    unresolved_ids: list[str]
    error_ids: list[str]
    schema_version: int = SCHEMA_VERSION
    infra_error_ids: list[str] = Field(default_factory=list, description="sweworld: infrastructure failures.")
    run_id: str = Field(default="", exclude=True, description="Names the summary file; not in it.")
    model: str = Field(default="", exclude=True, description="Names the summary file; not in it.")

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()

    def to_json(self) -> str:
        return _dumps(self.to_dict())

    @property
    def filename(self) -> str:
        """SWE-bench's name for the summary: ``<model with / as __>.<run_id>.json``."""
        return f"{self.model.replace('/', '__')}.{self.run_id}.json"


def make_summary(dataset_ids: list[str], reports: dict[str, InstanceReport],
                 predictions: dict[str, str | None], *, run_id: str, model: str) -> RunSummary:
    """The run summary (see the module docstring). ``predictions`` maps instance id -> model_patch;
    ``reports`` holds the reports that exist."""
    completed: set[str] = set()
    resolved: set[str] = set()
    unresolved: set[str] = set()
    errors: set[str] = set()
    infra: set[str] = set()
    incomplete: set[str] = set()
    empty: set[str] = set()
    for instance_id in dataset_ids:
        if instance_id not in predictions:
            incomplete.add(instance_id)
        elif instance_id in reports and reports[instance_id].is_infra_error:  # before empty: one count
            errors.add(instance_id)
            infra.add(instance_id)
        elif predictions[instance_id] in ("", None):
            empty.add(instance_id)
        elif instance_id not in reports:
            errors.add(instance_id)
        else:
            completed.add(instance_id)
            (resolved if reports[instance_id].resolved else unresolved).add(instance_id)
    return RunSummary(
        total_instances=len(dataset_ids), submitted_instances=len(predictions),
        completed_instances=len(completed), resolved_instances=len(resolved),
        unresolved_instances=len(unresolved), empty_patch_instances=len(empty),
        error_instances=len(errors), completed_ids=sorted(completed), incomplete_ids=sorted(incomplete),
        empty_patch_ids=sorted(empty), submitted_ids=sorted(predictions), resolved_ids=sorted(resolved),
        unresolved_ids=sorted(unresolved), error_ids=sorted(errors), infra_error_ids=sorted(infra),
        run_id=run_id, model=model)


def summarize(dataset_ids: list[str], reports: dict[str, InstanceReport],
              predictions: dict[str, str | None], *, run_id: str, model: str) -> dict[str, Any]:
    """``make_summary(...).to_dict()``: SWE-bench's run-summary keys plus ``infra_error_ids``."""
    return make_summary(dataset_ids, reports, predictions, run_id=run_id, model=model).to_dict()


def write_summary(directory: str | Path, summary: RunSummary) -> Path:
    """Write the summary as ``<directory>/<model>.<run_id>.json`` (sorted keys, indent 4)."""
    path = Path(directory) / summary.filename
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(summary.to_json(), encoding="utf-8")
    return path
