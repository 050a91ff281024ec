"""The demo's embedded-world step: the CPU world models, no GPU and no endpoint.

1. A real rollout of the ``explorer-perturb`` policy (it explores, runs the failing tests and a
   reproduction script, then reaches the gold patch or a plausible wrong edit) records traces with
   both outcomes, labelled by the real harness.
2. The embedded SWT is fitted on the traces of the *train* repositories (split by a hash of the
   name) and the tasks' test lists; the embedded SWR is the classifier that ships in the package.
3. Rollouts of ``oracle-tests``, ``noop``, ``perturb`` and ``explorer-perturb`` run on them in sim
   mode and in hybrid mode, the latter with every simulated step and evaluation audited and the
   unsure ones (confidence under ``ROUTE_BELOW``) run for real: the share that ran for real and the
   agreement the agent saw.
4. The fidelity table scores both models on every trace (train and held-out repositories).
"""

from __future__ import annotations

import shutil
from functools import partial
from itertools import product
from typing import TYPE_CHECKING

from sweworld.cli import common
from sweworld.cli.demo.run import traces_path
from sweworld.cli.demo.world import TEST_FRACTION, print_fidelity, print_runs

if TYPE_CHECKING:
    from sweworld.cli.demo.run import DemoRun
    from sweworld.htmlreport import Section

ROUTE_BELOW = 0.9
SAMPLES = 2


def _settings(target, workers: int):
    """The rollouts of this step: SAMPLES per instance into ``target``."""
    from sweworld.core.config import RolloutConfig, RunnerConfig
    return RolloutConfig(out=target, n_samples=SAMPLES, runner=RunnerConfig(workers=workers))


def embedded(run: DemoRun) -> list[Section]:
    """Mixed-outcome traces, then sim and hybrid rollouts and fidelity on the embedded models."""
    from sweworld.agents.config import load_agent_config
    from sweworld.agents.explorer import ExplorerPolicy
    from sweworld.agents.perturb import PerturbPolicy
    from sweworld.agents.policies import NoopPolicy, TestingOraclePolicy
    from sweworld.backends.hybrid import HybridBackend
    from sweworld.backends.real import RealBackend
    from sweworld.backends.sim import SimBackend
    from sweworld.htmlreport import rollout_section
    from sweworld.runs.rollout import run_rollouts
    from sweworld.synth import mutations_for_file
    from sweworld.world.config import WorldConfig
    from sweworld.world.fidelity import fidelity_section, measure, split_of
    from sweworld.world.traces import TraceStore, load_traces

    if run.backend_name != "real":
        common.out.print("[dim]skipped: the embedded world is fitted on the traces of a real run[/dim]")
        return []
    explorer = partial(ExplorerPolicy, fix="perturb", p=0.5, seed=0, mutate=mutations_for_file)
    config = load_agent_config()
    world_dir = run.out / "world"
    target = world_dir / "real-explorer-perturb"
    shutil.rmtree(target, ignore_errors=True)
    real = run_rollouts(run.tasks, explorer, _settings(target, run.workers), agent=config,
                        backend=RealBackend(run.builder, traces=traces_path(run.out)))
    traces = load_traces(traces_path(run.out))
    train = world_dir / "train-traces.jsonl"
    train.unlink(missing_ok=True)
    store = TraceStore(train)
    for trace in traces:
        if split_of(trace.repo, TEST_FRACTION) == "train":
            store.append(trace)
    world = WorldConfig.from_options(urls=None, kind="embedded", traces=[str(train)], dataset=run.dataset)
    sim = SimBackend(world=world, builder=run.builder)
    hybrid = HybridBackend(run.builder, world, audit_rate=1.0, route_below=ROUTE_BELOW, sim=sim)
    summaries = {"real explorer-perturb": real}
    perturb = partial(PerturbPolicy, p=0.5, seed=0, mutate=mutations_for_file)
    policies = {"oracle-tests": TestingOraclePolicy, "noop": NoopPolicy, "perturb": perturb,
                "explorer-perturb": explorer}
    for (policy_name, policy), (mode, backend) in product(policies.items(), (("sim", sim), ("hybrid", hybrid))):
        name = f"{mode} {policy_name}"
        target = world_dir / ("embedded-" + name.replace(" ", "-"))
        shutil.rmtree(target, ignore_errors=True)
        summaries[name] = run_rollouts(run.tasks, policy, _settings(target, run.workers), agent=config,
                                       backend=backend)
    result = measure(traces, sim.swt, sim.swr, test_fraction=TEST_FRACTION, workers=run.workers)
    print_runs(summaries, "embedded world models (CPU): real vs simulated rollouts")
    print_fidelity(result, f"world fidelity, embedded models (test share {TEST_FRACTION} of the repositories)")
    run.results["embedded"] = {"rollouts": summaries, "fidelity": result}
    return [rollout_section(summaries, title="Embedded world models: real, sim and hybrid rollouts",
                            text=__doc__.split("\n\n")[1]),
            fidelity_section(result, title="World fidelity, embedded models")]
