"""Rust: path rules, detection, and an environment whose tests build offline.

A tree is Rust when it has a ``Cargo.toml`` at its root and none of Python's project files. Paths:

- test: anything under a ``tests/`` directory (integration tests, at any crate of a workspace), a
  file ``tests.rs``, ``test.rs``, ``*_test.rs`` or ``*_tests.rs`` (the out-of-line ``#[cfg(test)]
  mod tests;`` of a module), or under ``testdata/``, ``fixtures/``;
- source: any other ``.rs`` file not under ``examples/``, ``benches/``, ``vendor/``; the ``build.rs``
  of a crate is source. A ``#[cfg(test)] mod tests { ... }`` written inline in a source file is part
  of that file: a change to it goes with the fix (the split is by file), and the tests it adds are
  then found by validation only as those the fix turns from absent to passing;
- vendored: ``vendor/``, ``third_party/``; generated: ``target/``; docs: Python's rule.

The environment (``envs.toolchains``, ``envs.cargo_deps``): cargo and rustc on PATH (rustup's), else
Debian's Rust 1.96 (``rustc-web``, ``cargo-web``), copied into ``<venv>/toolchain``; the crates of the
manifests from Debian's ``librust-*-dev`` packages, as a directory source at ``<venv>/cargo/registry``
that ``<venv>/cargo/home/config.toml`` puts in crates.io's place. The wrappers in ``<venv>/bin`` set
``CARGO_HOME`` and ``CARGO_TARGET_DIR`` (``<venv>/cargo/target``: the instance stage compiles the
dependencies and the tests once, episodes reuse them copy-on-write). A ``Cargo.lock`` that asks
for other versions than Debian's is made again at the instance stage (left out of diffs). When the
registry answers (``envs.registry``: crates.io's sparse index, or the registry replacing it in the
user's cargo configuration), the crates come from it instead: the same replacement in
``<venv>/cargo/home/config.toml``, ``cargo fetch`` at the env stage (Debian's crates are not asked);
``install_config.dependencies`` says which.

Tests: ``cargo test --offline --no-fail-fast`` (every test binary, a failing one does not stop the
next), parsed by ``parse_log_cargo``.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sweworld.envs import cargo_deps, registry, toolchains, toolchains_stage
from sweworld.envs.lang.base import Language, PathRules, Toolchain, parts, under
from sweworld.envs.lang.go import read_version
from sweworld.envs.lang.python import PROJECT_FILES, is_doc_path

if TYPE_CHECKING:
    from sweworld.envs.recipes.model import EnvRecipe

VENV = "/sweworld/venv"
TEST_DIRS = frozenset({"tests", "testdata", "fixtures"})
TEST_FILE = re.compile(r"^(tests?|.*_tests?)\.rs$")
NOT_SOURCE_DIRS = frozenset({"examples", "benches", "docs", "doc", ".github"})
VENDOR_DIRS = frozenset({"vendor", "third_party"})
TEST_CMD = "cargo test --offline --no-fail-fast"
INSTALL = ("{ cargo metadata --offline --format-version 1 >/dev/null 2>&1 || cargo generate-lockfile --offline; } && "
           "{ cargo test --offline --no-run >/dev/null 2>&1 || echo 'sweworld: the tests do not all build yet'; }")
PROGRAMS = ("cargo", "rustc", "rustdoc")
SYSROOT_PARTS = ("bin", "lib", "libexec")


def is_test_path(path: str) -> bool:
    names = parts(path)
    return bool(names) and (under(path, TEST_DIRS) or bool(TEST_FILE.match(names[-1])))


def is_source_path(path: str) -> bool:
    names = parts(path)
    return (path.endswith(".rs") and not is_test_path(path) and not is_doc_path(path) and not is_vendored(path)
            and not any(p in NOT_SOURCE_DIRS for p in names[:-1]) and not is_generated(path))


def is_vendored(path: str) -> bool:
    return under(path, VENDOR_DIRS)


def is_generated(path: str) -> bool:
    return under(path, frozenset({"target"}))


def detect(tree: Path) -> bool:
    return (tree / "Cargo.toml").is_file() and not any((tree / name).is_file() for name in PROJECT_FILES)


def toolchain(where: str) -> Toolchain:
    return toolchains_stage.lang_toolchain("rust", PROGRAMS, where)


def _registry_lines(probe: registry.Probe, venv: str = VENV) -> list[str]:
    """Env-stage lines (after the wrappers): the registry's configuration, its crates fetched."""
    return [registry.echo(f"sweworld: crates from the registry {probe.url} (it answered at inference)"),
            toolchains_stage.heredoc(f"{venv}/cargo/home/config.toml", registry.cargo_config()),
            "CARGO_NET_OFFLINE=false cargo fetch"]


def infer(tree: Path, env_date: str) -> tuple[dict[str, Any], list[str]]:
    """(row fields, notes) of a Rust project's environment at ``tree`` (the env commit)."""
    where = f"Cargo.toml at the environment commit of {env_date[:10]}"
    found = toolchains.find("rust")
    crates = cargo_deps.wanted(tree, git=True)
    probe = registry.cargo_probe() if crates else None
    packages: tuple[str, ...] = ()
    if probe is not None and probe.answered:
        dependencies, setup = probe.note(f"{len({c.name for c in crates})} crate(s) (cargo fetch)"), _registry_lines(probe)
    else:
        _registry, packages = cargo_deps.crates_for(tree, found, where=where)
        setup = []
        dependencies = (f"{len(packages)} crates asked of Debian's librust-*-dev (with what they need)"
                        if packages else "none")
        dependencies = f"{probe.note('')}; {dependencies}" if probe is not None else f"dependencies: {dependencies}"
    notes = [f"toolchain: Rust {found.version} ({found.origin})", dependencies,
             f"tests: {TEST_CMD}, parsed by parse_log_cargo"]
    config = {"install": INSTALL, "test_cmd": TEST_CMD, "log_parser": "parse_log_cargo",
              "debian_packages": list(packages), "env_setup": setup,
              "dependencies": dependencies.removeprefix("dependencies: ")}
    return {"language": "rust", "install_config": config}, notes


def recipe(row: dict[str, Any], tree: Path | None, where: str) -> EnvRecipe:
    return toolchains_stage.recipe_of_row(row, tree, where, "rust", infer)


def _wrapper_lines(venv: str) -> list[str]:
    tool = f"{venv}/toolchain/bin"
    defaults = {"CARGO_HOME": f"{venv}/cargo/home", "CARGO_TARGET_DIR": f"{venv}/cargo/target",
                "CARGO_NET_OFFLINE": "true", "CARGO_TERM_COLOR": "never", "RUSTC": f"{tool}/rustc",
                "RUSTDOC": f"{tool}/rustdoc"}
    libs = f"{venv}/toolchain/lib/x86_64-linux-gnu"  # Debian's rustc links its driver from there
    prologue = f'if [ -d {libs} ]; then export LD_LIBRARY_PATH="{libs}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}"; fi\n'
    return toolchains_stage.wrapper_lines(venv, PROGRAMS, defaults, prologue)


def env_script(recipe: EnvRecipe, tools: Toolchain, venv: str, workdir: str) -> str:
    """The env stage (see the module docstring)."""
    sysroot = Path(tools.programs["rustc"]).parent.parent
    q_venv = shlex.quote(venv)
    lines = toolchains_stage.start_lines(recipe, tools, venv, workdir)
    lines += toolchains_stage.copy_lines(sysroot, SYSROOT_PARTS, venv)
    lines.append(f"mkdir -p {q_venv}/cargo/registry {q_venv}/cargo/home {q_venv}/cargo/target")
    if recipe.packages:
        registry = cargo_deps.unpacked(recipe.packages) / cargo_deps.REGISTRY_IN_TREE
        lines.append(toolchains_stage.copy_tree_line(registry, f"{venv}/cargo/registry", "Debian's crates"))
    lines.append(toolchains_stage.heredoc(f"{venv}/cargo/home/config.toml", cargo_deps.cargo_config(f"{venv}/cargo/registry")))
    lines += [*_wrapper_lines(venv), f'export PATH={q_venv}/bin:"$PATH"', "cargo --version", "rustc --version",
              *recipe.env_setup]
    return "\n".join(lines) + "\n"


def instance_lines(recipe: EnvRecipe, venv: str) -> list[str]:
    return [f'export PATH={shlex.quote(venv)}/bin:"$PATH"']


PATHS = PathRules(is_test=is_test_path, is_doc=is_doc_path, is_source=is_source_path, is_vendored=is_vendored,
                  is_generated=is_generated)
RUST = Language(name="rust", paths=PATHS, detect=detect, infer=infer, recipe=recipe, env_script=env_script,
                instance_lines=instance_lines, toolchain=toolchain, read_version=read_version)
