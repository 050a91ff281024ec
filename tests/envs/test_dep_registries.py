"""envs.registry: which registry a Go or Rust environment takes its dependencies from, asked over
real HTTP (a directory served on 127.0.0.1, a port nothing listens on), and a real ``cargo fetch``
through the configuration it writes, over a real sparse registry served by the test."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess

import pytest

from local_registries import index_path, publish_crate, served, sparse_registry
from sweworld.core.errors import EnvBuildError
from sweworld.envs import registry


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_any_http_answer_counts_and_a_refused_connection_does_not(tmp_path):
    with served(tmp_path) as url:
        assert registry.ask(f"{url}/nothing/here").answered  # a 404 is a registry that answers
    refused = registry.ask(f"http://127.0.0.1:{_closed_port()}/config.json")
    assert not refused.answered and refused.why
    assert "did not answer" in refused.note("")


def test_goproxy_is_read_as_go_reads_it():
    assert registry.go_proxy({}) == registry.GO_PROXY
    assert registry.go_proxy({"GOPROXY": "https://goproxy.example/,direct"}) == "https://goproxy.example"
    assert registry.go_proxy({"GOPROXY": "off"}) is None
    assert registry.go_proxy({"GOPROXY": "direct"}) is None
    assert registry.escape_module("github.com/BurntSushi/toml") == "github.com/!burnt!sushi/toml"


def test_the_go_proxy_is_asked_for_the_first_module(tmp_path):
    (tmp_path / "example.com/!a/@v").mkdir(parents=True)
    (tmp_path / "example.com/!a/@v/list").write_text("v1.0.0\n")
    with served(tmp_path) as url:
        probe = registry.go_probe("example.com/A", {"GOPROXY": url})
    assert probe is not None and probe.answered and probe.url == url
    assert registry.go_probe("example.com/A", {"GOPROXY": url, "SWEWORLD_DEPENDENCIES": "debian"}) is None
    forced = registry.go_probe("x.org/y", {"GOPROXY": f"http://127.0.0.1:{_closed_port()}",
                                           "SWEWORLD_DEPENDENCIES": "registry"})
    assert forced is not None and forced.answered
    with pytest.raises(EnvBuildError, match="SWEWORLD_DEPENDENCIES=sometimes"):
        registry.choice({"SWEWORLD_DEPENDENCIES": "sometimes"})


def test_credentials_are_not_shown():
    assert registry.shown("https://me:secret@goproxy.example:8443/x") == "https://goproxy.example:8443/x"


def test_the_users_cargo_source_replacement_is_kept(tmp_path):
    assert registry.cargo_registry({"CARGO_HOME": str(tmp_path)}) == (None, registry.CRATES_IO)
    assert "protocol = \"sparse\"" in registry.cargo_config({"CARGO_HOME": str(tmp_path)})
    (tmp_path / "config.toml").write_text('[source.crates-io]\nreplace-with = "mirror"\n\n'
                                          '[source.mirror]\nregistry = "sparse+https://crates.example/index/"\n')
    environ = {"CARGO_HOME": str(tmp_path)}
    assert registry.cargo_registry(environ) == ("mirror", "sparse+https://crates.example/index/")
    assert registry.index_url("sparse+https://crates.example/index/") == "https://crates.example/index/config.json"
    assert 'registry = "sparse+https://crates.example/index/"' in registry.cargo_config(environ)


def test_sparse_index_paths():
    assert [index_path(n) for n in ("a", "ab", "abc", "Abcd", "serde")] == ["1/a", "2/ab", "3/a/abc", "ab/cd/abcd",
                                                                            "se/rd/serde"]


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on PATH")
def test_cargo_fetches_over_the_configuration_written(tmp_path):
    served_dir, home, crate = tmp_path / "registry", tmp_path / "home", tmp_path / "crate"
    home.mkdir()
    (crate / "src").mkdir(parents=True)
    (crate / "src/lib.rs").write_text("")
    (crate / "Cargo.toml").write_text('[package]\nname = "user"\nversion = "0.1.0"\nedition = "2021"\n\n'
                                      '[dependencies]\ntiny = "0.1"\n')
    with served(served_dir) as url:
        sparse_registry(served_dir, url)
        publish_crate(served_dir, "tiny", "0.1.2", {"Cargo.toml": b'[package]\nname = "tiny"\nversion = "0.1.2"\n',
                                                    "src/lib.rs": b"pub fn one() -> u8 { 1 }\n"})
        (home / "config.toml").write_text(f'[source.crates-io]\nreplace-with = "local"\n\n'
                                          f'[source.local]\nregistry = "sparse+{url}/"\n')
        environ = {"CARGO_HOME": str(home)}
        assert registry.cargo_probe(environ).answered
        (home / "config.toml").write_text(registry.cargo_config(environ))  # what the env stage writes
        got = subprocess.run(["cargo", "fetch"], cwd=crate, capture_output=True, text=True,
                             env={**os.environ, **environ})
    assert got.returncode == 0, got.stderr
    assert 'name = "tiny"\nversion = "0.1.2"' in (crate / "Cargo.lock").read_text()
    offline = subprocess.run(["cargo", "build", "--offline"], cwd=crate, capture_output=True, text=True,
                             env={**os.environ, **environ, "CARGO_TARGET_DIR": str(tmp_path / "target")})
    assert offline.returncode == 0, offline.stderr


def test_a_git_dependency_is_an_error_for_debian_only(tmp_path):
    from sweworld.envs import cargo_deps

    (tmp_path / "Cargo.toml").write_text('[package]\nname = "p"\nversion = "0.1.0"\n\n[dependencies]\n'
                                         'g = { git = "https://example.org/g.git" }\n')
    with pytest.raises(EnvBuildError, match="comes from git"):
        cargo_deps.wanted(tmp_path)
    assert [w.name for w in cargo_deps.wanted(tmp_path, git=True)] == ["g"]


def test_cargos_complaint_is_named_on_one_line():
    from sweworld.envs import cargo_deps

    stderr = ("error: failed to select a version for `bytemuck`.\n    ... required by package `bitflags v2.4.0 (/tmp/sweworld-cargo-x/tree)`\n"
              "versions that meet the requirements `^1.0` are: 1.12.1\n\npackage `bitflags` depends on `bytemuck` "
              "with feature `derive` but `bytemuck` does not have that feature.\n")
    message = cargo_deps._complaint(stderr, "Cargo.toml").message
    assert "\n" not in message and "/tmp/" not in message
    assert "failed to select a version for `bytemuck`" in message and "with feature `derive`" in message
