"""The demo's world step: sim and hybrid rollouts and the fidelity table, with no GPU and no hub.

The real evaluation and rollout steps before it recorded traces (every step with the context SWT
would have seen, every evaluation with SWR's). A replay server (``sweworld world serve``: a real
local OpenAI-compatible server answering from recorded traces) is given the traces of the *train*
repositories only (split by a hash of the repository name), and plays the served SWT and SWR:

- sim rollouts (oracle-tests, noop) and a hybrid rollout (oracle-tests, audit rate 0.5) run through
  the same loop, tools and summaries as real ones, against that endpoint;
- the fidelity table scores SWT and SWR on every recorded trace against the real results: 1.0 on the
  train repositories the server has seen, an honest figure on the test ones it has not.

With a served model (vLLM, SGLang), the same commands take ``--world-url`` instead.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from rich.table import Table

from sweworld.cli import common
from sweworld.cli.demo.run import traces_path

if TYPE_CHECKING:
    from sweworld.cli.demo.run import DemoRun
    from sweworld.htmlreport import Section

TEST_FRACTION = 0.5
AUDIT_RATE = 0.5


def world(run: DemoRun) -> list[Section]:
    """Sim and hybrid rollouts against a replay of the train repositories' traces; fidelity."""
    from sweworld.agents.config import load_agent_config
    from sweworld.agents.policies import NoopPolicy, TestingOraclePolicy
    from sweworld.backends.hybrid import HybridBackend
    from sweworld.backends.sim import SimBackend
    from sweworld.core.config import RolloutConfig, RunnerConfig
    from sweworld.htmlreport import rollout_section
    from sweworld.runs.rollout import run_rollouts
    from sweworld.world.config import WorldConfig
    from sweworld.world.fidelity import fidelity_section, measure, split_of
    from sweworld.world.replay import ReplayIndex, ReplayServer
    from sweworld.world.traces import load_traces

    if run.backend_name != "real":
        common.out.print(f"[dim]skipped: the world step replays the traces of a real run (this demo ran "
                         f"--backend {run.backend_name})[/dim]")
        return []
    traces = load_traces(traces_path(run.out))
    seen = [t for t in traces if split_of(t.repo, TEST_FRACTION) == "train"]
    common.out.print(f"{len(traces)} traces recorded by the real steps; the replay server serves the "
                     f"{len(seen)} of the train repositories")
    summaries: dict[str, dict] = {}
    with ReplayServer(ReplayIndex(seen)) as url:
        config = WorldConfig.from_options(urls=[url], model="replay", cache=False)
        sim = SimBackend(world=config, builder=run.builder)
        hybrid = HybridBackend(run.builder, config, audit_rate=AUDIT_RATE, sim=sim,
                               traces=run.out / "world" / "hybrid.jsonl")
        for name, policy, backend in (("sim oracle-tests", TestingOraclePolicy, sim), ("sim noop", NoopPolicy, sim),
                                      ("hybrid oracle-tests", TestingOraclePolicy, hybrid)):
            target = run.out / "world" / name.replace(" ", "-")
            shutil.rmtree(target, ignore_errors=True)
            settings = RolloutConfig(out=target, runner=RunnerConfig(workers=run.workers))
            summaries[name] = run_rollouts(run.tasks, policy, settings, agent=load_agent_config(), backend=backend)
        result = measure(traces, config.make_swt(), config.make_swr(), test_fraction=TEST_FRACTION,
                         workers=run.workers)
    print_runs(summaries, "simulated rollouts (replay of the train repositories' traces)")
    print_fidelity(result, f"world fidelity, replayed models (test share {TEST_FRACTION} of the repositories)")
    run.results["world"] = {"rollouts": summaries, "fidelity": result}
    return [rollout_section(summaries, title="Simulated rollouts (sim and hybrid backends, replayed world models)",
                            text=__doc__.split("\n\n")[1]),
            fidelity_section(result)]


def print_runs(summaries: dict[str, dict], title: str) -> None:
    table = Table("run", "resolve rate", "empty-patch rate", "mean steps", "audits and routing", title=title)
    for name, summary in summaries.items():
        table.add_row(name, str(summary.get("resolve_rate")), str(summary.get("empty_patch_rate")),
                      str(summary.get("mean_steps")), "; ".join(
                          audit_text(kind, a) for kind, a in (summary.get("audits") or {}).items()) or "-")
    common.out.print(table)


def audit_text(kind: str, a: dict) -> str:
    text = f"{kind}: {a['agreed']}/{a['audited']} agree (95% {a['wilson95'][0]:.2f}-{a['wilson95'][1]:.2f})"
    if a.get("simulated"):
        text += f", {a['ran_real']}/{a['simulated']} ran for real"
    if a.get("agreement_with_routing") is not None:
        text += (f", agreement with routing {a['agreement_with_routing']:.3f} (same outcome/verdict "
                 f"{a['outcome_agreement_with_routing']:.3f})")
    return text


def print_fidelity(result: dict, title: str) -> None:
    """The fidelity table as two: SWT's columns, then SWR's (one table is too wide for a terminal)."""
    from sweworld.world.fidelity import COLUMNS, rows
    for part, keep in (("SWT", [0, 1, 2, 3, 4]), ("SWR", [0, 1, *range(5, len(COLUMNS))])):
        table = Table(*(COLUMNS[i] for i in keep), title=f"{title}: {part}")
        table.columns[0].no_wrap = True
        for row in rows(result):
            if any(row[i] is not None for i in keep[2:]):
                table.add_row(*("-" if row[i] is None else str(row[i]) for i in keep))
        common.out.print(table)
