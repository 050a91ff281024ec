"""What a mining run says about itself: why it found nothing, its drops grouped by cause, and the
report of a run over many repositories (``mine.batch``): ``report.json`` and ``report.md``, yield
per repository and per cause, one line per repository that failed.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from sweworld.envs import lang
from sweworld.mine.candidates import Screen
from sweworld.repos.git import try_git

SCREEN = "screen"
VALIDATE = "validate"


def causes(screened: Screen, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per cause of a drop, most frequent first: ``{"stage", "cause", "count"}`` (the steps
    screened out, then the candidates validated and dropped, by the cause their runs named)."""
    lines = [{"stage": SCREEN, "cause": cause, "count": n} for cause, n in screened.dropped.most_common()]
    dropped = Counter(e["drop"] for e in entries if not e["kept"])
    lines += [{"stage": VALIDATE, "cause": cause, "count": n} for cause, n in dropped.most_common()]
    return sorted(lines, key=lambda line: -line["count"])


def has_test_files(mirror: Path, rev: str, language: str = "python") -> bool | None:
    """Whether the tree of ``rev`` holds a test file (by ``language``'s path rules); None when git cannot say."""
    listed = try_git(f"--git-dir={mirror}", "ls-tree", "-r", "--name-only", rev)
    is_test = lang.get(language).paths.is_test
    return None if listed is None else any(is_test(p) for p in listed.splitlines())


def why_none(screened: Screen, entries: list[dict[str, Any]], *, mirror: Path, rev: str) -> str | None:
    """Why a run kept no instance, in one sentence; None when it kept some."""
    if any(e["kept"] for e in entries):
        return None
    top = ", ".join(f"{n} {cause}" for cause, n in screened.dropped.most_common(4))
    if not screened.candidates:
        if has_test_files(mirror, rev, screened.language or "python") is False:
            return f"the repository has no test files (at {rev}): no step can come with a test ({top or 'no steps'})"
        return f"no step changed both source and tests ({screened.steps} steps: {top or 'none'})"
    if not entries:
        return f"{len(screened.candidates)} candidates, none validated (stopped before the first)"
    dropped = Counter(e["drop"] for e in entries)
    why = ", ".join(f"{n} {cause}" for cause, n in dropped.most_common(3))
    return f"none of {len(entries)} validated candidates kept: {why}"


def repo_line(record: dict[str, Any]) -> dict[str, Any]:
    """The report's line of one repository of a batch: its counts and yield, or its error."""
    summary = record.get("summary") or {}
    line = {"repo": record["repo"], "source": record["source"], "status": record["status"],
            "out": record.get("out")}
    if record["status"] != "done":
        return {**line, "error": record.get("error")}
    tried = summary.get("validated_candidates", 0)
    return {**line, **{k: summary.get(k) for k in ("steps", "candidates", "validated_candidates", "validated",
                                                   "validated_beyond_max", "seconds", "cpu_seconds")},
            "yield": round(summary.get("validated", 0) / tried, 3) if tried else None,
            "why": summary.get("why"), "causes": summary.get("causes", [])}


def batch_report(records: list[dict[str, Any]], *, tasks: int, out: Path) -> dict[str, Any]:
    """The report of a batch (``records``: one per repository, in the file's order)."""
    lines = [repo_line(r) for r in records]
    done = [line for line in lines if line["status"] == "done"]
    per_cause: Counter = Counter()
    for line in done:
        for cause in line["causes"]:
            per_cause[(cause["stage"], cause["cause"])] += cause["count"]
    validated = sum(line["validated"] or 0 for line in done)
    tried = sum(line["validated_candidates"] or 0 for line in done)
    cpu = sum(line["cpu_seconds"] or 0.0 for line in done)
    return {"repos": len(lines), "done": len(done), "failed": len(lines) - len(done), "tasks": tasks,
            "tasks_file": out.name, "validated": validated, "validated_candidates": tried,
            "yield": round(validated / tried, 3) if tried else None, "cpu_seconds": round(cpu, 1),
            "validated_per_cpu_hour": round(validated * 3600 / cpu, 1) if cpu else None,
            "causes": [{"stage": stage, "cause": cause, "count": n} for (stage, cause), n in per_cause.most_common()],
            "per_repo": lines}


def _cell(value: Any) -> str:
    return "" if value is None else str(value).replace("|", "\\|").replace("\n", " ")


def markdown(report: dict[str, Any]) -> str:
    """``report.md``: the totals, a table per repository, the causes, the failed repositories."""
    out = [f"# Mining report: {report['repos']} repositories\n",
           f"{report['done']} mined, {report['failed']} failed; {report['validated']} instances validated of "
           f"{report['validated_candidates']} candidates (yield {_cell(report['yield'])}); {report['tasks']} "
           f"instances in {report['tasks_file']}; {_cell(report['validated_per_cpu_hour'])} validated per CPU-hour.\n",
           "## Per repository\n", "| repository | steps | candidates | validated / tried | yield | why none |",
           "|---|---|---|---|---|---|"]
    for line in report["per_repo"]:
        if line["status"] == "done":
            out.append(f"| {_cell(line['repo'])} | {_cell(line['steps'])} | {_cell(line['candidates'])} | "
                       f"{_cell(line['validated'])} / {_cell(line['validated_candidates'])} | {_cell(line['yield'])} "
                       f"| {_cell(line['why'])} |")
    out += ["\n## Causes of drops\n", "| stage | cause | count |", "|---|---|---|"]
    out += [f"| {c['stage']} | {_cell(c['cause'])} | {c['count']} |" for c in report["causes"]]
    failed = [line for line in report["per_repo"] if line["status"] != "done"]
    if failed:
        out += ["\n## Failed repositories\n"]
        out += [f"- {_cell(line['repo'])} ({_cell(line['source'])}): {_cell(line['error'])}" for line in failed]
    return "\n".join(out) + "\n"


def write_report(out_dir: Path, records: list[dict[str, Any]], *, tasks: int, tasks_file: Path) -> dict[str, Any]:
    """Write ``report.json`` and ``report.md`` into ``out_dir``; the report."""
    report = batch_report(records, tasks=tasks, out=tasks_file)
    (out_dir / "report.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    (out_dir / "report.md").write_text(markdown(report), encoding="utf-8")
    return report
