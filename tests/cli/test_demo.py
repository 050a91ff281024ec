"""``sweworld demo``: the deterministic choice of instances, the lite -> default fallback, and a real
run on two real bug instances (environments, isolation, evaluation, rollouts, HTML report)."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

import sweworld.datasets as datasets
from sweworld.cli.app import app
from sweworld.cli.demo import command as demo_cmd
from sweworld.core.types import Task
from sweworld.htmlreport import read_report

SHIPPED = Path(datasets.__file__).parent


def bug_rows() -> list[dict]:
    rows = [json.loads(line) for line in (SHIPPED / "demo.jsonl").read_text().splitlines() if line.strip()]
    return [row for row in rows if row["FAIL_TO_PASS"]]


def task(instance_id: str, repo: str, method: str | None = None) -> Task:
    extra = {"method": method} if method else {}
    return Task(instance_id=instance_id, repo=repo, base_commit="0" * 40, FAIL_TO_PASS=["t::x"], **extra)


def test_choose_takes_one_per_repository_first_then_round_robin():
    tasks = [task("b1", "b/b"), task("b2", "b/b"), task("b3", "b/b"), task("a1", "a/a"), task("c1", "c/c"),
             task("a2", "a/a")]
    assert [t.instance_id for t in demo_cmd.choose(tasks, 4)] == ["a1", "b1", "c1", "a2"]
    assert [t.instance_id for t in demo_cmd.choose(tasks, 99)] == ["a1", "b1", "c1", "a2", "b2", "b3"]
    assert [t.instance_id for t in demo_cmd.choose(list(reversed(tasks)), 3)] == ["a2", "b3", "c1"]
    assert demo_cmd.choose([], 4) == []


def test_choose_varies_methods_within_a_repository():
    tasks = [task("x1", "p/x", "flip"), task("x2", "p/x", "flip"), task("x3", "p/x", "drop"),
             task("x4", "p/x", "swap"), task("y1", "p/y", "flip")]
    assert [t.instance_id for t in demo_cmd.choose(tasks, 4)] == ["x1", "y1", "x3", "x4"]


def test_lite_falls_back_to_the_default_dataset(tmp_path, monkeypatch):
    root = tmp_path / "datasets"
    root.mkdir()
    (root / "demo.jsonl").write_text("".join(json.dumps(r) + "\n" for r in bug_rows()))
    monkeypatch.setattr(datasets, "_root", lambda: root)
    assert demo_cmd.resolve_dataset("lite") == "default"
    assert demo_cmd.resolve_dataset("smoke") == "smoke"
    (root / "lite.jsonl").write_text((root / "demo.jsonl").read_text())
    assert demo_cmd.resolve_dataset("lite") == "lite"


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


@pytest.mark.slow
@pytest.mark.bwrap
@pytest.mark.network
def test_demo_runs_end_to_end_and_writes_the_report(tmp_path):
    rows = bug_rows()[:2]
    dataset = tmp_path / "two.jsonl"
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "demo"
    result = CliRunner().invoke(app, ["demo", "--dataset", str(dataset), "--instances", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    text = result.output
    ids = [row["instance_id"] for row in rows]
    for title in ("environments", "two episodes, one environment", "docker-free evaluation",
                  "rollouts (agent loop + tools", "simulated rollouts", "world fidelity",
                  "embedded world models (CPU)", "world fidelity, embedded models", "training data from this run"):
        assert title in text, title
    assert re.search(r"│ gold\s+│ 2\s+│ 2\s+│", text), text  # both gold patches resolve
    assert re.search(r"│ empty\s+│ 2\s+│ 0\s+│", text), text
    assert re.search(r"│ oracle-tests\s+│ 4\s+│ 1\.0\s+│", text), text
    assert re.search(r"│ noop\s+│ 4\s+│ 0\.0\s+│ 1\.0\s+│", text), text
    assert "base tree untouched: True" in text
    html = out / "report" / "index.html"
    assert f"report: {html}" in text.replace("\n", "")
    assert html.is_file() and (out / "gold.demo.json").is_file() and (out / "rollouts" / "oracle-tests").is_dir()

    page = Page()
    page.feed(html.read_text(encoding="utf-8"))
    page.close()
    tags = [tag for tag, _ in page.tags]
    assert tags[0] == "html" and "svg" in tags
    bars = [attrs for tag, attrs in page.tags if tag == "rect" and "bar" in (attrs.get("class") or "").split()]
    assert bars and any(attrs.get("data-category") == "oracle-tests" for attrs in bars)
    body = " ".join(page.text)
    for instance_id in ids:
        assert instance_id in body
    report = read_report(out / "report")
    assert set(report.meta) >= {"dataset", "instances", "date", "duration", "sweworld"}
    assert report.meta["instances"] == "2"
    titles = [section.title for section in report.sections]
    assert titles[0] == "Instances" and "Isolation" in titles and "Trajectories" in titles
    assert "World fidelity" in titles and "World fidelity, embedded models" in titles
    assert (out / "world" / "traces.jsonl").is_file() and (out / "world" / "sim-oracle-tests").is_dir()
    assert "Training data" in titles and (out / "data" / "sft.jsonl").stat().st_size > 0
    assert "Best-of-n (swr verifier)" in titles and (out / "data" / "best-of-n-swr.jsonl").is_file()
    assert (out / "data" / "world" / "swt.jsonl").is_file() and (out / "data" / "world" / "swr.jsonl").is_file()
    assert sum(section.chart is not None for section in report.sections) >= 2
