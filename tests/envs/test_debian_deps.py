"""Debian's packages without root (envs.debian) and the offline dependencies of Go and Rust projects
read from them (envs.gomod, envs.cargo_deps): real apt, real packages, real toolchains."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from sweworld.core.errors import EnvBuildError
from sweworld.envs import cargo_deps, debian, gomod, toolchains

pytestmark = [pytest.mark.network, pytest.mark.skipif(shutil.which("apt-get") is None, reason="no apt")]


def test_closure_follows_virtual_packages_to_their_providers():
    found = debian.closure(["librust-walkdir-dev"])
    assert {"librust-walkdir-dev", "librust-same-file-dev"} <= set(found)
    assert not any(name.startswith("<") for name in found)


def test_go_module_names_map_to_debian_packages():
    assert gomod.package_of("github.com/google/go-cmp") == "golang-github-google-go-cmp-dev"
    assert gomod.package_of("gopkg.in/yaml.v3") == "golang-gopkg-yaml.v3-dev"
    assert gomod.package_of("go.uber.org/zap") == "golang-go.uber-zap-dev"


def test_gomod_reads_quoted_requires_and_replaces(tmp_path):
    (tmp_path / "go.mod").write_text('module "x.org/m"\n\ngo 1.21\n\nrequire (\n\t"a.org/b" v1.0.0 // indirect\n)\n'
                                     "require c.org/d v0.1.0\nreplace c.org/d => ../d\n")
    mod = gomod.read_gomod(tmp_path / "go.mod")
    assert (mod.module, mod.go, mod.requires, mod.replaced) == ("x.org/m", "1.21", [("a.org/b", "v1.0.0"),
                                                                                 ("c.org/d", "v0.1.0")], {"c.org/d"})


@pytest.mark.slow
def test_a_go_module_with_debian_dependencies_loads_offline(tmp_path):
    tree = debian.unpack(["golang-github-stretchr-testify-dev"], "test-testify")
    repo = tmp_path / "testify"
    shutil.copytree(tree / "usr/share/gocode/src/github.com/stretchr/testify", repo)
    plan = gomod.check(repo, toolchains.find("go"))
    assert plan.replace["github.com/davecgh/go-spew"] == "github.com/davecgh/go-spew"
    assert plan.main_versions  # objx requires testify back: a stand-in breaks the cycle


def test_a_newer_go_than_the_toolchain_is_one_clear_error(tmp_path):
    (tmp_path / "go.mod").write_text("module x.org/m\n\ngo 1.99\n")
    with pytest.raises(EnvBuildError, match=r"go.mod asks for Go 1.99"):
        gomod.check(tmp_path, toolchains.find("go"))


def test_a_crate_debian_does_not_ship_is_named(tmp_path):
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "x"\nversion = "0.1.0"\n\n[dependencies]\n'
                                         'no_such_crate_zz = "1"\n')
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.rs").write_text("")
    with pytest.raises(EnvBuildError, match=r"no_such_crate_zz 1 \(Cargo.toml\)") as info:
        cargo_deps.crates_for(tmp_path, toolchains.find("rust"))
    assert "librust-no-such-crate-zz-dev" in info.value.hint


def test_a_crate_without_dependencies_needs_no_package(tmp_path):
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "x"\nversion = "0.1.0"\n')
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.rs").write_text("")
    registry, packages = cargo_deps.crates_for(tmp_path, toolchains.find("rust"))
    assert packages == () and isinstance(registry, Path)


def test_the_private_apt_state_reaches_backports_and_trixie():
    state = debian.private_state()
    sources = (state / "sources.list").read_text()
    assert "bookworm-backports" in sources and "trixie" in sources
    assert debian.candidate("golang-1.23-go", private=True).endswith("bpo12+1")
    # trixie is pinned below bookworm: it serves only what bookworm lacks
    assert debian._candidates(["librust-serde-dev"], private=True) == debian._candidates(["librust-serde-dev"])


def test_the_go_line_chooses_the_toolchain():
    versions = {"golang-1.19-go": "1.19.8", "golang-1.21-go": "1.21.13", "golang-1.23-go": "1.23.5",
                "golang-1.24-go": "1.24.4"}
    assert toolchains.choose_go(versions, "1.13") == "golang-1.23-go"  # the shared one
    assert toolchains.choose_go(versions, "1.21.0") == "golang-1.23-go"
    assert toolchains.choose_go(versions, "1.23.6") == "golang-1.24-go"  # the oldest newer one
    assert toolchains.choose_go({"golang-1.19-go": "1.19.8", "golang-1.21-go": "1.21.13"}, "1.20") == "golang-1.21-go"
    with pytest.raises(toolchains.TooNew, match=r"asks for Go 1.24.5, and the newest Go reachable here is 1.24.4"):
        toolchains.choose_go(versions, "1.24.5")


@pytest.mark.slow
def test_a_go_line_newer_than_debian_s_is_one_clear_error():
    with pytest.raises(toolchains.TooNew, match=r"go.mod asks for Go 1.99, and the newest Go reachable here is 1\.") as info:
        toolchains.find("go", "debian", at_least="1.99")
    assert "https://go.dev/dl" in info.value.hint
    assert toolchains.find("go", "debian", at_least="1.21.0").package == "golang-1.23-go"


@pytest.mark.slow
def test_env_scripts_over_debian_sources_are_valid_shell():
    """Debian's sources copied into the environment: the script parses (an apostrophe in a message
    once broke every Go environment with dependencies)."""
    from sweworld.envs.lang import go, rust
    from sweworld.envs.recipes.model import EnvRecipe

    for module, language, packages in ((go, go.GO, ["golang-github-davecgh-go-spew-dev"]),
                                       (rust, rust.RUST, ["librust-same-file-dev"])):
        recipe = EnvRecipe(language=language.name, packages=packages, install="true", test_cmd="true",
                           source="language")
        script = module.env_script(recipe, module.toolchain("here"), "/sweworld/venv", "/testbed")
        assert "cp -rL" in script
        assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0, script
