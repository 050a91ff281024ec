"""Verdict rows of predictions graded by sweworld's own real harness, for ``swr_real.py --graded``.

    python benchmarks/graded_rows.py --dataset lite.json --out rows.jsonl PREDICTIONS.jsonl:LOGS_DIR [...]

Each argument pairs a predictions file with the directory ``sweworld eval --backend real`` wrote its
reports to (``logs/run_evaluation/<run_id>/<model>``: one ``<instance_id>/report.json`` each). A row
is written for every prediction with a report: ``instance_id``, ``model_name_or_path``,
``model_patch`` and ``resolved`` (the real harness's verdict), the format ``world.verdicts`` reads.
A prediction without a report is counted and left out.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sweworld.core.types import Task
from sweworld.harness.predictions import load_predictions
from sweworld.harness.report import REPORT_FILE
from sweworld.tasks import load_tasks


def rows(predictions: Path, logs: Path, tasks: list[Task]) -> tuple[list[dict], int]:
    out, missing = [], 0
    for iid, pred in load_predictions(predictions, tasks).items():
        report = logs / iid / REPORT_FILE
        if not report.is_file():
            missing += 1
            continue
        out.append({"instance_id": iid, "model_name_or_path": pred.model_name_or_path,
                    "model_patch": pred.model_patch or "", "resolved": bool(json.loads(report.read_text())[iid]["resolved"])})
    return out, missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", nargs="+", help="PREDICTIONS.jsonl:LOGS_DIR")
    parser.add_argument("--dataset", required=True, help="the instances the predictions are of")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    tasks = load_tasks(args.dataset)
    written, missing = [], 0
    for pair in args.pairs:
        predictions, _, logs = pair.rpartition(":")
        got, lost = rows(Path(predictions), Path(logs), tasks)
        written += got
        missing += lost
    args.out.write_text("".join(json.dumps(row) + "\n" for row in written))
    print(f"{len(written)} rows ({sum(r['resolved'] for r in written)} resolved), {missing} predictions without a report")


if __name__ == "__main__":
    main()
