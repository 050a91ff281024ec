"""Ready-made sections for what a run produces: rollout summaries, evaluation summaries, instances."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sweworld.htmlreport.model import BarChart, Cell, Section, Table

ROLLOUT_RATES = (("resolve_rate", "resolve rate"), ("empty_patch_rate", "empty-patch rate"),
                 ("stuck_rate", "stuck rate"))
EVAL_SHARES = (("resolved_instances", "resolved"), ("unresolved_instances", "unresolved"),
               ("empty_patch_instances", "empty patch"), ("error_instances", "error"))
ROLLOUT_TEXT = (
    "Each policy ran through the agent loop and the tools; the final patch of every trajectory was "
    "evaluated by the harness. Resolve rate: trajectories whose patch resolves the instance. Empty-patch "
    "rate: trajectories that changed nothing. Stuck rate: trajectories stopped because their last three "
    "actions were identical. pass@k: the chance that at least one of k samples resolves an instance "
    "(unbiased estimator, averaged over instances).")
EVAL_TEXT = (
    "SWE-bench-style evaluation of each set of predictions: the patch is applied, the tests run and are "
    "graded as SWE-bench grades them. Shares are of all dataset instances; errors are non-empty "
    "predictions that could not be graded (infrastructure failures, missing reports).")


def _pass_keys(summaries: Iterable[Mapping[str, Any]]) -> list[str]:
    keys = {key for summary in summaries for key in summary if key.startswith("pass@")}
    return sorted(keys, key=lambda key: int(key.partition("@")[2]) if key.partition("@")[2].isdigit() else 0)


def rollout_section(summaries: Mapping[str, Mapping[str, Any]], *, title: str = "Rollouts",
                    text: str | None = None) -> Section:
    """A table and a rate chart of rollout summaries (``run_rollouts``' return value), one per policy.

    ``summaries`` maps a policy (or any run label) to its summary; an empty summary
    (``{"trajectories": 0}``) gives a row of dashes and no bars."""
    pass_keys = _pass_keys(summaries.values())
    columns = ["policy", "trajectories", "instances", *(label for _, label in ROLLOUT_RATES), "mean steps",
               "mean tokens", *pass_keys, "exit status"]
    rows: list[list[Cell]] = []
    for name, summary in summaries.items():
        statuses = summary.get("exit_status") or {}
        rows.append([name, summary.get("trajectories", 0), summary.get("instances"),
                     *(summary.get(key) for key, _ in ROLLOUT_RATES), summary.get("mean_steps"),
                     summary.get("mean_tokens"), *(summary.get(key) for key in pass_keys),
                     ", ".join(f"{status}: {count}" for status, count in statuses.items()) or None])
    chart = BarChart(title="Rates per policy", categories=list(summaries),
                     series={label: [s.get(key) for s in summaries.values()] for key, label in ROLLOUT_RATES},
                     y_label="share of trajectories", y_max=1.0, percent=True)
    return Section(title=title, text=ROLLOUT_TEXT if text is None else text,
                   table=Table(columns=columns, rows=rows), chart=chart)


def evaluation_section(summaries: Mapping[str, Mapping[str, Any]], *, title: str = "Evaluation",
                       text: str | None = None) -> Section:
    """A table and a chart of SWE-bench-style run summaries (``harness.report.summarize``), one per run.

    The chart shows resolved / unresolved / empty-patch / error instances as shares of the total."""
    columns = ["run", "instances", "submitted", "completed", "resolved", "unresolved", "empty patch", "errors",
               "resolve rate"]
    rows: list[list[Cell]] = []
    series: dict[str, list[float | None]] = {label: [] for _, label in EVAL_SHARES}
    for name, summary in summaries.items():
        total = summary.get("total_instances") or 0
        rows.append([name, summary.get("total_instances"), summary.get("submitted_instances"),
                     summary.get("completed_instances"), summary.get("resolved_instances"),
                     summary.get("unresolved_instances"), summary.get("empty_patch_instances"),
                     summary.get("error_instances"),
                     round(summary.get("resolved_instances", 0) / total, 4) if total else None])
        for key, label in EVAL_SHARES:
            count = summary.get(key)
            series[label].append(count / total if total and count is not None else None)
    chart = BarChart(title="Outcomes per run", categories=list(summaries), series=series,
                     y_label="share of instances", y_max=1.0, percent=True)
    return Section(title=title, text=EVAL_TEXT if text is None else text,
                   table=Table(columns=columns, rows=rows), chart=chart)


def _instance_row(item: Any) -> dict[str, Any]:
    """instance_id, policy, sample, resolved, steps, exit_status from a mapping or a Trajectory."""
    get = item.get if isinstance(item, Mapping) else (lambda key, default=None: getattr(item, key, default))
    resolved = get("resolved")
    if resolved is None and get("reward") is not None:
        resolved = get("reward") == 1.0
    steps = get("steps")
    return {"instance_id": str(get("instance_id", "")), "policy": get("policy") or "", "sample": get("sample"),
            "resolved": resolved, "steps": len(steps) if isinstance(steps, list) else steps,
            "exit_status": get("exit_status")}


def instances_section(rows: Iterable[Any], *, title: str = "Instances", text: str | None = None) -> Section:
    """A per-trajectory outcome table: instance, policy, sample, resolved, steps, exit status.

    Each row is a mapping with those keys (``resolved`` may be replaced by ``reward``, ``steps`` may be
    a list) or a ``sweworld.trajectory.Trajectory``. Rows are sorted by instance, policy and sample."""
    items = sorted((_instance_row(r) for r in rows),
                   key=lambda r: (r["instance_id"], r["policy"], -1 if r["sample"] is None else r["sample"]))
    if text is None:
        instances = len({r["instance_id"] for r in items})
        resolved = sum(r["resolved"] is True for r in items)
        text = (f"{len(items)} trajectories over {instances} instances; {resolved} resolved."
                if items else "No trajectories.")
    table = Table(columns=["instance", "policy", "sample", "resolved", "steps", "exit status"],
                  rows=[[r["instance_id"], r["policy"], r["sample"], r["resolved"], r["steps"], r["exit_status"]]
                        for r in items])
    return Section(title=title, text=text, table=table)
