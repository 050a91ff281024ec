"""The demo's data step: the training sets a run of the demo yields (docs/data.md).

- SFT rows (``sweworld export sft``) from the real rollouts: resolved trajectories that end in a
  submit, at most 2 per instance, in OpenAI tool-call form;
- world-model rows (``sweworld export world``) from the traces: SWT rows for the commands a sim
  episode predicts, SWR rows for the evaluations SWR is asked about, rendered by the same templates
  the served world models are prompted with;
- a best-of-n selection (``sweworld select``) over the real ``explorer-perturb`` samples with the
  ``swr`` verifier (the embedded SWR on the final diff) beside ``random``: pass@k and best@k. The
  shipped SWR compares a patch with the gold one, so on these synthesized instances it is close to
  an oracle: the curve shows the machinery, not a verifier's merit. The ``embedded`` verifier
  (``sweworld verifier train``: trajectory and diff, no gold patch) is trained on the same samples
  and selects among them: in-sample, so it too shows the machinery (benchmarks/bestofn.py measures
  it on held-out repositories).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from sweworld.cli import common
from sweworld.cli.demo.run import traces_path

if TYPE_CHECKING:
    from sweworld.cli.demo.run import DemoRun
    from sweworld.htmlreport import Section

CAP = 2


def data(run: DemoRun) -> list[Section]:
    """Export the SFT set and the SWT/SWR sets of this run."""
    from sweworld.data.sft import SFTOptions, write_sft
    from sweworld.data.world import write_world
    from sweworld.htmlreport import Section
    from sweworld.htmlreport import Table as ReportTable

    runs = sorted(p.parent for p in run.out.glob("**/trajectories.jsonl") if "real" in p.parent.name
                  or p.parent.parent.name == "rollouts")
    out = run.out / "data"
    sft = write_sft(runs, out / "sft.jsonl", SFTOptions(cap_per_instance=CAP))
    world = write_world([traces_path(run.out)], out / "world") if traces_path(run.out).is_file() else {}
    rows = [["SFT (resolved, submitted, <= 2 per instance)", sft.rows, sft.trajectories,
             ", ".join(f"{k} {v}" for k, v in sft.removed.items() if v) or "-", str(out / "sft.jsonl")]]
    swt, swr = world.get("swt") or {}, world.get("swr") or {}
    rows.append(["SWT rows (sim-routed commands, <= 6 per episode)", swt.get("rows", 0),
                 f"{swt.get('sim_routed', 0)} of {swt.get('steps', 0)} steps",
                 f"duplicates {swt.get('duplicates', 0)}, over cap {swt.get('over_cap', 0)}",
                 str(out / "world" / "swt.jsonl")])
    rows.append(["SWR rows (evaluations SWR is asked about)", swr.get("rows", 0),
                 f"{swr.get('evaluations', 0)} evaluations",
                 f"not asked {swr.get('not_asked', 0)}, duplicates {swr.get('duplicates', 0)}",
                 str(out / "world" / "swr.jsonl")])
    table = Table("set", "rows", "from", "removed", "file", title="training data from this run")
    for row in rows:
        table.add_row(*(str(cell) for cell in row))
    common.out.print(table)
    run.results["data"] = {"sft": sft.model_dump(), "world": world}
    return [Section(title="Training data", text=__doc__.split("\n\n")[1],
                    table=ReportTable(columns=["set", "rows", "from", "removed", "file"], rows=rows)),
            *best_of_n(run)]


def best_of_n(run: DemoRun) -> list[Section]:
    """pass@k and best@k of the real explorer-perturb samples, with the swr, random and embedded verifiers."""
    from sweworld.core.errors import SWEWorldError
    from sweworld.data.sft import load_runs, write_jsonl
    from sweworld.verify import create_verifier
    from sweworld.verify.bestofn import predictions, select
    from sweworld.verify.embedded import train_verifier
    from sweworld.verify.section import bestofn_section

    samples = run.out / "world" / "real-explorer-perturb"
    if not (samples / "trajectories.jsonl").is_file():
        return []
    found = load_runs([samples])
    tasks = {t.instance_id: t for t in run.tasks}
    table = Table("verifier", "samples", "mean resolve", "selected resolve", "pass@k", "best@k",
                  title="best-of-n over the real explorer-perturb samples")
    sections = []
    verifiers = {"swr": create_verifier("swr"), "random": create_verifier("random", seed=0)}
    try:
        verifiers["embedded"] = create_verifier("embedded", model=train_verifier(found, tasks))
    except SWEWorldError as exc:  # one class only among the samples: nothing to learn
        common.out.print(f"embedded verifier not trained: {exc.message}", **common.PLAIN)
    for name, verifier in verifiers.items():
        selection = select(found, verifier, tasks)
        ks = " ".join(f"{k}:{v:.2f}" for k, v in selection.pass_at.items())
        bs = " ".join(f"{k}:{v:.2f}" for k, v in selection.best_at.items())
        table.add_row(name, str(selection.samples), f"{selection.mean_resolve:.3f}",
                      f"{selection.selected_resolve:.3f}", ks, bs)
        write_jsonl(run.out / "data" / f"best-of-n-{name}.jsonl", predictions(selection))
        sections.append(bestofn_section(selection, title=f"Best-of-n ({name} verifier)"))
    common.out.print(table)
    return sections
