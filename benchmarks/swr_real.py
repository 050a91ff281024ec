"""The embedded SWR on real agent patches of real repositories, leaving whole repositories out.

    python benchmarks/swr_real.py --patches agent-patches.jsonl --dataset lite.json --repos-dir DIR \
        [--traces T.jsonl ...] [--l2 3] [--out report.json]

``--patches``: published verdicts, rows of (instance_id, model_name_or_path, model_patch,
docker_resolved): the real verdict of SWE-bench's Docker harness (``world.verdicts``);
``--dataset``: the instances' rows; ``--repos-dir``: clones (``DIR/owner__name``), read through
git's objects of the repository cache's mirror (``predict.repo_sources``). ``--traces``: real
evaluations (``sweworld world collect``) added to the training rows of every fold whose held-out
repository they are not from.

Printed: the time of the features, measured first in the process (the first patch of an instance, its base,
gold-patched and test files parsed then, and further ones: what a further evaluation costs); the
verdicts of the shipped synthesized-bug model (``swr-default.json``, which never saw these
repositories); then ``train.leave_repo_out``: each repository predicted by the model fitted on the
others (as ``swr-real.json`` is fitted on all six), pooled accuracy/precision/recall/F1/AUC/ECE
beside the majority-class baseline, per repository, per agent, recall on resolving patches that
differ from the gold (not AST-equal) and on those equal to it, and the hybrid backend's routing
curve (``--route-below c``) against the real verdicts. Also printed: what the behaviour features
(``behaviour``) cost inside the features and how many patches they cover; ``--with-behaviour``
leaves repositories out again with them added to ``MODEL_FEATURES`` (without and with
``behaviour_calls``), and applies the rule "the agent differs from the gold on a call where the
gold differs from the base: unresolved" to the shipped features' predictions. ``--graded``: more
real agent patches, as verdict rows of sweworld's own real harness (``graded_rows.py``): each
repository's predicted by the model fitted on the other repositories' ``--patches`` (per agent too),
then added to the training rows of every fold of ``--patches``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from sweworld.core.types import Task
from sweworld.sandbox.oneshot import probe_command
from sweworld.surrogates.swr import behaviour
from sweworld.surrogates.swr.features import features
from sweworld.surrogates.swr.model import SWRClassifier
from sweworld.surrogates.swr.predict import decide, repo_sources
from sweworld.surrogates.swr.swr import shipped_path
from sweworld.surrogates.swr.train import L2, MODEL_FEATURES, examples, leave_repo_out
from sweworld.tasks import load_tasks
from sweworld.world.metrics import binary, scored
from sweworld.world.traces import EvalTrace, load_traces
from sweworld.world.verdicts import verdict_traces

ROUTE_BELOW = (0.5, 0.6, 0.7, 0.75, 0.8, 0.82, 0.85, 0.9, 0.95, 0.97, 0.99)
Prediction = tuple[EvalTrace, float, float]
"""(evaluation, P(resolved), the threshold of the model that gave it)."""


def timing(evals: list[EvalTrace], source, probe: list[str]) -> dict:
    """Milliseconds of the features of the first patch of each instance (its base, gold-patched and
    test files parsed then) and of the others (what a further sim evaluation costs: the shipped
    models do not weigh the behaviour features, so ``decide`` runs no probe), measured first in the
    process; then, with the probe's caches emptied, what the behaviour features add to each
    evaluation (``behaviour.stats``: literal calls run in a sandbox)."""
    first, more, seen, spent = [], [], set(), []
    ordered = sorted(evals, key=lambda t: t.instance_id)
    for trace in ordered:
        task = Task.model_validate(trace.task)
        start = time.perf_counter()
        features(task, trace.patch, source(task))
        (more if trace.instance_id in seen else first).append(1000 * (time.perf_counter() - start))
        seen.add(trace.instance_id)
    behaviour.clear()  # what a fresh process pays: each task's base and gold versions run once
    for trace in ordered:
        task = Task.model_validate(trace.task)
        before = behaviour.stats["seconds"]
        features(task, trace.patch, source(task), probe=probe)
        spent.append(1000 * (behaviour.stats["seconds"] - before))
    mean = lambda xs: round(sum(xs) / len(xs), 1) if xs else None  # noqa: E731
    return {"first_ms": mean(first), "further_ms": mean(more),
            "further_p95_ms": round(sorted(more)[int(0.95 * (len(more) - 1))], 1) if more else None,
            "behaviour_ms": mean(spent), "behaviour_max_ms": round(max(spent), 1) if spent else None,
            "behaviour_p50_ms": round(sorted(spent)[len(spent) // 2], 2) if spent else None,
            "behaviour_runs": behaviour.stats["runs"], "behaviour_calls_run": behaviour.stats["calls_run"]}


def coverage(pairs: list[tuple[EvalTrace, dict]]) -> dict:
    """How many of the patches the classifier decides (and of the resolving ones) got a literal
    call, a computed behaviour (gold and agent), a discriminating call."""
    out = {}
    for name in ("behaviour_calls", "behaviour_known", "behaviour_discriminating"):
        out[name] = {"patches": sum(f[name] > 0 for _, f in pairs),
                     "resolving": sum(f[name] > 0 for t, f in pairs if t.resolved)}
    out["instances_with_calls"] = len({t.instance_id for t, f in pairs if f["behaviour_calls"] > 0})
    return out


def equal_to_gold(pairs: list[tuple[EvalTrace, dict]]) -> dict[int, bool]:
    """Per evaluation (by id): its patch's modules are AST-equal to the gold patch's."""
    return {id(t): f["modules_equal"] == 1.0 for t, f in pairs}


def block(predictions: list[Prediction]) -> dict:
    out = scored([(p, t.resolved) for t, p, _ in predictions])
    out.update(binary([(p >= threshold, t.resolved) for t, p, threshold in predictions]))
    return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in out.items()}


def routing(predictions: list[Prediction]) -> list[dict]:
    """The hybrid backend's ``--route-below c``: a non-empty patch whose confidence max(P, 1 - P)
    is under c runs for real (its verdict: the real one), the others keep the simulated verdict."""
    out = []
    for c in ROUTE_BELOW:
        routed = [bool(t.patch.strip()) and max(p, 1 - p) < c for t, p, _ in predictions]
        agree = [real or (p >= threshold) == t.resolved for (t, p, threshold), real in zip(predictions, routed, strict=True)]
        out.append({"route_below": c, "share_real": round(sum(routed) / len(predictions), 3),
                    "agreement": round(sum(agree) / len(predictions), 3)})
    return out


def report(predictions: list[Prediction], gold_equal: dict[int, bool]) -> dict:
    out = {"pooled": block(predictions), "routing": routing(predictions)}
    for name, key in (("repo", lambda t: t.repo), ("agent", lambda t: t.agent)):
        groups: dict[str, list[Prediction]] = {}
        for item in predictions:
            groups.setdefault(key(item[0]), []).append(item)
        out[name] = {g: block(items) for g, items in groups.items()}
    for name, equal in (("gold_equal", True), ("gold_differs", False)):
        chosen = [(p, th) for t, p, th in predictions if t.resolved and gold_equal.get(id(t), False) == equal]
        out[f"recall_{name}"] = {"n": len(chosen), "found": sum(p >= th for p, th in chosen)}
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
    for point in result["routing"]:
        print(f"    route below {point['route_below']}: {point['share_real']:.1%} run for real, "
              f"agreement {point['agreement']:.3f}")


def arguments(doc: str) -> argparse.ArgumentParser:
    """The arguments of the real-patch SWR benchmarks: --patches, --dataset, --repos-dir, --traces, --out."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--patches", type=Path, required=True)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--repos-dir", type=Path, required=True)
    parser.add_argument("--traces", type=Path, nargs="*", default=[])
    parser.add_argument("--out", type=Path)
    return parser


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--l2", type=float, default=L2)
    parser.add_argument("--graded", type=Path, help="verdict rows of sweworld's real harness (graded_rows.py)")
    parser.add_argument("--with-behaviour", action="store_true",
                        help="also leave repositories out with behaviour.FEATURES added to MODEL_FEATURES")
    args = parser.parse_args()
    source = repo_sources(args.repos_dir)
    evals = verdict_traces(args.patches, load_tasks(args.dataset))
    extra = [t for t in load_traces(*args.traces) if isinstance(t, EvalTrace)] if args.traces else []
    probe = probe_command()  # the behaviour features' isolated Python
    results = {"timing": timing(evals, source, probe)}  # first: nothing parsed yet but what it parses itself
    pairs = examples(evals, source, probe=probe)
    gold_equal = equal_to_gold(pairs)
    print(f"{len(evals)} agent patches, {len(extra)} trace evaluations; features: first patch of an instance "
          f"{results['timing']['first_ms']} ms, further ones {results['timing']['further_ms']} ms "
          f"(p95 {results['timing']['further_p95_ms']})")
    results["behaviour_coverage"] = coverage(pairs)
    t = results["timing"]
    print(f"behaviour: {t['behaviour_ms']} ms mean (median {t['behaviour_p50_ms']}, max {t['behaviour_max_ms']}), "
          f"{t['behaviour_runs']} sandboxed "
          f"runs of {t['behaviour_calls_run']} calls; coverage {results['behaviour_coverage']}")
    shipped = SWRClassifier.load(shipped_path())
    results["synthesized-bug model (shipped swr-default.json)"] = report(
        [(t, decide(shipped, Task.model_validate(t.task), t.patch, source(Task.model_validate(t.task)))[0]
          if t.patch.strip() else 0.0, shipped.threshold) for t in evals], gold_equal)
    folds = leave_repo_out(evals, pairs, source, extra=examples(extra, source, probe=probe), l2=args.l2)
    results[f"each repository left out, l2={args.l2}"] = report(folds["predictions"], gold_equal)
    if args.graded:
        graded = verdict_traces(args.graded, load_tasks(args.dataset))
        more = examples(graded, source)
        equal = {**gold_equal, **equal_to_gold(more)}
        results[f"graded ({len(graded)}), each repository predicted by the model of the others' patches"] = report(
            leave_repo_out(graded, pairs, source, l2=args.l2)["predictions"], equal)
        results[f"each repository left out, l2={args.l2}, graded rows added to training"] = report(
            leave_repo_out(evals, pairs, source, extra=more, l2=args.l2)["predictions"], equal)
    if args.with_behaviour:
        values = {id(t): f for t, f in pairs}
        differs = lambda t: bool(values.get(id(t), {}).get("behaviour_discriminating")  # noqa: E731
                                 and values[id(t)]["behaviour_fixed"] < 1)
        results["rule: differs from the gold on a discriminating call -> unresolved"] = report(
            [(t, 0.0 if differs(t) else p, th) for t, p, th in folds["predictions"]], gold_equal)
        five = tuple(n for n in behaviour.FEATURES if n != "behaviour_calls")
        for name, added in (("the behaviour features", five), ("the behaviour features and behaviour_calls",
                                                                behaviour.FEATURES)):
            more = leave_repo_out(evals, pairs, source, extra=examples(extra, source, probe=probe), l2=args.l2, probe=probe,
                                  names=(*MODEL_FEATURES, *added))
            results[f"each repository left out, l2={args.l2}, with {name}"] = report(more["predictions"], gold_equal)
    for name, result in results.items():
        if name not in ("timing", "behaviour_coverage"):
            show(name, result)
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
