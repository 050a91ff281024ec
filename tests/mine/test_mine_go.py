"""``sweworld mine`` on a Go history, end to end: go-cmp 0.5.9 as Debian ships it
(``golang-github-google-go-cmp-dev``, tests included, the standard library only), then a regression
in ``value.SortKeys`` without a test, then its fix with a new test in the real test file. The real
CLI mines it (Go on PATH, else Debian's 1.19 unpacked without root and copied into the environment;
``go test -v`` on the test file's package, parsed by swebench's ``parse_log_gotest``), and keeps the
fix with FAIL_TO_PASS naming the real tests.

The second history says ``go 1.21.0`` in its ``go.mod`` (a line Debian bookworm's Go 1.19 cannot
read) and uses the ``min``/``max`` builtins and the ``slices`` package of Go 1.21: it mines with a
Go from bookworm-backports, fetched through sweworld's own apt state."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_mine_js import DatedHistory
from typer.testing import CliRunner

from oci_lang_images import GO_BAD, GO_FILE, GO_GOOD, GO_SOURCE
from sweworld.cli.app import app
from sweworld.tasks import load_tasks

pytestmark = [pytest.mark.bwrap, pytest.mark.slow, pytest.mark.network]

NAME = "google/go-cmp"
BOOL_TEST = """
func TestSortBoolKeys(t *testing.T) {
	keys := []reflect.Value{reflect.ValueOf(true), reflect.ValueOf(false)}
	got := value.SortKeys(keys)
	if got[0].Bool() || !got[1].Bool() {
		t.Errorf("SortKeys(true, false) = %v, want false first", got)
	}
}
"""


CLAMP = "cmp/internal/value/clamp.go"
CLAMP_GOOD = "return max(lo, min(x, hi))"
CLAMP_BAD = "return max(lo, min(x, lo))"
CLAMP_SOURCE = f"""package value

import "slices"

// Clamp bounds x to [lo, hi].
func Clamp(x, lo, hi int) int {{
	{CLAMP_GOOD}
}}

// IsKind reports whether name is one of the kinds Clamp is used for.
func IsKind(name string) bool {{
	return slices.Contains([]string{{"int", "uint"}}, name)
}}
"""
CLAMP_TEST = """package value_test

import (
	"testing"

	"github.com/google/go-cmp/cmp/internal/value"
)

func TestClamp(t *testing.T) {
	for _, c := range [][4]int{{5, 0, 3, 3}, {2, 0, 3, 2}, {-1, 0, 3, 0}} {
		if got := value.Clamp(c[0], c[1], c[2]); got != c[3] {
			t.Errorf("Clamp(%d, %d, %d) = %d, want %d", c[0], c[1], c[2], got, c[3])
		}
	}
}
"""


def _import_go_cmp(root: Path) -> DatedHistory:
    from sweworld.core.errors import EnvBuildError
    from sweworld.envs import debian

    try:
        tree = debian.unpack(["golang-github-google-go-cmp-dev"], "test-go-cmp")
    except EnvBuildError as exc:
        pytest.skip(f"Debian's archive is not reachable: {exc.message}")
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(tree / GO_SOURCE, root, symlinks=False)
    history = DatedHistory(root)
    history.git("init", "-q", "-b", "main")
    return history


def build_go_history(root: Path) -> DatedHistory:
    history = _import_go_cmp(root)
    history.commit("Import go-cmp 0.5.9 (Debian golang-github-google-go-cmp-dev)")
    history.edit(GO_FILE, GO_GOOD, GO_BAD)
    history.commit("Sort map keys faster")
    history.edit(GO_FILE, GO_BAD, GO_GOOD)
    test = root / "cmp/internal/value/sort_test.go"
    test.write_text(test.read_text() + BOOL_TEST)
    history.commit("Fix SortKeys ordering true before false (#7)\n\nfalse < true is the documented order.")
    return history


def mine_one(history: DatedHistory, tmp_path: Path, name: str = NAME):
    """(summary, the one task) of ``sweworld mine`` on ``history``, which has one candidate."""
    out = tmp_path / "out" / "tasks.jsonl"
    result = CliRunner().invoke(app, ["mine", "--repo", str(history.root), "--out", str(out), "--name", name,
                                      "--timeout", "600"])
    assert result.exit_code == 0, result.output
    summary = json.loads(out.with_name(out.name + ".summary.json").read_text())
    assert summary["candidates"] == 1, summary
    (task,) = list(load_tasks(out))
    return summary, task


@pytest.fixture(autouse=True)
def _debian_sources(monkeypatch):
    """Debian's sources, whether or not the Go proxy answers here (``envs.registry``)."""
    monkeypatch.setenv("SWEWORLD_DEPENDENCIES", "debian")


def test_the_go_fix_is_mined_with_the_real_tests(tmp_path):
    _summary, task = mine_one(build_go_history(tmp_path / "history"), tmp_path)
    assert "cmp/internal/value/sort.go" in task.patch
    assert task.test_patch.startswith("diff --git a/cmp/internal/value/sort_test.go")
    assert "TestSortBoolKeys" in task.FAIL_TO_PASS and "TestSortKeys" in task.FAIL_TO_PASS
    extra = task.model_extra
    assert extra["language"] == "go"
    assert extra["install_config"]["log_parser"] == "parse_log_gotest"


def build_go121_history(root: Path) -> DatedHistory:
    history = _import_go_cmp(root)
    gomod = root / "go.mod"
    gomod.write_text(gomod.read_text().replace("\ngo 1.13\n", "\ngo 1.21.0\n"))
    assert "go 1.21.0" in gomod.read_text()
    (root / CLAMP).write_text(CLAMP_SOURCE)
    history.commit("Import go-cmp 0.5.9 (Debian golang-github-google-go-cmp-dev), on Go 1.21 with value.Clamp")
    history.edit(CLAMP, CLAMP_GOOD, CLAMP_BAD)
    history.commit("Clamp with one comparison less")
    history.edit(CLAMP, CLAMP_BAD, CLAMP_GOOD)
    (root / "cmp/internal/value/clamp_test.go").write_text(CLAMP_TEST)
    history.commit("Fix Clamp ignoring the upper bound (#8)\n\nClamp(5, 0, 3) was 0.")
    return history


def test_a_go_121_module_mines_with_a_backports_go(tmp_path):
    summary, task = mine_one(build_go121_history(tmp_path / "history"), tmp_path)
    assert task.FAIL_TO_PASS == ["TestClamp"], task.FAIL_TO_PASS
    assert "TestSortKeys" in task.PASS_TO_PASS
    config = task.model_extra["install_config"]
    go = config["debian_packages"][0]
    assert go.startswith("golang-1.") and int(go.split(".")[1].split("-")[0]) >= 21, config
    notes = [n for version in summary["versions"].values() for n in version["notes"]]
    assert any("for the go line 1.21.0" in n for n in notes), notes
