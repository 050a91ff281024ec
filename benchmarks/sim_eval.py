"""A whole simulated evaluation, through an isolated episode of the base tree against the base tree
read in place (``world.treeview``), each path in a fresh process, on real agent patches.

    python benchmarks/sim_eval.py --patches agent-patches.jsonl --dataset lite.json --repos-dir DIR

``--patches``: rows of (instance_id, model_name_or_path, model_patch); ``--dataset``: the
instances; ``--repos-dir``: clones (``DIR/owner__name``). The base trees are built first (not
timed). Then each path runs in its own process, cold: ``runs.eval.evaluate_item`` of every patch
with the embedded world (``SimBackend``, ``--world embedded``), in the order of the instances, so
the first patch of an instance parses its base and gold files and the further ones find them
parsed; then, after every evaluation, the patch check alone (``testfiles.inspect_patch``: through
the episode, or by the view) of every patch again. Printed: milliseconds per evaluation (first
patch of an instance, further ones, mean / median / p95), of the check, the ratios episode / view,
and whether the reports of the two paths are identical (``report.json`` and the ``sim_*`` fields).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sweworld.backends.sim import SimBackend
from sweworld.harness.predictions import Prediction
from sweworld.harness.report import REPORT_FILE
from sweworld.repos import RepoStore
from sweworld.runs.eval import evaluate_item
from sweworld.tasks import load_tasks
from sweworld.world.config import WorldConfig
from sweworld.world.simeval import evaluate_simulated
from sweworld.world.testfiles import inspect_patch

PATHS = ("episode", "view")


def load(args: argparse.Namespace) -> tuple[list, list[Prediction]]:
    tasks = {t.instance_id: t for t in load_tasks(args.dataset)}
    rows = [json.loads(line) for line in Path(args.patches).read_text().splitlines() if line.strip()]
    preds = [Prediction(instance_id=r["instance_id"], model_name_or_path=r.get("model_name_or_path", "agent"),
                        model_patch=r.get("model_patch") or "") for r in rows if r["instance_id"] in tasks]
    preds.sort(key=lambda p: p.instance_id)
    return [tasks[p.instance_id] for p in preds], preds


def stats(values: list[float]) -> dict:
    if not values:
        return {}
    ordered = sorted(values)
    return {"n": len(values), "mean_ms": round(statistics.fmean(values), 1), "median_ms": round(ordered[len(ordered) // 2], 1),
            "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 1)}


def child(args: argparse.Namespace) -> dict:
    """One path, cold: every evaluation, then every patch check (see the module docstring)."""
    import swebench.harness.log_parsers  # noqa: F401  (imported by any first evaluation; not what is measured)

    tasks, preds = load(args)
    sim = SimBackend(repos=RepoStore(repos_dir=args.repos_dir), world=WorldConfig.from_options(urls=None, kind="embedded"))
    open_episode = (lambda task: sim.workspace(task)) if args.child == "episode" else sim.tree_view
    if args.child == "episode":  # what the backend did before the view: the report through an episode
        sim.evaluate = lambda task, pred, log_dir, timeout=0: evaluate_simulated(  # type: ignore[method-assign]
            task, pred, log_dir, swr=sim.swr, open_workspace=lambda: sim.workspace(task))
    out = Path(args.out)
    first, further, seen, reports = [], [], set(), {}
    for i, (task, pred) in enumerate(zip(tasks, preds, strict=True)):
        log_dir = out / f"{i:03d}"
        start = time.perf_counter()
        report = evaluate_item((task, pred, log_dir), sim, timeout=600)
        (further if task.instance_id in seen else first).append(1000 * (time.perf_counter() - start))
        seen.add(task.instance_id)
        saved = json.loads((log_dir / REPORT_FILE).read_text())
        reports[f"{i:03d}"] = [saved, report.model_dump()]
    checks = []
    for task, pred in zip(tasks, preds, strict=True):
        start = time.perf_counter()
        with open_episode(task) as workspace:
            inspect_patch(workspace, task, pred.model_patch, [], limit=1)
        checks.append(1000 * (time.perf_counter() - start))
    return {"first": stats(first), "further": stats(further), "all": stats(first + further),
            "check": stats(checks), "reports": reports}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patches", required=True)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--repos-dir", required=True)
    parser.add_argument("--child", choices=PATHS, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args)))
        return
    tasks, preds = load(args)
    store = RepoStore(repos_dir=args.repos_dir)
    for task in {t.instance_id: t for t in tasks}.values():
        store.base_tree(task)
    got = {}
    with tempfile.TemporaryDirectory(prefix="sweworld-simeval-") as scratch:
        for path in PATHS:
            argv = [sys.executable, __file__, "--patches", args.patches, "--dataset", args.dataset,
                    "--repos-dir", args.repos_dir, "--child", path, "--out", str(Path(scratch) / path)]
            got[path] = json.loads(subprocess.run(argv, check=True, capture_output=True, text=True).stdout)
    print(f"{len(preds)} patches of {len({t.instance_id for t in tasks})} instances")
    print(f"{'':>10} {'path':>8} {'n':>4} {'mean ms':>8} {'median':>7} {'p95':>7}")
    for stage in ("first", "further", "all", "check"):
        for path in PATHS:
            s = got[path][stage]
            print(f"{stage:>10} {path:>8} {s['n']:>4} {s['mean_ms']:>8} {s['median_ms']:>7} {s['p95_ms']:>7}")
        ratio = got["episode"][stage]["mean_ms"] / got["view"][stage]["mean_ms"]
        print(f"{stage:>10} {'ratio':>8} episode/view {ratio:.2f}x (mean)")
    same = got["episode"]["reports"] == got["view"]["reports"]
    print(f"reports identical on both paths: {same}")
    if not same:
        differ = [k for k in got["view"]["reports"] if got["view"]["reports"][k] != got["episode"]["reports"].get(k)]
        print(f"  differing: {len(differ)} ({', '.join(differ[:10])})")


if __name__ == "__main__":
    main()
