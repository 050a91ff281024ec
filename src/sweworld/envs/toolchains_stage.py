"""What the env stage of Go and Rust shares (``envs.lang.go``, ``envs.lang.rust``): the toolchain copied
into the environment (``<venv>/toolchain``, so that episodes see nothing of the host and an environment
fetched by another node runs as it is), wrappers in ``<venv>/bin`` (first on every episode's PATH)
that set the offline defaults and call it, and the recipe of a row from its ``install_config``.

The host directories the env stage reads (the toolchain, Debian's unpacked trees) are shown to its
sandbox read-only at their own paths (``Toolchain.ro_paths``), as the interpreter running the sandbox's
server is; no episode mounts them.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sweworld.core.errors import EnvBuildError
from sweworld.envs import debian, toolchains
from sweworld.envs.lang.base import Toolchain, row_config

if TYPE_CHECKING:
    from sweworld.envs.recipes.model import EnvRecipe


def lang_toolchain(language: str, programs: tuple[str, ...], where: str) -> Toolchain:
    """``envs.toolchains.find(language)`` as the language layer takes it: the programs' real paths,
    and the directories the env stage reads (the toolchain's root unless under /usr, Debian's trees)."""
    try:
        found = toolchains.find(language)
    except EnvBuildError as exc:
        raise EnvBuildError(exc.message, where=where, hint=exc.hint) from exc
    ro = [] if found.mounts() == {} else [str(found.root)]
    return Toolchain(language, found.version, {p: str(found.host_path(p)) for p in programs},
                     tuple([*ro, str(debian.root() / "trees")]))


def start_lines(recipe: EnvRecipe, tools: Toolchain, venv: str, workdir: str) -> list[str]:
    q_venv = shlex.quote(venv)
    return ["#!/usr/bin/env bash",
            f"# sweworld env stage: {recipe.source} recipe, {recipe.language} ({tools.name} {tools.version})",
            "set -euxo pipefail", f"mkdir -p {q_venv} && find {q_venv} -mindepth 1 -maxdepth 1 -exec rm -rf {{}} +",
            f"mkdir -p {q_venv}/bin {q_venv}/toolchain", f"cd {shlex.quote(workdir)}"]


def copy_lines(root: Path, parts: tuple[str, ...], venv: str) -> list[str]:
    """``root``'s ``parts`` copied into ``<venv>/toolchain`` (links followed: Debian's Go root links
    into ``/usr/share``)."""
    return [f"cp -rL {shlex.quote(str(root / part))} {shlex.quote(venv)}/toolchain/" for part in parts
            if (root / part).exists()]


def copy_tree_line(source: Path, dest: str, what: str) -> str:
    """``source``'s contents copied into ``dest`` with links followed; a dangling link (Debian's
    sources link licence files to ones they do not ship) is left out, not a failed build."""
    return (f"cp -rL {shlex.quote(str(source))}/. {shlex.quote(dest)}/ || echo "
            f"{shlex.quote(f'sweworld: dangling links in {what} left out')}")


def wrapper_lines(venv: str, programs: tuple[str, ...], defaults: dict[str, str], prologue: str = "") -> list[str]:
    """``<venv>/bin/PROGRAM``: the offline defaults (each kept when already set), ``prologue``, then
    ``<venv>/toolchain/bin/PROGRAM``."""
    lines = []
    sets = "".join(f': "${{{k}:={v}}}"; export {k}\n' for k, v in defaults.items())
    for name in programs:
        body = (f"#!/bin/sh\n# sweworld: {name} offline (see sweworld.envs.toolchains_stage)\n{sets}{prologue}"
                f'exec {venv}/toolchain/bin/{name} "$@"\n')
        path = shlex.quote(f"{venv}/bin/{name}")
        lines += [f"cat > {path} <<'SWEWORLD_WRAPPER'\n{body}SWEWORLD_WRAPPER", f"chmod 755 {path}"]
    return lines


def recipe_of_row(row: dict[str, Any], tree: Path | None, where: str, language: str, infer) -> EnvRecipe:
    """The recipe of a Go or Rust row: its ``install_config`` (inferred from ``tree`` when it has no
    ``install``): ``debian_packages`` -> ``packages`` (unpacked into the environment),
    ``env_setup`` and ``install`` as they are, ``dependencies`` (where they come from) a note, ``test_cmd`` whole unless ``append_test_files``."""
    from sweworld.envs.recipes.model import EnvRecipe

    config, notes, test_cmd, whole = row_config(row, tree, where, language, infer)
    if config.get("dependencies") and not any(n.startswith("dependencies: ") for n in notes):
        notes.append(f"dependencies: {config['dependencies']}")  # the registry or Debian's, into env.json
    setup = config.get("env_setup") or []
    return EnvRecipe(language=language, packages=list(config.get("debian_packages") or []),
                     env_setup=[setup] if isinstance(setup, str) else list(setup), install=str(config["install"]),
                     test_cmd=test_cmd, directives=not whole, env_vars=dict(config.get("env_vars") or {}),
                     source="language", notes=notes)


def heredoc(path: str, text: str) -> str:
    return f"mkdir -p {shlex.quote(str(Path(path).parent))} && cat > {shlex.quote(path)} <<'SWEWORLD_EOF'\n" \
           f"{text.rstrip(chr(10))}\nSWEWORLD_EOF"
