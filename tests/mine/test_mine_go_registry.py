"""``sweworld mine`` on a Go module whose one dependency is on a Go module proxy only: go-cmp 0.5.9
from Debian's ``golang-github-google-go-cmp-dev``, renamed ``sweworld.test/go-cmp`` (no Debian package
holds it) and served by a real module proxy on 127.0.0.1 (``local_registries``). With ``GOPROXY``
naming it, inference asks it, the env stage runs ``go mod download`` into the environment (the build
shares this machine's network), and the tests run with ``GOPROXY=off`` over that cache: the fix is
kept, the proxy named in the notes and ``install_config.dependencies``, no Debian module asked for."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_mine_go import mine_one
from test_mine_js import DatedHistory

from local_registries import go_module, served
from oci_lang_images import GO_SOURCE

pytestmark = [pytest.mark.bwrap, pytest.mark.slow, pytest.mark.network]

MODULE = "sweworld.test/go-cmp"
GOMOD = f"module example.com/samemap\n\ngo 1.19\n\nrequire {MODULE} v0.5.9\n"
GOOD = "return cmp.Equal(a, b)"
BAD = "return cmp.Equal(a, a)"
SOURCE = f"""package samemap

import "{MODULE}/cmp"

// Same reports whether a and b hold the same entries.
func Same(a, b map[string]int) bool {{
	{GOOD}
}}
"""
TEST = f"""package samemap

import (
	"testing"

	"{MODULE}/cmp"
)

func TestSameEmpty(t *testing.T) {{
	a, b := map[string]int{{}}, map[string]int{{}}
	if !Same(a, b) {{
		t.Errorf("empty maps differ: %s", cmp.Diff(a, b))
	}}
}}
"""
NEW_TEST = """
func TestSameDiffers(t *testing.T) {
	a, b := map[string]int{"x": 1}, map[string]int{"x": 2}
	if Same(a, b) {
		t.Errorf("Same(%v, %v) = true; diff: %s", a, b, cmp.Diff(a, b))
	}
}
"""


def _go_cmp_source() -> Path:
    from sweworld.core.errors import EnvBuildError
    from sweworld.envs import debian

    try:
        return debian.unpack(["golang-github-google-go-cmp-dev"], "test-go-cmp") / GO_SOURCE
    except EnvBuildError as exc:
        pytest.skip(f"Debian's archive is not reachable: {exc.message}")


def fix_history(root: Path, files: dict[str, str], change: tuple[str, str, str], test: tuple[str, str],
                subjects: tuple[str, str, str]) -> DatedHistory:
    """A new project of ``files``, a regression (``change``: file, good, bad) and its fix with ``test``
    (file, its new text), committed with ``subjects``."""
    shutil.rmtree(root, ignore_errors=True)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    history = DatedHistory(root)
    history.git("init", "-q", "-b", "main")
    history.commit(subjects[0])
    path, good, bad = change
    history.edit(path, good, bad)
    history.commit(subjects[1])
    history.edit(path, bad, good)
    (root / test[0]).write_text(test[1])
    history.commit(subjects[2])
    return history


def build_history(root: Path) -> DatedHistory:
    return fix_history(root, {"go.mod": GOMOD, "samemap.go": SOURCE, "samemap_test.go": TEST},
                       ("samemap.go", GOOD, BAD), ("samemap_test.go", TEST + NEW_TEST),
                       ("samemap: Same over go-cmp", "Same: compare once", "Fix Same ignoring its second map (#3)"))


def test_a_module_on_the_proxy_only_mines(tmp_path, monkeypatch):
    proxy = tmp_path / "proxy"
    go_module(proxy, MODULE, "v0.5.9", _go_cmp_source(), renamed_from="github.com/google/go-cmp")
    with served(proxy) as url:
        monkeypatch.setenv("GOPROXY", url)
        monkeypatch.setenv("GOSUMDB", "off")  # the proxy's zips are ours: no checksum database knows them
        monkeypatch.delenv("SWEWORLD_DEPENDENCIES", raising=False)
        summary, task = mine_one(build_history(tmp_path / "history"), tmp_path, "example/samemap")
    assert task.FAIL_TO_PASS == ["TestSameDiffers"], task.FAIL_TO_PASS
    assert "TestSameEmpty" in task.PASS_TO_PASS
    config = task.model_extra["install_config"]
    assert config["dependencies"].startswith(f"1 required module(s) (go mod download) from {url}"), config
    assert not [p for p in config["debian_packages"] if not p.startswith("golang-1.")], config
    notes = [n for version in summary["versions"].values() for n in version["notes"]]
    assert any(url in n and "answered" in n for n in notes), notes
