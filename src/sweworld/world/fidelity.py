"""Fidelity: how far the world's predictions are from what really happened, measured on traces.

- SWT, on every ``StepTrace`` routed ``sim``: the prediction for the stored context (rendered in
  SWT's prompt style) against the real result: exit-code accuracy and mean normalized output
  similarity (``metrics.similarity``); predictions that failed (no valid reply) count as wrong.
- SWR, on every ``EvalTrace``: the verdict for the stored context against the real one, decided as
  ``SWR.evaluate`` decides it (an empty patch, or one that does not apply, is unresolved without a
  call; ``no_call`` counts them); accuracy, precision, recall, F1 and the confusion matrix
  (``metrics.binary``), AUC and expected calibration error (10 bins) of P(resolved), and the
  accuracy of always answering the more common verdict beside them (``metrics.scored``);
  ``invalid`` counts evaluations without a valid reply (unresolved).

Per repository, per agent (``EvalTrace.agent``, where the traces name one) and overall, with a train/test split BY REPOSITORY (``split_of``: a hash of the repo
name puts it in ``test`` with probability ``test_fraction``), so that a model trained on the train
repositories' traces is judged on repositories it has never seen. Beside SWE-World's published
SWR figures against real Docker runs (Table 4).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

from pydantic import BaseModel, Field

from sweworld.core.types import Task
from sweworld.htmlreport.model import BarChart, Cell, Section, Table
from sweworld.parallel.map import map_items
from sweworld.world.metrics import binary, scored, similarity
from sweworld.world.swr import SWR
from sweworld.world.swt import SWT
from sweworld.world.traces import EvalTrace, StepTrace

REFERENCE = {
    "SWE-World SWR-72B (Table 4)": {"accuracy": 0.770, "precision": 0.780, "recall": 0.807, "f1": 0.794},
    "SWE-World SWR-32B (Table 4)": {"accuracy": 0.754, "precision": 0.779, "recall": 0.770, "f1": 0.774},
}
"""SWE-World's SWR against real Docker runs on SWE-bench Verified."""
SPLITS = ("all", "train", "test")


def split_of(repo: str, test_fraction: float) -> str:
    """``test`` or ``train``: deterministic by the repository's name."""
    share = int(hashlib.sha256(repo.encode("utf-8")).hexdigest()[:15], 16) / 16**15
    return "test" if share < test_fraction else "train"


class StepScore(BaseModel):
    repo: str
    exit_ok: bool
    similarity: float
    sim_failure: bool = False


class EvalScore(BaseModel):
    repo: str
    predicted: bool
    real: bool
    probability: float = Field(default=0.0, description="P(resolved): the SWR's, else 1/0 from its verdict.")
    agent: str = ""
    called: bool = True
    invalid: bool = False


def score_step(swt: SWT, trace: StepTrace) -> StepScore:
    predicted = swt.predict_context(trace.context)
    return StepScore(repo=trace.repo, exit_ok=predicted.exit_code == trace.exit_code,
                     similarity=similarity(predicted.output, trace.output), sim_failure=predicted.sim_failure)


def score_eval(swr: SWR, trace: EvalTrace) -> EvalScore:
    if not trace.patch.strip() or trace.patch_applies is False:
        return EvalScore(repo=trace.repo, predicted=False, real=trace.resolved, agent=trace.agent, called=False)
    task = Task.model_validate(trace.task)
    report = swr.evaluate_context(task, trace.patch, trace.context)
    p = report.sim_probability if report.sim_probability is not None else float(report.resolved)
    return EvalScore(repo=trace.repo, predicted=report.resolved, real=trace.resolved, probability=p,
                     agent=trace.agent, invalid=report.error is not None)


def swt_metrics(scores: Sequence[StepScore]) -> dict[str, Any]:
    n = len(scores)
    return {"n": n, "exit_code_accuracy": sum(s.exit_ok for s in scores) / n if n else None,
            "output_similarity": sum(s.similarity for s in scores) / n if n else None,
            "sim_failures": sum(s.sim_failure for s in scores)}


def swr_metrics(scores: Sequence[EvalScore]) -> dict[str, Any]:
    ranked = scored([(s.probability, s.real) for s in scores])
    return {**binary([(s.predicted, s.real) for s in scores]),
            **{k: ranked[k] for k in ("auc", "ece", "majority_accuracy")},
            "no_call": sum(not s.called for s in scores), "invalid": sum(s.invalid for s in scores)}


def measure(traces: Iterable[StepTrace | EvalTrace], swt: SWT, swr: SWR, *, test_fraction: float = 0.5,
            workers: int = 1, on_item: Callable[[], None] | None = None) -> dict[str, Any]:
    """Score every sim-routed step and every evaluation (see the module docstring)."""
    traces = list(traces)
    steps = [t for t in traces if isinstance(t, StepTrace) and t.routed == "sim"]
    evals = [t for t in traces if isinstance(t, EvalTrace)]

    def counted(_trace: Any, _score: Any) -> None:
        if on_item:
            on_item()

    step_scores = map_items(steps, partial(score_step, swt), workers=workers, on_done=counted)
    eval_scores = map_items(evals, partial(score_eval, swr), workers=workers, on_done=counted)
    repos = sorted({s.repo for s in step_scores} | {s.repo for s in eval_scores})
    split = {repo: split_of(repo, test_fraction) for repo in repos}

    def block(keep: Callable[[str], bool]) -> dict[str, Any]:
        return {"swt": swt_metrics([s for s in step_scores if keep(s.repo)]),
                "swr": swr_metrics([s for s in eval_scores if keep(s.repo)])}

    return {"test_fraction": test_fraction, "swt_style": swt.config.style, "swr_style": swr.config.style,
            "swr_samples": swr.config.k,
            "splits": {name: block(lambda repo, name=name: name == "all" or split[repo] == name) for name in SPLITS},
            "repos": {repo: {"split": split[repo], **block(lambda r, repo=repo: r == repo)} for repo in repos},
            "agents": {agent: swr_metrics([s for s in eval_scores if s.agent == agent])
                       for agent in sorted({s.agent for s in eval_scores if s.agent})},
            "reference": REFERENCE}


COLUMNS = ["scope", "split", "SWT n", "exit acc", "out sim", "SWR n", "acc", "majority acc", "prec", "rec", "F1",
           "AUC", "ECE", "tp/fp/fn/tn"]


def _row(scope: str, split: str, block: dict[str, Any]) -> list[Cell]:
    swt, swr = block["swt"], block["swr"]
    return [scope, split, swt["n"], _r(swt["exit_code_accuracy"]), _r(swt["output_similarity"]), *_swr_cells(swr)]


def _swr_cells(swr: dict[str, Any]) -> list[Cell]:
    confusion = swr["confusion"]
    return [swr["n"], _r(swr["accuracy"]), _r(swr.get("majority_accuracy")), _r(swr["precision"]),
            _r(swr["recall"]), _r(swr["f1"]), _r(swr.get("auc")), _r(swr.get("ece")),
            "/".join(str(confusion[k]) for k in ("tp", "fp", "fn", "tn"))]


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def rows(result: dict[str, Any]) -> list[list[Cell]]:
    """The fidelity table: overall per split, each repository, then the published references."""
    out = [_row("overall", name, result["splits"][name]) for name in SPLITS]
    out += [_row(repo, block["split"], block) for repo, block in result["repos"].items()]
    out += [[f"agent {agent}", "all", None, None, None, *_swr_cells(swr)]
            for agent, swr in result.get("agents", {}).items()]
    for name, ref in result["reference"].items():
        out.append([name, "Verified", None, None, None, None, ref["accuracy"], None, ref["precision"],
                    ref["recall"], ref["f1"], None, None, None])
    return out


def fidelity_section(result: dict[str, Any], *, title: str = "World fidelity") -> Section:
    """A report section: the table of ``rows`` and a chart of the headline figures per split."""
    categories = [*SPLITS, *result["reference"]]
    splits = [result["splits"][name] for name in SPLITS]
    refs = list(result["reference"].values())
    chart = BarChart(title="Fidelity per split (SWR beside SWE-World's published figures)", categories=categories,
                     series={"SWT exit-code accuracy": [b["swt"]["exit_code_accuracy"] for b in splits],
                             "SWT output similarity": [b["swt"]["output_similarity"] for b in splits],
                             "SWR accuracy": [b["swr"]["accuracy"] for b in splits] + [r["accuracy"] for r in refs],
                             "SWR F1": [b["swr"]["f1"] for b in splits] + [r["f1"] for r in refs]},
                     y_label="share", y_max=1.0, percent=True)
    text = (f"SWT ({result['swt_style']} prompts) on every recorded command that a sim episode would predict, "
            f"SWR ({result['swr_style']} prompts, k={result['swr_samples']}) on every recorded evaluation, both "
            f"against the real results. Repositories are split by a hash of their name (test share "
            f"{result['test_fraction']}): a model fitted on the train repositories is judged on the test ones. "
            "Output similarity is difflib's ratio after masking paths, addresses and timings. The references "
            "are SWE-World's SWR against real Docker runs (arXiv, Table 4).")
    return Section(title=title, text=text, table=Table(columns=COLUMNS, rows=rows(result)), chart=chart)
