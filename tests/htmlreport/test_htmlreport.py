"""sweworld.htmlreport: well-formed self-contained HTML, SVG bars, escaping, atomic writes, JSON round trip."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

from sweworld.htmlreport import (
    BarChart,
    Report,
    Section,
    Table,
    evaluation_section,
    instances_section,
    nice_max,
    read_report,
    render_bar_chart,
    render_html,
    rollout_section,
    write_html,
)
from sweworld.trajectory import Step, Trajectory

SVG = "{http://www.w3.org/2000/svg}"
VOID = {"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "source", "wbr"}
ROLLOUTS = {
    "oracle": {"trajectories": 4, "instances": 2, "resolve_rate": 1.0, "empty_patch_rate": 0.0, "stuck_rate": 0.0,
               "mean_steps": 3.0, "mean_tokens": 0.0, "exit_status": {"submitted": 4}, "pass@1": 1.0, "pass@2": 1.0},
    "noop": {"trajectories": 4, "instances": 2, "resolve_rate": 0.0, "empty_patch_rate": 1.0, "stuck_rate": 0.25,
             "mean_steps": 1.5, "mean_tokens": 10.0, "exit_status": {"stuck": 1, "submitted": 3}, "pass@1": 0.0,
             "pass@2": 0.0},
}
EVALS = {
    "gold": {"total_instances": 4, "submitted_instances": 4, "completed_instances": 3, "resolved_instances": 3,
             "unresolved_instances": 0, "empty_patch_instances": 0, "error_instances": 1},
    "empty": {"total_instances": 4, "submitted_instances": 4, "completed_instances": 0, "resolved_instances": 0,
              "unresolved_instances": 0, "empty_patch_instances": 4, "error_instances": 0},
}


class Checker(HTMLParser):
    """Balanced tags (void elements aside); collects tags and text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse_html(text: str) -> Checker:
    checker = Checker()
    checker.feed(text)
    checker.close()
    assert checker.stack == []
    return checker


def svgs(text: str) -> list[ET.Element]:
    return [ET.fromstring(chunk) for chunk in re.findall(r"<svg\b.*?</svg>", text, re.S)]


def bars(root: ET.Element) -> list[ET.Element]:
    return [r for r in root.iter(f"{SVG}rect") if r.get("class") == "bar"]


def demo_report(title: str = "sweworld demo") -> Report:
    return Report(title=title, subtitle="default dataset", meta={"dataset": "default", "duration": "12 s"},
                  sections=[evaluation_section(EVALS), rollout_section(ROLLOUTS)])


def test_html_is_well_formed_and_self_contained(tmp_path):
    path = write_html(tmp_path / "out", demo_report())
    assert path == tmp_path / "out" / "index.html"
    text = path.read_text(encoding="utf-8")
    checker = parse_html(text)
    tags = {tag for tag, _ in checker.tags}
    assert {"html", "style", "svg", "table", "section"} <= tags
    assert not tags & {"script", "link", "img", "iframe"}
    assert not re.search(r"(src|href)=|url\(|@import|https?://(?!www\.w3\.org/2000/svg)", text)
    body = " ".join(checker.text)
    for word in ("sweworld demo", "default dataset", "duration", "12 s", "oracle", "noop", "gold", "pass@2",
                 "resolve rate", "stuck: 1, submitted: 3"):
        assert word in body


def test_svg_bars_per_series_and_category():
    root, = svgs(render_bar_chart(rollout_section(ROLLOUTS).chart))
    found = bars(root)
    assert len(found) == 2 * 3
    for series in ("resolve rate", "empty-patch rate", "stuck rate"):
        assert sorted(r.get("data-category") for r in found if r.get("data-series") == series) == ["noop", "oracle"]
    labels = [t.text for t in root.iter(f"{SVG}text")]
    assert {"oracle", "noop", "100%", "25%", "0%", "resolve rate", "Rates per policy"} <= set(labels)
    stuck = next(r for r in found if r.get("data-series") == "stuck rate" and r.get("data-category") == "noop")
    full = next(r for r in found if r.get("data-series") == "resolve rate" and r.get("data-category") == "oracle")
    assert float(stuck.get("height")) == pytest.approx(float(full.get("height")) / 4)
    assert len([g for g in root.iter(f"{SVG}line") if g.get("class") == "grid"]) == 6  # 0..100% by 20


def test_evaluation_section_shares_and_table():
    section = evaluation_section(EVALS)
    assert section.chart.series["resolved"] == [0.75, 0.0]
    assert section.chart.series["empty patch"] == [0.0, 1.0]
    assert section.table.rows[0][-1] == 0.75
    assert len(bars(svgs(render_bar_chart(section.chart))[0])) == 2 * 4


def test_script_in_titles_is_escaped(tmp_path):
    evil = "<script>alert('x')</script>"
    report = Report(title=evil, subtitle=evil, meta={evil: evil}, sections=[
        Section(title=evil, text=evil, table=Table(columns=[evil], rows=[[evil]]),
                chart=BarChart(title=evil, categories=[evil], series={evil: [0.5]}, y_label=evil))])
    text = write_html(tmp_path, report).read_text(encoding="utf-8")
    assert "<script" not in text
    assert "&lt;script&gt;" in text
    checker = parse_html(text)
    assert "script" not in {tag for tag, _ in checker.tags}
    assert evil in " ".join(checker.text)
    root, = svgs(text)
    bar, = bars(root)
    assert bar.get("data-series") == evil and bar.get("data-category") == evil


def test_atomic_write_leaves_no_temp_files(tmp_path):
    write_html(tmp_path, demo_report())
    write_html(tmp_path, demo_report("again"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.html", "report.json"]
    assert "again" in (tmp_path / "index.html").read_text(encoding="utf-8")


def test_json_round_trip(tmp_path):
    report = demo_report()
    report.sections.append(instances_section([{"instance_id": "a-1", "policy": "oracle", "sample": 0,
                                               "resolved": True, "steps": 3, "exit_status": "submitted"}]))
    write_html(tmp_path, report)
    assert read_report(tmp_path) == report
    assert Report.model_validate(json.loads((tmp_path / "report.json").read_text())) == report


def test_same_input_gives_same_bytes(tmp_path):
    write_html(tmp_path / "a", demo_report())
    write_html(tmp_path / "b", demo_report())
    for name in ("index.html", "report.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


@pytest.mark.parametrize("chart", [
    BarChart(title="nothing"),
    BarChart(categories=["a", "b"]),
    BarChart(categories=[], series={"s": []}),
])
def test_empty_charts(chart):
    root, = svgs(render_bar_chart(chart))
    assert bars(root) == []
    assert "no data" in [t.text for t in root.iter(f"{SVG}text")]


def test_zero_and_missing_values():
    chart = BarChart(categories=["a", "b", "c"], series={"x": [0.0, None], "y": [0.0, float("nan"), 0.0]})
    assert chart.series["x"] == [0.0, None, None]
    assert chart.series["y"] == [0.0, None, 0.0]
    root, = svgs(render_bar_chart(chart))
    found = bars(root)
    assert len(found) == 3 and all(float(r.get("height")) == 0 for r in found)
    assert [t.text for t in root.iter(f"{SVG}text")].count("n/a") == 3
    assert nice_max(0) == 1.0  # all-zero data still gets an axis


def test_rollout_section_with_an_empty_summary():
    section = rollout_section({"none": {"trajectories": 0}})
    assert section.table.rows[0][:3] == ["none", 0, None]
    assert bars(svgs(render_bar_chart(section.chart))[0]) == []
    parse_html(render_html(Report(title="t", sections=[section])))


@pytest.mark.parametrize("n_categories", [1, 7, 20])
@pytest.mark.parametrize("n_series", [1, 4])
def test_chart_sizes(n_categories, n_series):
    cats = [f"project__project-{i:05d}-with-a-long-name" for i in range(n_categories)]
    chart = BarChart(categories=cats, series={f"s{k}": [i * 1.7 + k for i in range(n_categories)]
                                                for k in range(n_series)})
    root, = svgs(render_bar_chart(chart))
    assert len(bars(root)) == n_categories * n_series
    width = float(root.get("width"))
    assert 300 < width <= 1200
    assert all(float(r.get("x")) >= 0 and float(r.get("x")) + float(r.get("width")) <= width for r in bars(root))


@pytest.mark.parametrize(("value", "expected"), [(0.7, 1.0), (1.0, 1.0), (3.2, 5.0), (12, 20), (2.1, 2.5), (96.9, 100)])
def test_nice_max(value, expected):
    assert nice_max(value) == pytest.approx(expected)


def test_instances_section_from_trajectories_and_rows():
    trajs = [Trajectory(instance_id="b-2", policy="noop", sample=1, exit_status="stuck", reward=0.0,
                        steps=[Step(index=0, tool="t")]),
             Trajectory(instance_id="a-1", policy="oracle", exit_status="submitted", reward=1.0),
             Trajectory(instance_id="a-1", policy="noop", exit_status="error")]
    section = instances_section(trajs)
    assert section.table.rows == [["a-1", "noop", 0, None, 0, "error"], ["a-1", "oracle", 0, True, 0, "submitted"],
                                  ["b-2", "noop", 1, False, 1, "stuck"]]
    assert section.text == "3 trajectories over 2 instances; 1 resolved."
    text = render_html(Report(title="t", sections=[section]))
    cells = [a.get("class") for tag, a in parse_html(text).tags if tag == "td"]
    assert {"yes", "no", "none", "num"} <= set(cells)
    assert instances_section([]).text == "No trajectories."


def test_table_rows_must_match_columns():
    with pytest.raises(ValueError):
        Table(columns=["a", "b"], rows=[["only one"]])
    with pytest.raises(ValueError):
        BarChart(categories=["a"], series={"s": [1.0, 2.0]})
