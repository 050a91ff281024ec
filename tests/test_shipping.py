"""What an item produces travels with its result and is written by the driver: staged files land
at their directory (the last one last), held lines are appended in one write, a failed item leaves
nothing, and outside an item both act at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sweworld.parallel import shipping
from sweworld.parallel.map import map_items


def item_writing(name: str, out: Path) -> str:
    logs = shipping.stage(out / "logs" / name, last="report.json")
    (logs / "sub").mkdir()
    (logs / "sub" / "test_output.txt").write_text("x" * 10_000)
    (logs / "report.json").write_text(json.dumps({name: True}))
    for step in range(3):
        shipping.append(out / "traces.jsonl", json.dumps({"item": name, "step": step}))
    if name == "bad":
        raise ValueError("this item fails")
    return str(logs)


def test_an_items_files_and_lines_are_written_by_the_driver_when_its_result_arrives(tmp_path):
    seen: list = []

    def finished(name, scratch):
        seen.append(name)  # landed before on_done: the driver's files are there
        assert (tmp_path / "logs" / name / "report.json").is_file()
        assert not Path(scratch).exists()  # the worker's scratch is gone
    results = map_items(["a", "b", "bad"], lambda name: item_writing(name, tmp_path), workers=2,
                        catch=ValueError, on_done=finished)
    assert sorted(seen) == ["a", "b"] and isinstance(results[2], ValueError)
    assert (tmp_path / "logs" / "a" / "sub" / "test_output.txt").read_text() == "x" * 10_000
    assert not (tmp_path / "logs" / "bad").exists()  # a failed item leaves nothing
    lines = [json.loads(line) for line in (tmp_path / "traces.jsonl").read_text().splitlines()]
    assert sorted((r["item"], r["step"]) for r in lines) == [(n, s) for n in "ab" for s in range(3)]
    for name in "ab":  # one item's lines are one write: together, in order
        at = [i for i, r in enumerate(lines) if r["item"] == name]
        assert at == list(range(at[0], at[0] + 3))


def test_landing_writes_the_last_file_last_and_replaces_what_was_there(tmp_path):
    target = tmp_path / "logs" / "x"
    target.mkdir(parents=True)
    (target / "report.json").write_text("old")
    with shipping.collecting() as outputs:
        logs = shipping.stage(target, last="report.json")
        assert logs != target and logs.name == "x"  # the item's name kept
        (logs / "report.json").write_text("new")
        (logs / "eval.sh").write_text("run")
    outputs.pack()
    order: list[str] = []
    real_replace = shipping.os.replace
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(shipping.os, "replace", lambda a, b: (order.append(Path(b).name), real_replace(a, b)))
        outputs.land()
    assert order == ["eval.sh", "report.json"] and (target / "report.json").read_text() == "new"
    assert outputs.nbytes > 0
    assert outputs.pack_seconds > 0 and outputs.land_seconds > 0  # measured where each ran


def test_outside_an_item_stage_and_append_act_at_once(tmp_path):
    assert shipping.stage(tmp_path / "d") == tmp_path / "d"
    shipping.append(tmp_path / "f.jsonl", "{}")
    (tmp_path / "f.jsonl").write_bytes((tmp_path / "f.jsonl").read_bytes() + b'{"torn')  # a crash mid-line
    shipping.append(tmp_path / "f.jsonl", "[]")
    assert (tmp_path / "f.jsonl").read_text() == "{}\n[]\n"
