"""Go: path rules, detection, and an environment whose tests run offline.

A tree is Go when it has a ``go.mod`` at its root and none of Python's project files. Paths:

- test: a ``*_test.go`` file, or anything under a ``testdata/`` directory (Go's own convention);
- source: any other ``.go`` file, not under ``vendor/``, ``examples/``, ``_examples/``, ``docs/``;
- generated: ``*.pb.go``, ``*_gen.go``, ``zz_generated*.go``, ``*_string.go`` (stringer);
  vendored: ``vendor/``, ``third_party/``; docs: Python's rule.

The environment (``envs.toolchains``, ``envs.gomod``): the Go the ``go`` line asks for (PATH's when
new enough, else Debian's 1.23, or trixie's 1.24 for a newer line; a Debian one is named in
``debian_packages`` so that the env stage takes the same), copied into ``<venv>/toolchain``; the modules ``go.mod`` requires from Debian's ``golang-*-dev``
sources, under ``<venv>/go/src``, named by ``replace`` directives (``<venv>/go/replace.mod``) that the
``go`` wrapper in ``<venv>/bin`` appends to ``/testbed/go.mod`` through ``-modfile`` (the tree's
files stay as they are); ``GOPROXY=off``, ``GOCACHE`` under the venv (each episode writes its own
copy-on-write layer over the instance stage's warm cache). A vendor directory builds from itself.
When the Go proxy answers (``envs.registry``: ``GOPROXY``, default proxy.golang.org), the modules come
from it instead (``go mod download`` at the env stage into ``<venv>/go/path/pkg/mod``; Debian's
sources are not asked); ``install_config.dependencies`` says which.

Tests: ``go test -v`` on the packages of the test patch's files (a ``testdata`` file: its package;
none: ``./...``), parsed by ``parse_log_gotest``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sweworld.envs import debian, gomod, registry, toolchains, toolchains_stage
from sweworld.envs.lang.base import Language, PathRules, Toolchain, parts, under
from sweworld.envs.lang.python import PROJECT_FILES, is_doc_path
from sweworld.repos.git import try_git

if TYPE_CHECKING:
    from sweworld.envs.recipes.model import EnvRecipe

VENV = "/sweworld/venv"
NOT_SOURCE_DIRS = frozenset({"examples", "_examples", "example", "docs", "doc", "hack", "scripts", ".github"})
VENDOR_DIRS = frozenset({"vendor", "third_party"})
GENERATED = re.compile(r"(\.pb(\.gw)?\.go|_gen\.go|_string\.go|(^|/)zz_generated[^/]*\.go)$")
TEST_CMD = ("_sweworld_go_test() { p=$(printf '%s\\n' \"$@\" | grep -E '\\.go$|(^|/)testdata/' | "
            "sed -E 's#^#/#; s#/testdata/.*$#/x#; s#/[^/]*$##; s#^/?#./#' | sort -u); go test -v ${p:-./...}; }; "
            "_sweworld_go_test")
"""``go test -v`` on the packages of the files appended (see the module docstring)."""
WARM = "go test -count=1 -run '^$' ./... >/dev/null 2>&1 || echo 'sweworld: the tests do not all build yet'"
PROGRAMS = ("go", "gofmt")
GOROOT_LEFT_OUT = frozenset({"test", "doc"})


def is_test_path(path: str) -> bool:
    names = parts(path)
    return bool(names) and (names[-1].endswith("_test.go") or "testdata" in names[:-1])


def is_source_path(path: str) -> bool:
    names = parts(path)
    return (path.endswith(".go") and not is_test_path(path) and not is_doc_path(path) and not is_vendored(path)
            and not (len(names) > 1 and names[0].lower() in NOT_SOURCE_DIRS))


def is_vendored(path: str) -> bool:
    return under(path, VENDOR_DIRS)


def is_generated(path: str) -> bool:
    return bool(GENERATED.search(path))


def detect(tree: Path) -> bool:
    return (tree / "go.mod").is_file() and not any((tree / name).is_file() for name in PROJECT_FILES)


def read_version(mirror: Path, sha: str) -> tuple[str | None, str]:
    """(``X.Y`` of the nearest tag, where): Go modules carry their version in tags only."""
    tag = try_git(f"--git-dir={mirror}", "describe", "--tags", "--abbrev=0", sha) or ""
    match = re.search(r"(\d+)\.(\d+)", tag)
    if match:
        return f"{int(match.group(1))}.{match.group(2)}", f"tag {tag.strip()}"
    return None, "no tag"


def toolchain(where: str) -> Toolchain:
    return toolchains_stage.lang_toolchain("go", PROGRAMS, where)


def setup_lines(plan: gomod.Plan, venv: str = VENV) -> list[str]:
    """Env-stage lines: the ``replace`` directives, stand-in modules, ``go.mod`` files Debian's older
    sources lack (machine-independent: they name paths inside the sandbox only)."""
    if not plan.replace and not plan.main_versions:
        return []
    lines = [toolchains_stage.heredoc(f"{venv}/go/replace.mod",
                                      "\n".join(gomod.replace_lines(plan, f"{venv}/go/src", f"{venv}/go/stubs")))]
    lines += [toolchains_stage.heredoc(f"{venv}/go/stubs/{rel}/go.mod", text)
              for rel, text in gomod.stub_modules(plan).items()]
    lines += [toolchains_stage.heredoc(f"{venv}/go/src/{rel}/go.mod", text)
              for rel, text in gomod.missing_gomods(plan).items()]
    return lines


def _toolchain_note(found: toolchains.Toolchain, mod: gomod.GoMod) -> str:
    note = f"toolchain: Go {found.version} ({found.origin}) for the go line {mod.go}"
    if mod.toolchain:
        note += f" (its toolchain line names go{mod.toolchain}: a preference, not a requirement)"
    return note


def _dependencies(tree: Path, mod: gomod.GoMod, found: toolchains.Toolchain,
                  where: str) -> tuple[gomod.Plan, list[str], list[str]]:
    """(Debian's plan, or an empty one for the proxy; the note; env-stage lines) of ``tree``'s modules:
    the repository's vendor directory, else the Go proxy when it answers, else Debian's sources."""
    wanted = [m for m, _v in mod.requires if m not in mod.replaced]
    probe = None if not wanted or (tree / "vendor" / "modules.txt").is_file() else registry.go_probe(wanted[0])
    if probe is not None and probe.answered:
        gomod.check_version(mod, found, where)
        return gomod.Plan({}, ()), [probe.note(f"{len(wanted)} required module(s) (go mod download)")], registry.go_lines(probe)
    plan = gomod.check(tree, found, where)
    notes = [probe.note("")] if probe is not None else []
    if (tree / "vendor" / "modules.txt").is_file():
        notes.append("dependencies: the repository's vendor directory")
    elif plan.replace:
        stand_ins = sorted(m for m, d in plan.replace.items() if d is None)
        notes.append(f"dependencies: {len(plan.replace) - len(stand_ins)} modules from Debian's sources "
                     f"({len(plan.packages)} packages)" + (f"; stand-ins for {', '.join(stand_ins)}" if stand_ins else ""))
    else:
        notes.append("dependencies: none (the standard library only)")
    return plan, notes, setup_lines(plan)


def infer(tree: Path, env_date: str) -> tuple[dict[str, Any], list[str]]:
    """(row fields, notes) of a Go module's environment at ``tree`` (the env commit)."""
    where = f"go.mod at the environment commit of {env_date[:10]}"
    mod = gomod.read_gomod(tree / "go.mod")
    try:
        found = toolchains.find("go", at_least=mod.go)
    except toolchains.TooNew as exc:
        raise toolchains.TooNew(exc.message, where=where, hint=exc.hint) from exc
    plan, dep_notes, setup = _dependencies(tree, mod, found, where)
    notes = [_toolchain_note(found, mod), *dep_notes,
             "tests: go test -v on the test files' packages, parsed by parse_log_gotest"]
    config = {"install": WARM, "test_cmd": TEST_CMD, "log_parser": "parse_log_gotest", "append_test_files": True,
              "debian_packages": [*([found.package] if found.package else []), *plan.packages],
              "env_setup": setup, "dependencies": "; ".join(n.removeprefix("dependencies: ") for n in dep_notes)}
    return {"language": "go", "install_config": config}, notes


def recipe(row: dict[str, Any], tree: Path | None, where: str) -> EnvRecipe:
    return toolchains_stage.recipe_of_row(row, tree, where, "go", infer)


def _wrapper_lines(venv: str) -> list[str]:
    defaults = {"GOPROXY": "off", "GOSUMDB": "off", "GOTOOLCHAIN": "local", "GOTELEMETRY": "off", "GOWORK": "off",
                "GOPATH": f"{venv}/go/path", "GOCACHE": f"{venv}/go/cache"}
    prologue = ('case " ${GOFLAGS:-} " in *" -mod="*) ;; *)\n'
                '  if [ -f /testbed/vendor/modules.txt ]; then f=-mod=vendor\n'
                f'  elif [ -s {venv}/go/replace.mod ] && [ -f /testbed/go.mod ]; then\n'
                '    d="${TMPDIR:-/tmp}/sweworld-go-$$"; mkdir -p "$d"\n'
                f'    cat /testbed/go.mod {venv}/go/replace.mod > "$d/go.mod"; f="-mod=mod -modfile=$d/go.mod"\n'
                '  else f=-mod=mod; fi\n  GOFLAGS="$f${GOFLAGS:+ $GOFLAGS}"; export GOFLAGS;;\nesac\n')
    return toolchains_stage.wrapper_lines(venv, PROGRAMS, defaults, prologue)


def env_script(recipe: EnvRecipe, tools: Toolchain, venv: str, workdir: str) -> str:
    """The env stage (see the module docstring): the recipe's Debian Go when it names one, else ``tools``."""
    named = [p for p in recipe.packages if toolchains.GO_PACKAGE.fullmatch(p)]
    modules = [p for p in recipe.packages if p not in named]
    if named:
        go = toolchains.debian_go(named[0])
        tools = replace(tools, version=go.version, programs={"go": str(go.host_path("go"))})
    goroot = Path(tools.programs["go"]).parent.parent
    q_venv = shlex.quote(venv)
    lines = toolchains_stage.start_lines(recipe, tools, venv, workdir)
    lines += toolchains_stage.copy_lines(goroot, tuple(sorted(p.name for p in goroot.iterdir()
                                                              if p.name not in GOROOT_LEFT_OUT)), venv)
    lines.append(f"mkdir -p {q_venv}/go/src {q_venv}/go/cache {q_venv}/go/path")
    if modules:
        src = debian.unpack(modules, "go-modules") / gomod.GOCODE
        lines.append(toolchains_stage.copy_tree_line(src, f"{venv}/go/src", "Debian's Go sources"))
    lines += [*_wrapper_lines(venv), f'export PATH={q_venv}/bin:"$PATH"', "go version", *recipe.env_setup]
    return "\n".join(lines) + "\n"


def instance_lines(recipe: EnvRecipe, venv: str) -> list[str]:
    return [f'export PATH={shlex.quote(venv)}/bin:"$PATH"']


PATHS = PathRules(is_test=is_test_path, is_doc=is_doc_path, is_source=is_source_path, is_vendored=is_vendored,
                  is_generated=is_generated)
GO = Language(name="go", paths=PATHS, detect=detect, infer=infer, recipe=recipe, env_script=env_script,
              instance_lines=instance_lines, toolchain=toolchain, read_version=read_version)
