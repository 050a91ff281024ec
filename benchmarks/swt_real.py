"""The embedded SWT on real traces of real repositories, leaving whole repositories out.

    python benchmarks/swt_real.py --traces T.jsonl [T2.jsonl ...] --dataset lite.json [mined.jsonl ...] \
        [--repos-dir DIR] [--only owner/name ...] [--out report.json]

``--traces``: ``sweworld world collect`` runs on real instances (every command with its real
output); ``--dataset``: the instances' rows (their FAIL_TO_PASS/PASS_TO_PASS are what the sim
backend knows). For each repository (``--only``: these), the SWT fitted on every other
repository's traces predicts its code-execution steps: exit-code accuracy, outcome accuracy
(``metrics.same_outcome``), output similarity, pooled and per repository, and per prediction source
(``tests``: a test command; ``script``: a script naming tests; ``neighbour``: the nearest recorded
step); beside each, the same SWT fitted on no traces at all (the task rows only: what the
embedded world knows of a repository no trace was recorded on). The per-test
predictor is the embedded SWR (base files read from ``--repos-dir`` clones or the repository cache).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sweworld.surrogates.swr.swr import EmbeddedSWR, EmbeddedSWRConfig
from sweworld.surrogates.swt.evaluate import fit_on, leave_one_repo_out, pooled, score
from sweworld.surrogates.swt.learn import repo_trees
from sweworld.tasks import load_tasks
from sweworld.world.traces import StepTrace, load_traces


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, nargs="+", required=True)
    parser.add_argument("--dataset", nargs="+", required=True)
    parser.add_argument("--repos-dir", type=Path)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    traces = list(load_traces(*args.traces))
    tasks = [task for name in args.dataset for task in load_tasks(name)]
    predictor = EmbeddedSWR(config=EmbeddedSWRConfig(repos_dir=str(args.repos_dir) if args.repos_dir else None))
    trees = repo_trees(args.repos_dir)
    result = leave_one_repo_out(traces, tasks, trees=trees, predictor=predictor, repos=args.only)
    bare = {repo: score(fit_on(traces, tasks, lambda r: False, trees, predictor),
                        [t for t in traces if isinstance(t, StepTrace) and t.repo == repo])
            for repo in result if repo != "overall"}
    for repo, block in result.items():
        print(f"{repo:24} n {block['n']:4} exit acc {block['exit_code_accuracy']} outcome acc "
              f"{block.get('outcome_accuracy')} similarity {block['output_similarity']}"
              + (f"  (no traces: exit acc {bare[repo]['exit_code_accuracy']} outcome acc "
                 f"{bare[repo]['outcome_accuracy']})" if repo in bare else ""))
    bare["overall"] = pooled(list(bare.values()))
    for name, blocks in (("fitted on the other repositories", result), ("no traces", bare)):
        print(name)
        for source, block in blocks["overall"]["by_source"].items():
            print(f"  by source {source:13} n {block['n']:4} exit acc {block['exit_code_accuracy']} outcome acc "
                  f"{block['outcome_accuracy']}")
    print("no traces, pooled: " + ", ".join(f"{key} {bare['overall'][key]}"
                                           for key in ("exit_code_accuracy", "outcome_accuracy", "output_similarity")))
    result["no_traces"] = bare
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
