"""Embedded world models on repositories held out from fitting, and hybrid confidence routing.

    python benchmarks/world_embedded.py [--dataset lite] [--instances 16] [--samples 2] \
        [--traces T.jsonl] [--route-below 0.5 0.7 0.9] [--out runs/bench-embedded]

1. Traces with both outcomes: real rollouts of the ``explorer-perturb`` policy (skipped with
   ``--traces``): every command with its context, every evaluation labelled by the real harness.
2. Repositories are split by a hash of the name (``fidelity.split_of``, test share 0.5). The
   embedded SWT and SWR are fitted on the train repositories only and scored on the held-out ones:
   SWT exit-code accuracy and output similarity, SWR accuracy/precision/recall/F1, ms per call.
3. Hybrid routing on the held-out instances: ``explorer-perturb`` rollouts with every simulated step
   audited and the predictions under each ``--route-below`` run for real: the share of simulated steps
   that ran for real and the agreement the agent experienced (exact: same outcome and output
   similarity >= 0.9; outcome: same exit code and, for test runs, the same closing counts).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from functools import partial
from pathlib import Path

from sweworld.agents.config import load_agent_config
from sweworld.agents.explorer import ExplorerPolicy
from sweworld.backends.hybrid import HybridBackend
from sweworld.backends.real import RealBackend
from sweworld.backends.sim import SimBackend
from sweworld.core.config import RolloutConfig, RunnerConfig
from sweworld.datasets import path_of
from sweworld.runs.rollout import run_rollouts
from sweworld.surrogates.swr import EmbeddedSWR, EmbeddedSWRConfig
from sweworld.surrogates.swr.predict import repo_sources
from sweworld.surrogates.swr.swr import predictor as swr_predictor
from sweworld.surrogates.swr.train import train
from sweworld.surrogates.swt import evaluate as swt_eval
from sweworld.synth import mutations_for_file
from sweworld.tasks import load_tasks
from sweworld.world.config import WorldConfig
from sweworld.world.fidelity import split_of
from sweworld.world.traces import TraceStore, load_traces


def spread(tasks, n: int):
    """``n`` tasks, round-robin over repositories."""
    by_repo: dict[str, list] = {}
    for task in tasks:
        by_repo.setdefault(task.repo, []).append(task)
    out = []
    while len(out) < n and any(by_repo.values()):
        for items in by_repo.values():
            if items and len(out) < n:
                out.append(items.pop(0))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="lite")
    parser.add_argument("--instances", type=int, default=16)
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--traces")
    parser.add_argument("--route-below", type=float, nargs="+", default=[0.5, 0.7, 0.9])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("runs/bench-embedded"))
    args = parser.parse_args()
    tasks = spread(list(load_tasks(path_of(args.dataset))), args.instances)
    explorer = partial(ExplorerPolicy, fix="perturb", p=0.5, seed=0, mutate=mutations_for_file)
    config, real = load_agent_config(), RealBackend()
    traces_path = Path(args.traces) if args.traces else args.out / "traces.jsonl"
    if not args.traces:
        started = time.monotonic()
        run_rollouts(tasks, explorer,
                     RolloutConfig(out=args.out / "real", n_samples=args.samples, runner=RunnerConfig(workers=args.workers)),
                     agent=config, backend=RealBackend(real.builder, traces=traces_path))
        print(f"real rollouts: {time.monotonic() - started:.0f}s")
    traces = load_traces(traces_path)
    test_repos = sorted({t.repo for t in traces if split_of(t.repo, 0.5) == "test"})
    print(f"{len(traces)} traces; held-out repositories: {', '.join(test_repos)}")

    _, swr_report = train(traces, repo_sources())
    print("SWR held out:", json.dumps(swr_report.get("held_out"), default=str)[:600])

    with tempfile.TemporaryDirectory() as tmp:
        train_traces, swr_path = Path(tmp) / "train.jsonl", str(Path(tmp) / "swr.json")
        store = TraceStore(train_traces)
        for trace in traces:
            if trace.repo not in test_repos:
                store.append(trace)
        held_swr, _ = train([t for t in traces if t.repo not in test_repos], repo_sources(), test_fraction=0.0)
        held_swr.save(swr_path)
        for name, predictor in (("default predictor", None),
                                ("the SWR of the train repositories as predictor", swr_predictor(swr_path))):
            swt_report = swt_eval.held_out(traces, tasks, predictor=predictor)
            print(f"SWT held out, {name}:",
                  json.dumps({k: v for k, v in swt_report.items() if k != "test_repos"}, default=str)[:700])
        world = WorldConfig.from_options(urls=None, kind="embedded", traces=[str(train_traces)], dataset=args.dataset)
        world.swr_model = {"path": swr_path}
        world.swt_model["predictor_model"] = swr_path  # the SWT's per-test predictions: the same held-out SWR
        sim = SimBackend(world=world, builder=real.builder, swr=EmbeddedSWR(config=EmbeddedSWRConfig(path=swr_path)))
        held = [t for t in tasks if t.repo in test_repos]
        print(f"hybrid on {len(held)} held-out instances, every simulated step audited:")
        for below in args.route_below:
            hybrid = HybridBackend(real.builder, world, audit_rate=1.0, route_below=below, sim=sim)
            summary = run_rollouts(held, explorer,
                                   RolloutConfig(out=args.out / f"hybrid-{below}", runner=RunnerConfig(workers=args.workers)),
                                   agent=config, backend=hybrid)
            steps = summary["audits"]["steps"]
            print(f"  route below {below}: {steps['ran_real']}/{steps['simulated']} steps ran for real "
                  f"({steps['share_real']}); agreement the agent saw {steps.get('agreement_with_routing')} exact, "
                  f"{steps.get('outcome_agreement_with_routing')} same outcome; audited sim steps "
                  f"{steps['agreed']}/{steps['audited']} exact, outcome {steps['outcome_agreement']}")


if __name__ == "__main__":
    main()
