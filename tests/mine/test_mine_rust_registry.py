"""``sweworld mine`` on a Rust crate whose one dev-dependency is on a private registry only: fnv
1.0.7 from Debian's ``librust-fnv-dev``, renamed ``sweworld-fnv`` (no Debian package holds it) and
published in a real sparse registry on 127.0.0.1 (``local_registries``). The user's cargo
configuration (``$CARGO_HOME/config.toml``) replaces crates.io with that registry, as a private mirror
needs for cargo itself: inference asks it, the env stage writes the same replacement into the
environment's ``CARGO_HOME`` and runs ``cargo fetch`` (the build shares this machine's network), and
the tests build ``--offline``: the fix is kept, the registry named in ``install_config.dependencies``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_mine_go_registry import fix_history
from test_mine_js import DatedHistory
from typer.testing import CliRunner

from local_registries import publish_crate, served, sparse_registry
from sweworld.cli.app import app
from sweworld.tasks import load_tasks

pytestmark = [pytest.mark.bwrap, pytest.mark.slow, pytest.mark.network]

FNV_TOML = b'[package]\nname = "sweworld-fnv"\nversion = "1.0.7"\nedition = "2015"\n\n[lib]\npath = "lib.rs"\n\n' \
           b'[features]\ndefault = ["std"]\nstd = []\n'
MANIFEST = ('[package]\nname = "wordcount"\nversion = "0.1.0"\nedition = "2021"\n\n'
            '[dev-dependencies]\nsweworld-fnv = "1"\n')
GOOD = "text.split_whitespace().collect()"
BAD = "text.split(' ').collect()"
LIB = f"""/// The number of distinct words of `text`.
pub fn distinct(text: &str) -> usize {{
    let mut seen: Vec<&str> = {GOOD};
    seen.sort_unstable();
    seen.dedup();
    seen.len()
}}
"""
TESTS = """use sweworld_fnv::FnvHashSet;
use wordcount::distinct;

#[test]
fn one_word() {
    assert_eq!(distinct("a a"), 1);
}
"""
NEW_TEST = """
#[test]
fn double_spaces() {
    let words: FnvHashSet<&str> = ["a", "b"].into_iter().collect();
    assert_eq!(distinct("a  b"), words.len());
}
"""


def _fnv_source() -> Path:
    from sweworld.core.errors import EnvBuildError
    from sweworld.envs import debian

    try:
        return debian.unpack(["librust-fnv-dev"], "test-fnv") / "usr/share/cargo/registry/fnv-1.0.7"
    except EnvBuildError as exc:
        pytest.skip(f"Debian's archive is not reachable: {exc.message}")


def build_history(root: Path) -> DatedHistory:
    return fix_history(root, {"Cargo.toml": MANIFEST, "src/lib.rs": LIB, "tests/distinct.rs": TESTS},
                       ("src/lib.rs", GOOD, BAD), ("tests/distinct.rs", TESTS + NEW_TEST),
                       ("wordcount: distinct", "distinct: split on spaces",
                        "Fix distinct counting empty words between double spaces (#4)"))


def test_a_crate_on_a_private_registry_only_mines(tmp_path, monkeypatch):
    registry = tmp_path / "registry"
    with served(registry) as url:
        sparse_registry(registry, url)
        publish_crate(registry, "sweworld-fnv", "1.0.7", {"Cargo.toml": FNV_TOML,
                                                           "lib.rs": (_fnv_source() / "lib.rs").read_bytes()})
        home = tmp_path / "cargo-home"
        home.mkdir()
        (home / "config.toml").write_text(f'[source.crates-io]\nreplace-with = "mirror"\n\n'
                                          f'[source.mirror]\nregistry = "sparse+{url}/"\n')
        monkeypatch.setenv("CARGO_HOME", str(home))
        monkeypatch.delenv("SWEWORLD_DEPENDENCIES", raising=False)
        out = tmp_path / "out" / "tasks.jsonl"
        result = CliRunner().invoke(app, ["mine", "--repo", str(build_history(tmp_path / "history").root), "--out",
                                          str(out), "--name", "example/wordcount", "--timeout", "900"])
    assert result.exit_code == 0, result.output
    summary = json.loads(out.with_name(out.name + ".summary.json").read_text())
    assert summary["candidates"] == 1, summary
    (task,) = list(load_tasks(out))
    # one_word passes before the fix too: cargo test's 101 with a failed test is a run, not a crash
    assert "double_spaces" in task.FAIL_TO_PASS and "one_word" in task.PASS_TO_PASS, task
    assert "one_word" not in task.FAIL_TO_PASS
    config = task.model_extra["install_config"]
    assert config["dependencies"] == f"1 crate(s) (cargo fetch) from sparse+{url}/ (it answered at inference)", config
    assert config["debian_packages"] == [], config
