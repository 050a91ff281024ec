"""Best-of-n with verifiers on repositories held out from the verifier's training (issue 13's goal).

    python benchmarks/bestofn.py [--policy perturb] [--per-repo 3] [--samples 8] [--workers 2] \
        [--out runs/bench-bestofn]

1. Real rollouts of the ``perturb`` policy (the gold patch with probability 0.5, else a plausible
   wrong or partial edit; ``--policy explorer-perturb``: the same edits after exploring, with test
   runs before and after them), ``--samples`` per instance, ``--per-repo`` instances of every repository
   of the default dataset (resumable: a rerun only runs what is missing).
2. Repositories are split by a hash of the name (``fidelity.split_of``, test share 0.5). The
   embedded verifier is trained on the train repositories' rollouts only, with each feature set:
   ``blind`` (the trajectory and the diff alone, plus the agreement among an instance's samples),
   ``solo`` (blind without the agreement: each sample judged alone) and ``reference`` (blind plus
   the diff against the gold patch, as SWE-World's SWR sees it: not a test-time verifier).
3. On the held-out repositories' rollouts: pass@k and best@k (k = 1..n) of each verifier (embedded
   blind, solo and reference, swr: the shipped embedded SWR, which also reads the gold patch,
   random, oracle; with ``--hybrid`` also R2E-Gym's hybrid rule over the embedded blind verifier,
   which runs the regression tests of the kept samples for real), the mean resolve rate, and
   the goal: best@n within 5 points of pass@n and above the mean by at least half of the
   pass@n - mean gap.
"""

from __future__ import annotations

import argparse
import time
from functools import partial
from pathlib import Path

from sweworld.agents.config import load_agent_config
from sweworld.agents.explorer import ExplorerPolicy
from sweworld.agents.perturb import PerturbPolicy
from sweworld.backends.real import RealBackend
from sweworld.core.config import RolloutConfig, RunnerConfig, Timeouts
from sweworld.core.config.timeouts import COMMAND
from sweworld.data.sft import load_runs
from sweworld.datasets import path_of
from sweworld.runs.rollout import run_rollouts
from sweworld.synth import mutations_for_file
from sweworld.tasks import load_tasks
from sweworld.verify import create_verifier, select
from sweworld.verify.embedded import FEATURE_SETS, train_verifier
from sweworld.verify.regression import HybridVerifier
from sweworld.world.fidelity import split_of

TEST_SHARE = 0.5


def per_repo(tasks, n: int):
    """The first ``n`` tasks of every repository."""
    out, seen = [], {}
    for task in tasks:
        seen[task.repo] = seen.get(task.repo, 0) + 1
        if seen[task.repo] <= n:
            out.append(task)
    return out


def goal(selection, n: int) -> tuple[bool, bool]:
    """(best@n within 5 points of pass@n, best@n - mean >= (pass@n - mean) / 2)."""
    best, passed, mean = selection.best_at[n], selection.pass_at[n], selection.mean_resolve
    return passed - best <= 0.05 + 1e-9, best - mean >= (passed - mean) / 2 - 1e-9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="default")
    parser.add_argument("--policy", choices=("perturb", "explorer-perturb"), default="perturb")
    parser.add_argument("--per-repo", type=int, default=3)
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120.0, help=(
        "seconds per episode and per evaluation (a mutation can make a test loop forever; a timed-out "
        "evaluation counts as unresolved, as SWE-bench counts it)"))
    parser.add_argument("--hybrid", action="store_true", help="also the hybrid rule (real regression test runs)")
    parser.add_argument("--out", type=Path, default=Path("runs/bench-bestofn"))
    args = parser.parse_args()
    tasks = per_repo(load_tasks(path_of(args.dataset)), args.per_repo)
    run = args.out / args.policy
    make = (partial(PerturbPolicy, p=0.5, seed=0, mutate=mutations_for_file) if args.policy == "perturb" else
            partial(ExplorerPolicy, fix="perturb", p=0.5, seed=0, mutate=mutations_for_file))
    started = time.monotonic()
    run_rollouts(tasks, make,
                 RolloutConfig(out=run, n_samples=args.samples, runner=RunnerConfig(workers=args.workers),
                               timeouts=Timeouts(command=min(args.timeout, COMMAND), evaluation=args.timeout)),
                 agent=load_agent_config(), backend=RealBackend())
    print(f"rollouts: {len(tasks)} instances x {args.samples} samples in {time.monotonic() - started:.0f}s "
          "(0 s when they were there already)")
    by_id = {t.instance_id: t for t in tasks}
    found = [(r, t) for r, t in load_runs([run]) if t.instance_id in by_id and t.sample < args.samples]
    held = {t.repo for t in tasks if split_of(t.repo, TEST_SHARE) == "test"}
    train = [(r, t) for r, t in found if by_id[t.instance_id].repo not in held]
    test = [(r, t) for r, t in found if by_id[t.instance_id].repo in held]
    print(f"train repositories: {', '.join(sorted({t.repo for t in tasks} - held))} ({len(train)} samples); "
          f"held out: {', '.join(sorted(held))} ({len(test)} samples)")
    verifiers = {}
    for feature_set in FEATURE_SETS:
        model = train_verifier(train, by_id, feature_set=feature_set)
        verifiers[f"embedded-{feature_set}"] = create_verifier("embedded", model=model)
        print(f"embedded ({feature_set}) trained on {model.meta['examples']} samples "
              f"({model.meta['resolved']} resolved); training accuracy {model.meta['train_accuracy']:.3f}")
    verifiers.update(swr=create_verifier("swr"), random=create_verifier("random", seed=0), oracle=create_verifier("oracle"))
    if args.hybrid:
        verifiers["hybrid-embedded-blind"] = HybridVerifier(verifiers["embedded-blind"], create_verifier("tests"))
    n = args.samples
    print(f"\n| verifier | {' | '.join(f'best@{k}' for k in range(1, n + 1))} | picks resolve | goal at k={n} |")
    print(f"| --- | {' | '.join('---:' for _ in range(n))} | ---: | --- |")
    selections = {name: select(test, verifier, by_id) for name, verifier in verifiers.items()}
    any_selection = next(iter(selections.values()))
    print(f"| pass@k | {' | '.join(f'{any_selection.pass_at[k]:.3f}' for k in range(1, n + 1))} | | |")
    for name, selection in selections.items():
        within, above = goal(selection, n)
        verdict = "met" if within and above else f"not met (within 5 points: {within}; half the gap: {above})"
        print(f"| {name} | {' | '.join(f'{selection.best_at[k]:.3f}' for k in range(1, n + 1))} | "
              f"{selection.selected_resolve:.3f} | {verdict} |")
    print(f"\nheld out: {any_selection.instances} instances, {any_selection.samples} samples, mean resolve "
          f"{any_selection.mean_resolve:.3f}, pass@{n} {any_selection.pass_at[n]:.3f}")


if __name__ == "__main__":
    main()
