"""``explorer``: a scripted agent that runs the commands agents run, without a model.

Look at the layout, ``find`` the file the gold patch touches, view the code around each hunk,
grep for the functions it changes, run the failing tests, write a reproduction script with the
editor and run it; then (``fix="oracle"`` or ``"perturb"``) edit as the oracle or as ``perturb``
does, run the script, the failing tests and their whole test files again; ``git diff``, remove the
script, submit. Code execution an agent would do, for a world model to predict (issue 12: SWT on
explorer steps); with ``fix="perturb"`` the final patches have both outcomes.

The variants (how the layout is listed, grep or the search tool, how much test output is kept
(the whole of it, pytest's exit code included, one time in four),
``-x`` or not, whether the test files run before the edit) are drawn per sample, deterministically
(``regions.PlanPolicy``). The perturb kind is recorded as ``perturb: <kind>`` as in ``perturb``.
"""

from __future__ import annotations

import posixpath
import shlex
from typing import Literal

from unidiff import PatchSet

from sweworld.agents.perturb import Mutate, PerturbPolicy
from sweworld.agents.regions import Action, Plan, PlanPolicy, enclosing_function
from sweworld.core.types import Task

Fix = Literal["none", "oracle", "perturb"]
SCRIPT = "reproduce_issue.py"
_MAX_TESTS = 5

_REPRO = '''"""Reproduce the issue: look at {target} and run the failing tests directly."""
import importlib
import importlib.util
import inspect
import os
import sys
import traceback

import pytest

module = importlib.import_module({module!r})
target = module
for part in {qualname!r}.split("."):
    target = getattr(target, part, None)
if target is None:  # a method whose class is not known: look in the module's classes
    target = next((vars(c)[part] for c in vars(module).values() if isinstance(c, type) and part in vars(c)), None)
print({target!r}, "->", target, inspect.signature(target) if callable(target) else "")


def under_pytest(test):
    """Test classes, parametrized tests and tests taking fixtures: pytest sets them up."""
    if pytest.main(["-q", "-p", "no:cacheprovider", test]) != 0:
        raise AssertionError(test + " failed")


def run(test):
    path, *names = test.split("::")
    if "[" in test or len(names) != 1:
        return under_pytest(test)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # its helpers, as pytest's prepend mode
    spec = importlib.util.spec_from_file_location("test_module", path)  # by path: `test/` is also stdlib's
    owner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(owner)
    function = getattr(owner, names[0])
    if inspect.signature(function).parameters:
        return under_pytest(test)
    function()


failed = 0
for test in {tests!r}:
    try:
        run(test)
        print("PASS", test)
    except Exception:
        failed += 1
        print("FAIL", test)
        traceback.print_exc()
print(failed, "failing")
raise SystemExit(1 if failed else 0)
'''


def module_of(path: str) -> str:
    """``pkg/sub/mod.py`` -> ``pkg.sub.mod`` (``src/`` dropped, ``__init__`` for the package)."""
    parts = path.removesuffix(".py").split("/")
    parts = parts[1:] if parts[0] == "src" and len(parts) > 1 else parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 1 else parts)


def reproduction_script(path: str, qualname: str, tests: list[str]) -> str:
    """A generic script: import the module of ``path``, show ``qualname``, call the ``tests``."""
    module = module_of(path)
    return _REPRO.format(module=module, qualname=qualname, target=f"{module}.{qualname}", tests=tests)


class ExplorerPolicy(PlanPolicy):
    """Explore, reproduce, optionally fix (``fix``: none, oracle, perturb), check, submit."""

    def __init__(self, fix: Fix = "none", p: float = 0.5, seed: int = 0, mutate: Mutate | None = None,
                 workdir: str = "/testbed"):
        super().__init__(seed=seed, workdir=workdir)
        self.fix = fix
        self.name = "explorer" if fix == "none" else f"explorer-{fix}"
        self.editor = PerturbPolicy(p=1.0 if fix == "oracle" else p, seed=seed, mutate=mutate, workdir=workdir)

    def _bash(self, command: str, thought: str) -> Action:
        return "execute_bash", {"command": command}, thought

    def _pytest(self, targets: list[str], rng, thought: str) -> Action:
        flags = rng.choice(["-q", "-q -x", "-q --tb=short", "-v"])
        tail = rng.choice([0, 20, 30, 40])  # 0: the whole output (and pytest's exit code)
        quoted = " ".join(shlex.quote(t) for t in targets)
        piped = f" 2>&1 | tail -n {tail}" if tail else ""
        return self._bash(f"cd {self.workdir} && python -m pytest {flags} {quoted}{piped}", thought)

    def plan(self, task: Task) -> Plan:
        rng, wd = self.rng("explore"), self.workdir
        self.editor.bind(task.instance_id, self.sample).reset(task)
        yield rng.choice([self._bash(f"ls {wd}", "look at the repository"),
                          ("str_replace_editor", {"command": "view", "path": wd}, "look at the repository"),
                          self._bash(f"find {wd} -name '*.py' -not -path '*/.git/*' | head -50",
                                     "list the Python files")])
        paths = [p.path for p in PatchSet(task.patch or "") if p.path.endswith(".py")]
        for path in paths[:2]:
            yield self._bash(f"find {wd} -name {shlex.quote(posixpath.basename(path))} -not -path '*/.git/*'",
                             f"find {posixpath.basename(path)}")
        sites = yield from self.editor.read(task)
        functions = [f for site in sites for h in site.hunks
                     if (f := enclosing_function(site.region.lines, site.region.index(h.first), h.indent))]
        names = list(dict.fromkeys(f.name for f in functions))
        for name in names[:2]:
            yield rng.choice([self._bash(f"grep -rn {shlex.quote('def ' + name)} {wd} --include='*.py'",
                                         f"where is {name} defined"),
                              self._bash(f"grep -rn {shlex.quote(name)} {wd} --include='*.py' | head -20",
                                         f"where is {name} used"),
                              ("search", {"search_term": name, "path": wd}, f"search for {name}")])
        tests = task.FAIL_TO_PASS[:_MAX_TESTS]
        files = list(dict.fromkeys(t.split("::")[0] for t in tests))
        if tests:
            yield self._pytest(tests, rng, "run the failing tests")
        script = f"{wd}/{SCRIPT}"
        if paths:
            target = functions[0].qualname if functions else names[0] if names else "__name__"
            yield ("str_replace_editor", {"command": "create", "path": script,
                                          "file_text": reproduction_script(sites[0].rel if sites else paths[0],
                                                                           target, tests)},
                   "write a script that reproduces the issue")
            yield self._bash(f"cd {wd} && python {SCRIPT}", "run the reproduction script")
        if files and (self.fix == "none" or rng.random() < 0.5):
            yield self._pytest(files, rng, "run the whole test file")
        marker = ""
        if self.fix != "none":
            marker = yield from self.editor.edits(task, sites)
            if paths:
                yield self._bash(f"cd {wd} && python {SCRIPT}", f"{marker}\nrun the script again".lstrip())
                marker = ""
            if tests:
                yield self._pytest(tests, rng, f"{marker}\nrun the failing tests again".lstrip())
                marker = ""
            if files:
                yield self._pytest(files, rng, "run their test files")
        if paths:
            yield self._bash(f"rm {script}", f"{marker}\nremove the reproduction script".lstrip())
            marker = ""
        yield self._bash(f"cd {wd} && git status && git diff", "review the change")
        yield "submit", {}, marker or "submit"
