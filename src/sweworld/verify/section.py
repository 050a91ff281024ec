"""The best-of-n section of the HTML report: pass@k vs best@k (k = 1 .. n) as a grouped bar chart
and a table (sweworld.htmlreport has bar charts only: one group per k)."""

from __future__ import annotations

from sweworld.htmlreport.model import BarChart, Section, Table
from sweworld.verify.bestofn import Selection, curve_rows

TEXT = (
    "Best-of-n with the {verifier} verifier over {instances} instances ({samples} samples; failed ones "
    "left out). pass@k: the chance that at least one of k samples resolves the instance (what a perfect "
    "verifier would reach). best@k: the expected resolve rate of the sample the verifier ranks highest among "
    "k (exact over all k-subsets; tied scores count as a random pick). Mean resolve rate {mean:.1%}; "
    "the verifier's pick among all samples resolves {selected:.1%} of the instances.")


def bestofn_section(selection: Selection, *, title: str = "Best-of-n") -> Section:
    rows = curve_rows(selection)
    chart = BarChart(title=f"pass@k vs best@k ({selection.verifier})", categories=[f"k={k}" for k, _, _ in rows],
                     series={"pass@k": [p for _, p, _ in rows], f"best@k ({selection.verifier})": [b for *_, b in rows]},
                     y_label="resolve rate", y_max=1.0, percent=True)
    table = Table(columns=["k", "pass@k", "best@k", "gap"],
                  rows=[[k, round(p, 4), round(b, 4), round(p - b, 4)] for k, p, b in rows])
    text = TEXT.format(verifier=selection.verifier, instances=selection.instances, samples=selection.samples,
                       mean=selection.mean_resolve, selected=selection.selected_resolve)
    return Section(title=title, text=text, table=table, chart=chart)
