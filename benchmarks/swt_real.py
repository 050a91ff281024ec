"""The embedded SWT on real traces of real repositories, leaving whole repositories out.

    python benchmarks/swt_real.py --traces T.jsonl [T2.jsonl ...] --dataset lite.json \
        [--repos-dir DIR] [--only owner/name ...] [--out report.json]

``--traces``: ``sweworld world collect`` runs on real instances (every command with its real
output); ``--dataset``: the instances' rows (their FAIL_TO_PASS/PASS_TO_PASS are what the sim
backend knows). For each repository (``--only``: these), the SWT fitted on every other
repository's traces predicts its code-execution steps: exit-code accuracy, outcome accuracy
(``metrics.same_outcome``), output similarity, pooled and per repository. The per-test
predictor is the embedded SWR (base files read from ``--repos-dir`` clones or the repository cache).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sweworld.surrogates.swr.swr import EmbeddedSWR, EmbeddedSWRConfig
from sweworld.surrogates.swt.evaluate import leave_one_repo_out
from sweworld.surrogates.swt.learn import repo_trees
from sweworld.tasks import load_tasks
from sweworld.world.traces import load_traces


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, nargs="+", required=True)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--repos-dir", type=Path)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    traces = list(load_traces(*args.traces))
    tasks = list(load_tasks(args.dataset))
    predictor = EmbeddedSWR(config=EmbeddedSWRConfig(repos_dir=str(args.repos_dir) if args.repos_dir else None))
    result = leave_one_repo_out(traces, tasks, trees=repo_trees(args.repos_dir), predictor=predictor,
                                repos=args.only)
    for repo, block in result.items():
        print(f"{repo:24} n {block['n']:4} exit acc {block['exit_code_accuracy']} outcome acc "
              f"{block.get('outcome_accuracy')} similarity {block['output_similarity']}")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
