"""``sweworld mine`` on a Rust history, end to end: walkdir 2.3.2 as Debian ships it
(``librust-walkdir-dev``: its tests in ``src/tests/``, one dependency, ``same-file``, and one dev
dependency, ``doc-comment``), then a regression in ``min_depth`` without a test, then its fix with a
new test in the real test file. The real CLI mines it (cargo and rustc on PATH, else Debian's Rust;
the crates from Debian's ``librust-*-dev`` as a directory source, ``cargo test --offline``, parsed
by swebench's ``parse_log_cargo``) and keeps the fix with FAIL_TO_PASS naming the real tests."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_mine_js import DatedHistory
from typer.testing import CliRunner

from sweworld.cli.app import app
from sweworld.tasks import load_tasks

pytestmark = [pytest.mark.bwrap, pytest.mark.slow, pytest.mark.network]

NAME = "BurntSushi/walkdir"
SOURCE = "usr/share/cargo/registry/walkdir-2.3.2"
GOOD = "self.depth < self.opts.min_depth || self.depth > self.opts.max_depth"
BAD = "self.depth <= self.opts.min_depth || self.depth > self.opts.max_depth"
NEW_TEST = """
#[test]
fn min_depth_1_keeps_depth_1() {
    let dir = Dir::tmp();
    dir.touch("a");

    let wd = WalkDir::new(dir.path()).min_depth(1);
    let r = dir.run_recursive(wd);
    r.assert_no_errors();

    assert_eq!(vec![dir.join("a")], r.sorted_paths());
}
"""


def build_rust_history(root: Path) -> DatedHistory:
    from sweworld.core.errors import EnvBuildError
    from sweworld.envs import debian

    try:
        tree = debian.unpack(["librust-walkdir-dev"], "test-walkdir")
    except EnvBuildError as exc:
        pytest.skip(f"Debian's archive is not reachable: {exc.message}")
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(tree / SOURCE, root, symlinks=False, ignore=shutil.ignore_patterns(".cargo-checksum.json"))
    history = DatedHistory(root)
    history.git("init", "-q", "-b", "main")
    history.commit("Import walkdir 2.3.2 (Debian librust-walkdir-dev)")
    history.edit("src/lib.rs", GOOD, BAD)
    history.commit("Simplify the depth check")
    history.edit("src/lib.rs", BAD, GOOD)
    test = root / "src/tests/recursive.rs"
    test.write_text(test.read_text() + NEW_TEST)
    history.commit("Fix min_depth skipping the entries at min_depth (#9)")
    return history


def test_the_rust_fix_is_mined_with_the_real_tests(tmp_path, monkeypatch):
    monkeypatch.setenv("SWEWORLD_DEPENDENCIES", "debian")  # whether or not crates.io answers here
    history = build_rust_history(tmp_path / "history")
    out = tmp_path / "out" / "tasks.jsonl"
    result = CliRunner().invoke(app, ["mine", "--repo", str(history.root), "--out", str(out), "--name", NAME,
                                      "--timeout", "900"])
    assert result.exit_code == 0, result.output
    summary = json.loads(out.with_name(out.name + ".summary.json").read_text())
    assert summary["candidates"] == 1, summary
    (task,) = list(load_tasks(out))
    assert "src/lib.rs" in task.patch and task.test_patch.startswith("diff --git a/src/tests/recursive.rs")
    assert "tests::recursive::min_depth_1_keeps_depth_1" in task.FAIL_TO_PASS
    assert "tests::recursive::min_depth_1" in task.FAIL_TO_PASS
    assert not set(task.FAIL_TO_PASS) & set(task.PASS_TO_PASS)  # the regression skips every root: no test passes
    extra = task.model_extra
    assert extra["language"] == "rust" and extra["install_config"]["log_parser"] == "parse_log_cargo"
    assert "librust-same-file-dev" in extra["install_config"]["debian_packages"]
