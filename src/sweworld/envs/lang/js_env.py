"""The environment of a JavaScript/TypeScript repository: toolchain, dependencies, test runner.

- toolchain: ``node`` and ``npm`` found on PATH (their real paths; a prefix outside the system
  directories is copied into the environment, so that episodes see nothing of the host). None found
  is one ``EnvBuildError`` naming what to install (building Node from Debian's packages in the
  sandbox, as tests/oci_lang_images.py does for images, is a later step).
- env stage (network, the tree at the env commit): the package manager of the lock file installs
  the dependencies (``npm ci``; ``yarn@1 install --frozen-lockfile``; ``pnpm install
  --frozen-lockfile``; without a lock file ``npm install --before DATE``, resolved as of the env
  commit's date), always with ``--ignore-scripts`` (a dependency's install script or the project's
  ``prepare`` may build, download or fail offline; ``npm rebuild`` follows where a native addon
  loader is among the dependencies). ``node_modules`` then moves to ``<venv>/node_modules``, with
  ``node``, ``npm`` and ``npx`` in ``<venv>/bin`` (first on every episode's PATH).
- instance stage: ``/testbed/node_modules`` becomes a link to it (left out of diffs with the other
  install artefacts, ``.git/info/exclude``).
- tests: the runner that ``scripts.test`` names, else the first dev dependency that is one: vitest
  (``--reporter=verbose``, ``parse_log_vitest``), jest (``--verbose``, ``parse_log_jest``), mocha,
  ava, tap, tape (TAP, ``parse_log_tap``), node's own (``node --test --test-reporter=tap``). The
  test files of the test patch are appended (``install_config.append_test_files``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sweworld.core.errors import EnvBuildError
from sweworld.envs.lang.base import Toolchain, row_config

if TYPE_CHECKING:
    from sweworld.envs.recipes.model import EnvRecipe

SYSTEM_PREFIXES = ("/usr/", "/bin/", "/lib/", "/lib64/", "/sbin/")
"""Mounted in every sandbox: a tool there is linked, not copied."""
NPM_ENV = {"npm_config_cache": "/sweworld/cache/npm", "npm_config_update_notifier": "false",
           "npm_config_fund": "false", "npm_config_audit": "false", "npm_config_progress": "false"}
TEST_ENV = {"CI": "true", "NO_COLOR": "1", "FORCE_COLOR": "0"}
"""Every test run: no watch mode, no colours."""
#: (runner, pattern in scripts.test, dev dependency, command, parser), first match wins
RUNNERS = (
    ("vitest", r"\bvitest\b", "vitest", "npx vitest run --reporter=verbose", "parse_log_vitest"),
    ("jest", r"\bjest\b", "jest", "npx jest --verbose --ci --runTestsByPath", "parse_log_jest"),
    ("mocha", r"\bmocha\b", "mocha", "npx mocha --reporter tap", "parse_log_tap"),
    ("ava", r"\bava\b", "ava", "npx ava --tap", "parse_log_tap"),
    ("node:test", r"\bnode\b[^&|;]*\s--test\b|\bborp\b", None, "node --test --test-reporter=tap", "parse_log_tap"),
    ("tape", r"\btape\b", "tape", "npx tape", "parse_log_tap"),
    ("tap", r"(^|[\s;&|(])tap(\s|$)", "tap", "npx tap --reporter=tap", "parse_log_tap"),
)
_HOOK = re.compile(r"(?:--import|--loader|--require|-r)[ =]\S+")


def _hooks(script: str, runner: str) -> list[str]:
    """The modules the runner's own command in ``script`` loads first (``--require @babel/register``,
    ``--import tsx``, ``-r ./test/setup.js``): read after the runner's name, up to the command's end."""
    found = re.search(runner, script)
    if not found:
        return []
    command = re.split(r"&&|\|\||;|\|", script[found.start():], maxsplit=1)[0]
    return list(dict.fromkeys(m.group(0) for m in _HOOK.finditer(command)))
NATIVE_LOADERS = ('"node-gyp-build"', '"prebuild-install"', '"node-pre-gyp"', '"@mapbox/node-pre-gyp"', '"bindings"')


def toolchain(where: str) -> Toolchain:
    """node, npm and npx on PATH (see the module docstring)."""
    found = {name: shutil.which(name) for name in ("node", "npm", "npx")}
    missing = [name for name, path in found.items() if path is None]
    if missing:
        raise EnvBuildError(f"{' and '.join(missing)} not found on PATH: {where} is a JavaScript/TypeScript project",
                            where=where, hint="install Node.js 18 or newer with npm (apt-get install nodejs npm, nvm, "
                                              "or a nodejs.org tarball) and put node on PATH; building it from Debian's "
                                              "packages in the sandbox is not done yet")
    programs = {name: os.path.realpath(path) for name, path in found.items() if path}
    got = subprocess.run([programs["node"], "--version"], capture_output=True, text=True, timeout=60)
    if got.returncode != 0:
        raise EnvBuildError(f"{programs['node']} --version failed: {got.stderr.strip()[-300:]}", where=where,
                            hint="repair or reinstall Node.js")
    outside = {str(Path(programs["node"]).parent)} | {_package_root(programs[n]) for n in ("npm", "npx")}
    return Toolchain("node", got.stdout.strip(), programs,
                     tuple(sorted(p for p in outside if not (p + "/").startswith(SYSTEM_PREFIXES))))


def _package_root(script: str) -> str:
    """npm's package directory from its ``bin/npm-cli.js``."""
    return str(Path(script).parent.parent)


def _package_json(tree: Path, where: str) -> dict[str, Any]:
    path = tree / "package.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EnvBuildError(f"package.json unreadable: {exc}", where=where,
                            hint="fix package.json at the environment commit (or mine from a later --since)") from None
    if not isinstance(data, dict):
        raise EnvBuildError("package.json is not a JSON object", where=where)
    return data


def _dependencies(data: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
        if isinstance(data.get(key), dict):
            out.update(data[key])
    return out


def install_command(tree: Path, data: dict[str, Any], date: str, notes: list[str]) -> str:
    """How the env stage installs the dependencies (see the module docstring)."""
    flags = "--ignore-scripts --no-audit --no-fund"
    if (tree / "package-lock.json").is_file() or (tree / "npm-shrinkwrap.json").is_file():
        command = f"npm ci {flags} || npm install --before={date} {flags} || {WITHOUT_GONE} {flags}"
        notes.append("dependencies: npm ci from the lock file (npm install as of the date when it is out of sync; "
                     "without the lock when it names what the registry no longer has)")
    elif (tree / "yarn.lock").is_file() and not (tree / ".yarnrc.yml").is_file():
        command = "npx --yes yarn@1 install --frozen-lockfile --ignore-scripts --non-interactive"
        notes.append("dependencies: yarn 1 from yarn.lock")
    elif (tree / "pnpm-lock.yaml").is_file():
        major = re.search(r"pnpm@(\d+)", str(data.get("packageManager") or ""))
        command = f"npx --yes pnpm@{major.group(1) if major else 8} install --frozen-lockfile --ignore-scripts"
        notes.append(f"dependencies: pnpm {major.group(1) if major else '8 (packageManager names none)'} "
                     "from pnpm-lock.yaml")
    else:
        command = f"npm install --before={date} {flags} || {WITHOUT_GONE} {flags}"
        notes.append(("yarn 2+ (.yarnrc.yml) is not run: " if (tree / "yarn.lock").is_file() else "no lock file: ")
                     + f"npm install, resolved as of {date} (the newest when a pinned version is younger: npm's "
                     "--before refuses it)")
    notes.append(f"{WITHOUT_GONE}: npm install without the lock, a devDependency whose pinned version the registry "
                 "no longer has dropped (the env stage's package.json only)")
    notes.append("install scripts not run (--ignore-scripts)")
    lock = next((tree / n for n in ("package-lock.json", "yarn.lock", "pnpm-lock.yaml") if (tree / n).is_file()), None)
    text = lock.read_text(encoding="utf-8", errors="replace") if lock else json.dumps(_dependencies(data))
    if command.startswith("npm") and any(name in text for name in NATIVE_LOADERS):
        command = f"{{ {command}; }} && npm rebuild"
        notes.append("a native addon loader is among the dependencies: npm rebuild runs their install scripts")
    if data.get("workspaces"):
        notes.append("workspaces: installed at the root only; links to workspace packages may not resolve")
    return command


PRETEST = ("npm run pretest --ignore-scripts=false > /tmp/sweworld-pretest.log 2>&1 || "
           "{ echo 'sweworld: npm run pretest failed:'; tail -n 40 /tmp/sweworld-pretest.log; }")
"""What runs first when package.json has a ``pretest`` (npm runs it before ``npm test``): most often the
build whose output the tests import, so that a patch to the sources is built before its tests."""
WITHOUT_GONE = "sweworld_npm_without_gone"
"""The env stage's last resort (``GONE_FUNCTION``): ``npm install`` without the lock and with npm 6's peer
dependency rules (``--legacy-peer-deps``: an old tree's peers that npm 7+ refuses, ERESOLVE), dropping from the
env stage's package.json (never the tree's) each devDependency whose pinned version the registry no
longer has (unpublished: ``404 Not Found`` of its tarball, ``No matching version``), up to four."""
GONE_FUNCTION = r"""sweworld_npm_without_gone() {
  local i out name
  for i in 1 2 3 4 5; do
    out=$(npm install --no-package-lock --legacy-peer-deps "$@" 2>&1) && { printf '%s\n' "$out"; return 0; }
    printf '%s\n' "$out"
    name=$(printf '%s\n' "$out" | sed -nE -e 's/.*No matching version found for (@?[^@ ]+)@.*/\1/p' \
      -e 's#.*404 Not Found - GET https?://[^ ]+/(@[^/ ]+/[^/ ]+|[^/@ ]+)/-/.*#\1#p' | head -n1)
    [ -n "$name" ] && node -e 'const fs=require("fs"),p=JSON.parse(fs.readFileSync("package.json","utf8")),n=process.argv[1];
      if(!(p.devDependencies||{})[n])process.exit(1);delete p.devDependencies[n];fs.writeFileSync("package.json",JSON.stringify(p,null,2))' \
      "${name//%2[fF]//}" || return 1
    echo "sweworld: devDependency $name dropped: the registry no longer has the version it pins" >&2
  done
  return 1
}"""


_RUN_SCRIPT = re.compile(r"\b(?:npm run|npm run-script|yarn run|yarn|pnpm run|pnpm|run-s|run-p|npm-run-all)\s+([\w:./-]+)")


def test_script(data: dict[str, Any]) -> str:
    """``scripts.test`` with the scripts it runs (``npm run test:unit``, ``run-s``...) appended, three deep."""
    scripts = data.get("scripts") if isinstance(data.get("scripts"), dict) else {}
    text, seen = str(scripts.get("test") or ""), {"test"}
    for _ in range(3):
        more = [str(scripts[n]) for n in _RUN_SCRIPT.findall(text) if n in scripts and n not in seen]
        seen.update(n for n in _RUN_SCRIPT.findall(text))
        if not more:
            break
        text = " ; ".join([text, *more])
    return text


def test_runner(data: dict[str, Any], where: str, notes: list[str]) -> tuple[str, str]:
    """(test command, log parser) of the runner ``package.json`` names (see the module docstring)."""
    script = test_script(data)
    deps = _dependencies(data)
    found = next((r for r in RUNNERS if re.search(r[1], script)), None)
    why = "scripts.test"
    if found is None:
        found, why = next((r for r in RUNNERS if r[2] and r[2] in deps), None), "devDependencies"
    if found is None:
        raise EnvBuildError("no test runner found in package.json", where=where,
                            hint="scripts.test names none of vitest, jest, mocha, ava, node --test, tape or tap, "
                                 "and no dev dependency is one")
    runner, pattern, _dep, command, parser = found
    hooks = _hooks(script, pattern) if runner in ("node:test", "mocha", "tape") else []
    if hooks:
        joined = " ".join(hooks)
        command = command.replace(" --test", f" {joined} --test", 1) if runner == "node:test" else f"{command} {joined}"
        notes.append(f"{joined} carried over from scripts.test (TypeScript, Babel, a setup file)")
    notes.append(f"tests: {runner} (from {why}: {script or runner!r}), parsed by {parser}")
    return command, parser


def infer(tree: Path, env_date: str) -> tuple[dict[str, Any], list[str]]:
    """(row fields, notes) of a JavaScript repository's environment at ``tree`` (the env commit)."""
    where = f"package.json at the environment commit of {env_date[:10]}"
    data = _package_json(tree, where)
    notes: list[str] = []
    test_cmd, parser = test_runner(data, where, notes)
    scripts = data.get("scripts") if isinstance(data.get("scripts"), dict) else {}
    if scripts.get("pretest"):  # a build the tests import (tsc into build/...): run before each test run
        test_cmd = f"{PRETEST}; {test_cmd}"
        notes.append(f"scripts.pretest ({scripts['pretest']!r}) runs before the tests, its output apart "
                     "(shown only when it fails)")
    install = install_command(tree, data, env_date[:10], notes)
    engines = (data.get("engines") or {}).get("node") if isinstance(data.get("engines"), dict) else None
    if engines:
        notes.append(f"engines.node '{engines}': the node found on PATH is used")
    return {"language": "javascript", "install_config": {
        "install": install, "test_cmd": test_cmd, "log_parser": parser, "append_test_files": True}}, notes


def recipe(row: dict[str, Any], tree: Path | None, where: str) -> EnvRecipe:
    """The recipe of a JavaScript row: its ``install_config`` (inferred from ``tree`` where it has no
    ``install``); a ``test_cmd`` list, or one without ``append_test_files``, is run whole."""
    from sweworld.envs.recipes.model import EnvRecipe

    config, notes, test_cmd, whole = row_config(row, tree, where, "javascript", infer)
    pre = config.get("pre_install") or []
    return EnvRecipe(language="javascript", env_setup=[str(config["install"])], test_cmd=test_cmd,
                     directives=not whole, pre_install=[pre] if isinstance(pre, str) else list(pre),
                     env_vars=dict(TEST_ENV), source="language", notes=notes)


def _tool_lines(tools: Toolchain, venv: str) -> list[str]:
    """``node``, ``npm`` and ``npx`` in ``<venv>/bin``: links to system paths, else copies."""
    q_bin = shlex.quote(f"{venv}/bin")
    lines = [f"mkdir -p {q_bin}"]
    for name, real in tools.programs.items():
        if (real + "/").startswith(SYSTEM_PREFIXES):
            lines.append(f"ln -sfn {shlex.quote(real)} {q_bin}/{name}")
        elif name == "node":
            lines.append(f"cp {shlex.quote(real)} {q_bin}/node")
        else:
            root, target = _package_root(real), f"{venv}/lib/{Path(_package_root(real)).name}"
            lines.append(f"[ -d {shlex.quote(target)} ] || {{ mkdir -p {shlex.quote(venv)}/lib && "
                         f"cp -a {shlex.quote(root)} {shlex.quote(target)}; }}")
            lines.append(f"ln -sfn {shlex.quote(target + '/' + os.path.relpath(real, root))} {q_bin}/{name}")
    return lines


def env_script(recipe: EnvRecipe, tools: Toolchain, venv: str, workdir: str) -> str:
    """The env-stage script (see the module docstring)."""
    q_venv = shlex.quote(venv)
    lines = ["#!/usr/bin/env bash", f"# sweworld env stage: {recipe.source} recipe, javascript (node {tools.version})",
             "set -euxo pipefail", *(f"export {k}={v}" for k, v in NPM_ENV.items()),
             f"mkdir -p {q_venv} && find {q_venv} -mindepth 1 -maxdepth 1 -exec rm -rf {{}} +",
             *_tool_lines(tools, venv), f'export PATH={q_venv}/bin:"$PATH"', f"cd {shlex.quote(workdir)}",
             "node --version && npm --version", GONE_FUNCTION, *recipe.env_setup,
             '[ -d node_modules ] || { echo "sweworld: the install made no node_modules" >&2; exit 1; }',
             f"mv node_modules {q_venv}/node_modules"]
    return "\n".join(lines) + "\n"


def instance_lines(recipe: EnvRecipe, venv: str) -> list[str]:
    """The tree's ``node_modules``: a link to the environment's (unless the tree has its own)."""
    q_venv = shlex.quote(venv)
    return [f'export PATH={q_venv}/bin:"$PATH"',
            f"if [ -e node_modules ] || [ -L node_modules ]; then echo 'sweworld: the tree has its own "
            f"node_modules: left as it is'; else ln -s {q_venv}/node_modules node_modules; fi"]
