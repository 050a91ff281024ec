"""sweworld.datasets and ``--dataset`` resolution: shipped names (``.jsonl`` and ``.jsonl.gz``), the
default (``default.jsonl.gz`` once it ships, ``demo.jsonl`` until then), ``--dataset default --split lite``,
and ``sweworld datasets ls``."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import sweworld.datasets as datasets
from sweworld.cli import common
from sweworld.cli.app import app
from sweworld.core.errors import DatasetError

SHIPPED = Path(datasets.__file__).parent


def demo_rows() -> list[dict]:
    return [json.loads(line) for line in (SHIPPED / "demo.jsonl").read_text().splitlines() if line.strip()]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    text = "".join(json.dumps(row) + "\n" for row in rows)
    if path.name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            handle.write(text)
    else:
        path.write_text(text)
    return path


def synthesized(rows: list[dict], prefix: str) -> list[dict]:
    """Bug instances renamed and tagged with a synthesis method, as ``sweworld synth`` writes them."""
    methods = ["flip_comparison", "remove_return", "flip_comparison"]
    return [{**row, "instance_id": f"{prefix}-{i}", "method": methods[i % len(methods)]}
            for i, row in enumerate(r for r in rows if r["FAIL_TO_PASS"])]


@pytest.fixture
def package_root(tmp_path, monkeypatch) -> Path:
    """An empty stand-in for the package's dataset directory."""
    root = tmp_path / "datasets"
    root.mkdir()
    monkeypatch.setattr(datasets, "_root", lambda: root)
    return root


@pytest.fixture
def shipped(package_root) -> Path:
    """The layout once the synthesized datasets ship: default + lite (gzipped), demo, smoke, and clutter."""
    rows = demo_rows()
    write_jsonl(package_root / "default.jsonl.gz", synthesized(rows, "default"))
    write_jsonl(package_root / "lite.jsonl.gz", synthesized(rows, "lite")[:2])
    write_jsonl(package_root / "demo.jsonl", rows)
    write_jsonl(package_root / "smoke.jsonl", [r for r in rows if not r["FAIL_TO_PASS"]])
    (package_root / "__init__.py").write_text("")
    (package_root / "README.md").write_text("not a dataset\n")
    (package_root / ".jsonl.gz").write_text("")
    return package_root


def test_the_package_ships_demo_and_smoke():
    found = datasets.available()
    assert {"demo", "smoke"} <= set(found)
    assert all(path.is_file() and not path.name.startswith(".") for path in found.values())
    assert datasets.path_of("demo") == found["demo"]
    assert datasets.default_path() == found.get("default", found["demo"])


def test_available_lists_jsonl_and_jsonl_gz_by_name(shipped):
    found = datasets.available()
    assert list(found) == ["default", "demo", "lite", "smoke"]
    assert found["default"].name == "default.jsonl.gz" and found["lite"].name == "lite.jsonl.gz"
    assert found["demo"].name == "demo.jsonl"


def test_gz_wins_over_jsonl_of_the_same_name(shipped):
    write_jsonl(shipped / "lite.jsonl", demo_rows()[:1])
    assert datasets.available()["lite"].name == "lite.jsonl.gz"


def test_default_is_default_jsonl_gz_when_it_ships(shipped):
    assert datasets.default_path() == shipped / "default.jsonl.gz"
    assert datasets.path_of("default") == shipped / "default.jsonl.gz"
    assert common.dataset_path("default") == str(shipped / "default.jsonl.gz")


def test_default_falls_back_to_demo(package_root):
    write_jsonl(package_root / "demo.jsonl", demo_rows())
    assert datasets.default_path() == package_root / "demo.jsonl"
    assert datasets.is_shipped("default") and not datasets.is_shipped("lite")
    assert common.dataset_path("default") == str(package_root / "demo.jsonl")
    assert [t.instance_id for t in common.load("default")] == [r["instance_id"] for r in demo_rows()]


def test_shipped_names_resolve_to_their_files(shipped):
    for name in ("lite", "demo", "smoke"):
        assert common.dataset_path(name) == str(datasets.available()[name])
        assert common.dataset_path(name, split=name) == str(datasets.available()[name])


def test_default_with_split_lite_is_the_lite_file(shipped):
    assert common.dataset_path("default", split="lite") == str(shipped / "lite.jsonl.gz")
    tasks = common.load("default", split="lite")
    assert [t.instance_id for t in tasks] == ["lite-0", "lite-1"]
    assert [t.instance_id for t in common.load("lite")] == ["lite-0", "lite-1"]
    assert len(common.load("default")) == 3


def test_default_split_lite_without_a_lite_file_is_a_clear_error(package_root):
    write_jsonl(package_root / "demo.jsonl", demo_rows())
    with pytest.raises(DatasetError, match="lite") as info:
        common.dataset_path("default", split="lite")
    assert "demo" in str(info.value)  # names what does ship


def test_unknown_split_of_a_shipped_dataset_is_an_error(shipped):
    with pytest.raises(DatasetError, match="no split 'lite'"):
        common.dataset_path("demo", split="lite")
    with pytest.raises(DatasetError, match="no shipped dataset named 'test'"):
        common.dataset_path("default", split="test")
    with pytest.raises(DatasetError, match="nope"):
        datasets.path_of("nope")


def test_other_names_pass_through(shipped, tmp_path):
    file = write_jsonl(tmp_path / "mine.jsonl", demo_rows()[:1])
    assert common.dataset_path(str(file)) == str(file)
    assert common.dataset_path("princeton-nlp/SWE-bench_Lite", split="test") == "princeton-nlp/SWE-bench_Lite"
    assert common.dataset_path("./lite") == "./lite"
    assert len(common.load(str(file), split="ignored-for-files")) == 1


def test_datasets_ls_counts_repositories_and_methods_and_marks_the_default(shipped):
    result = CliRunner().invoke(app, ["datasets", "ls"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any("default (default)" in line for line in lines)
    assert not any("demo (default)" in line for line in lines)
    for name in ("lite", "demo", "smoke"):
        assert any(line.strip("│ ").startswith(name) for line in lines), name
    assert "flip_comparison (2)" in result.output and "remove_return (1)" in result.output
    assert "pypi:more-itertools==10.5.0 (3)" in result.output
    assert f"{shipped}/NAME.jsonl[.gz]" in result.output.replace("\n", "")


def test_datasets_ls_marks_demo_while_no_default_ships(package_root):
    write_jsonl(package_root / "demo.jsonl", demo_rows())
    result = CliRunner().invoke(app, ["datasets", "ls"])
    assert result.exit_code == 0, result.output
    assert "demo (default)" in result.output
