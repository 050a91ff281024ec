"""inspect_evals' own ``swe_bench`` task, unchanged, with ``sandbox_type="sweworld"``, on SWE-bench rows:
per instance the gold patch replayed by ``mockllm/model`` through inspect's ``text_editor`` (then
``submit``) and the empty run (``submit`` only); prints one line per run and the totals per repository.

    python benchmarks/lite_inspect_evals.py --dataset lite-6repos.json --repos-dir DIR [OWNER/NAME | ID ...]

``--dataset``: SWE-bench rows (JSON list or JSONL); each repository's rows are written as
``OUT/rows-<owner__name>/test.jsonl`` (the lists JSON-encoded, as on the hub) for the task's loader.
``--repos-dir``: clones ``DIR/owner__name``. The sandbox reads the instance from ``--dataset``
(``$SWEWORLD_DATASET``). Runs one sample at a time.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def _rows(path: Path) -> list[dict]:
    text = path.read_text()
    return json.loads(text) if text.lstrip().startswith("[") else [json.loads(line) for line in text.splitlines() if line]


def _rows_dir(out: Path, rows: list[dict], repo: str) -> Path:
    directory = out / f"rows-{repo.replace('/', '__')}"
    directory.mkdir(parents=True, exist_ok=True)
    lines = []
    for row in (dict(r) for r in rows if r["repo"] == repo):
        for key in ("FAIL_TO_PASS", "PASS_TO_PASS"):
            row[key] = row[key] if isinstance(row[key], str) else json.dumps(row[key])
        row["hints_text"] = row.get("hints_text") or ""
        lines.append(json.dumps(row))
    (directory / "test.jsonl").write_text("\n".join(lines) + "\n")
    return directory


def run_one(row: dict, mode: str, rows_dir: Path, logs: Path) -> dict:
    from inspect_ai import eval as inspect_eval
    from inspect_ai import task_with
    from inspect_ai.dataset import MemoryDataset
    from inspect_evals.swe_bench import swe_bench

    from inspect_replay import call, gold_edits, mock_model
    evaluation = swe_bench(dataset=str(rows_dir), split="test", sandbox_type="sweworld", revision="main")
    [sample] = [s for s in evaluation.dataset if s.id == row["instance_id"]]
    one = task_with(evaluation, dataset=MemoryDataset([sample], name=row["instance_id"]))
    outputs = [*gold_edits(row["patch"]), call("submit", answer="done")] if mode == "gold" else [call("submit", answer="")]
    [log] = inspect_eval(one, model=mock_model(*outputs), display="none", max_samples=1, max_sandboxes=1,
                         fail_on_error=False, log_dir=str(logs / row["instance_id"] / mode))
    result = {"instance_id": row["instance_id"], "repo": row["repo"], "mode": mode, "status": log.status}
    done = log.samples[0] if log.samples else None
    if done is not None and done.scores and "swe_bench_scorer" in done.scores:
        result["value"] = done.scores["swe_bench_scorer"].value
    error = (done.error if done is not None and done.error else log.error)
    if error is not None:
        result["error"] = (error.message or "")[-300:]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True, type=Path)
    parser.add_argument("--repos-dir", required=True)
    parser.add_argument("--out", type=Path, default=None, help="rows and logs (default: a temporary directory)")
    parser.add_argument("select", nargs="*", help="repositories (OWNER/NAME) or instance ids; default: all")
    args = parser.parse_args()
    os.environ.update(SWEWORLD_DATASET=str(args.dataset.resolve()), SWEWORLD_REPOS_DIR=args.repos_dir)
    out = args.out or Path(tempfile.mkdtemp(prefix="lite-inspect-evals-"))
    rows = _rows(args.dataset)
    chosen = [r for r in rows if not args.select or r["repo"] in args.select or r["instance_id"] in args.select]
    totals: dict[tuple[str, str], collections.Counter] = collections.defaultdict(collections.Counter)
    for row in chosen:
        for mode in ("gold", "empty"):
            result = run_one(row, mode, _rows_dir(out, rows, row["repo"]), out / "logs")
            print(json.dumps(result), flush=True)
            outcome = "resolved" if result.get("value") == 1.0 else "graded" if "value" in result else "not graded"
            totals[(row["repo"], mode)][outcome] += 1
    for (repo, mode), counts in sorted(totals.items()):
        print(f"{repo:24} {mode:5} resolved {counts['resolved']}, unresolved {counts['graded']}, "
              f"not graded {counts['not graded']}")


if __name__ == "__main__":
    main()
