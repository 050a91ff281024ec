"""The embedded SWR on real agent patches of real repositories, leaving whole repositories out.

    python benchmarks/swr_real.py --patches agent-patches.jsonl --dataset lite.json --repos-dir DIR \
        [--traces T.jsonl ...] [--out report.json]

``--patches``: rows of (instance_id, model_name_or_path, model_patch, docker_resolved), the real
verdict of SWE-bench's Docker harness; ``--dataset``: the instances' rows; ``--repos-dir``: clones
(``DIR/owner__name``, bare or not) read through git's objects, no checkout. ``--traces``: real
evaluations (``sweworld world collect``) added to the training rows of every fold whose held-out
repository they are not from.

For each repository R: the verdicts of the shipped synthesized-bug model (``swr-default.json``,
which never saw these repositories) on R's patches, and of a model fitted on every other
repository's patches (and traces) and scored on R's, as ``swr-real.json`` is fitted on all six. Printed: pooled over the folds,
accuracy/precision/recall/F1/AUC/ECE beside the majority-class baseline; per repository; per agent;
recall on resolving patches that differ from the gold (not AST-equal) and on those equal to it.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

from sweworld.repos.blobs import GitBlobs
from sweworld.repos.source import safe_name
from sweworld.tasks import load_tasks
from sweworld.types import Task
from sweworld.world.embedded_swr.features import features
from sweworld.world.embedded_swr.model import SWRClassifier
from sweworld.world.embedded_swr.predict import repo_sources
from sweworld.world.embedded_swr.swr import shipped_path
from sweworld.world.embedded_swr.train import L2, MODEL_FEATURES, fit_rows
from sweworld.world.metrics import binary, scored
from sweworld.world.traces import EvalTrace, load_traces


def load_rows(patches: Path, dataset: Path, repos_dir: Path) -> list[dict]:
    tasks = {t.instance_id: t for t in load_tasks(str(dataset))}
    blobs: dict[str, GitBlobs] = {}
    rows = []
    for line in patches.read_text().splitlines():
        raw = json.loads(line)
        task = tasks[raw["instance_id"]]
        reader = blobs.setdefault(task.repo, GitBlobs(repos_dir / safe_name(task.repo)))
        rows.append({"task": task, "patch": raw.get("model_patch") or "", "label": bool(raw["docker_resolved"]),
                     "agent": raw["model_name_or_path"], "read": reader.source(task.base_commit)})
    return rows


def trace_rows(paths: list[Path], repos_dir: Path) -> list[dict]:
    """The evaluations of collect runs; base files through git's objects where ``repos_dir`` holds
    the repository, else from the repository cache (``$SWEWORLD_HOME``: PyPI-built repositories)."""
    blobs: dict[str, GitBlobs] = {}
    cache = repo_sources()
    rows = []
    for path in paths:
        for trace in load_traces(path):
            if isinstance(trace, EvalTrace):
                task = Task.model_validate(trace.task)
                clone = repos_dir / safe_name(task.repo)
                if clone.exists():
                    read = blobs.setdefault(task.repo, GitBlobs(clone)).source(task.base_commit)
                else:
                    read = cache(task)
                rows.append({"task": task, "patch": trace.patch, "label": trace.resolved, "agent": "traces",
                             "read": read, "applies": trace.patch_applies})
    return rows


def with_features(rows: list[dict]) -> dict:
    """Each row's features; the milliseconds of the first patch of each instance (its gold patch,
    test file and call graph parsed then) and of the others (what a further evaluation costs)."""
    first, more, seen = [], [], set()
    for row in sorted(rows, key=lambda r: r["task"].instance_id):
        start = time.perf_counter()
        row["features"] = features(row["task"], row["patch"], row["read"])
        (more if row["task"].instance_id in seen else first).append(1000 * (time.perf_counter() - start))
        seen.add(row["task"].instance_id)
    mean = lambda xs: round(sum(xs) / len(xs), 1) if xs else None  # noqa: E731
    p95 = lambda xs: round(sorted(xs)[int(0.95 * (len(xs) - 1))], 1) if xs else None  # noqa: E731
    return {"first_ms": mean(first), "further_ms": mean(more), "further_p95_ms": p95(more)}


def decided(row: dict) -> bool:
    f = row["features"]
    return not (f["empty"] or not f["parsed"] or not f["syntax_ok"] or row.get("applies") is False)


def probability(model: SWRClassifier, row: dict) -> float:
    return model.probability(row["features"]) if decided(row) else 0.0


def block(rows: list[dict], probs: list[float], thresholds: list[float]) -> dict:
    out = scored(list(zip(probs, [r["label"] for r in rows], strict=True)))
    out.update(binary([(p >= t, r["label"]) for p, t, r in zip(probs, thresholds, rows, strict=True)]))
    return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in out.items()}


def leave_repo_out(rows: list[dict], extra: list[dict],
                   fit: Callable[[list[dict]], SWRClassifier]) -> tuple[list[float], list[float]]:
    """Each row's P from the model fitted without its repository, and that model's threshold."""
    probs, thresholds = [0.0] * len(rows), [0.5] * len(rows)
    for repo in sorted({r["task"].repo for r in rows}):
        train = [r for r in [*rows, *extra] if r["task"].repo != repo and decided(r)]
        model = fit(train)
        for i, r in enumerate(rows):
            if r["task"].repo == repo:
                probs[i], thresholds[i] = probability(model, r), model.threshold
    return probs, thresholds


def report(rows: list[dict], probs: list[float], thresholds: list[float]) -> dict:
    out = {"pooled": block(rows, probs, thresholds)}
    for key in ("repo", "agent"):
        groups: dict[str, list[int]] = {}
        for i, r in enumerate(rows):
            groups.setdefault(r["task"].repo if key == "repo" else r["agent"], []).append(i)
        out[key] = {g: block([rows[i] for i in idx], [probs[i] for i in idx], [thresholds[i] for i in idx])
                    for g, idx in groups.items()}
    for name, keep in (("gold_equal", 1.0), ("gold_differs", 0.0)):
        idx = [i for i, r in enumerate(rows) if r["label"] and r["features"]["modules_equal"] == keep]
        out[f"recall_{name}"] = {"n": len(idx), "found": sum(probs[i] >= thresholds[i] for i in idx)}
    return out


ROUTE_BELOW = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.97, 0.99)


def routing(rows: list[dict], probs: list[float], thresholds: list[float]) -> list[dict]:
    """The hybrid backend's ``--route-below c`` on these evaluations: a decided patch whose
    confidence max(P, 1 - P) is under c runs for real (its verdict: the real one), the others keep
    the simulated verdict; the share run for real and the agreement with the real verdicts."""
    out = []
    for c in ROUTE_BELOW:
        routed = [decided(r) and max(p, 1 - p) < c for r, p in zip(rows, probs, strict=True)]
        agree = [True if real else (p >= t) == r["label"]
                 for r, p, t, real in zip(rows, probs, thresholds, routed, strict=True)]
        out.append({"route_below": c, "share_real": round(sum(routed) / len(rows), 3),
                    "agreement": round(sum(agree) / len(rows), 3)})
    return out


def show(name: str, result: dict) -> None:
    p = result["pooled"]
    print(f"{name}: n {p['n']} acc {p['accuracy']} prec {p['precision']} rec {p['recall']} F1 {p['f1']} "
          f"AUC {p['auc']} ECE {p['ece']} (majority acc {p['majority_accuracy']}) "
          f"differs {result['recall_gold_differs']} equal {result['recall_gold_equal']}")
    for repo, b in result["repo"].items():
        print(f"    {repo:24} n {b['n']:3} acc {b['accuracy']} F1 {b['f1']} AUC {b['auc']} {b['confusion']}")
    for agent, b in result["agent"].items():
        print(f"    {agent:32} acc {b['accuracy']} F1 {b['f1']} {b['confusion']}")
    for point in result.get("routing", []):
        print(f"    route below {point['route_below']}: {point['share_real']:.1%} run for real, "
              f"agreement {point['agreement']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patches", type=Path, required=True)
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--repos-dir", type=Path, required=True)
    parser.add_argument("--traces", type=Path, nargs="*", default=[])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--features", nargs="*", default=list(MODEL_FEATURES))
    parser.add_argument("--l2", type=float, nargs="*", default=[L2])
    args = parser.parse_args()
    rows = load_rows(args.patches, args.dataset, args.repos_dir)
    extra = trace_rows(args.traces, args.repos_dir)
    timing = with_features(rows + extra)
    print(f"{len(rows)} agent patches, {len(extra)} trace evaluations; features: first patch of an instance "
          f"{timing['first_ms']} ms, further ones {timing['further_ms']} ms (p95 {timing['further_p95_ms']})")
    shipped = SWRClassifier.load(shipped_path())
    results = {"timing": timing, "synthesized-bug model (shipped swr-default.json)": report(rows, [probability(shipped, r) for r in rows], [shipped.threshold] * len(rows))}
    for l2 in args.l2:
        fit = lambda train, l2=l2: fit_rows(train, names=args.features, l2=l2)  # noqa: E731
        probs, thresholds = leave_repo_out(rows, extra, fit)
        results[f"refit l2={l2}"] = {**report(rows, probs, thresholds), "routing": routing(rows, probs, thresholds)}
    for name, result in results.items():
        if name != "timing":
            show(name, result)
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
