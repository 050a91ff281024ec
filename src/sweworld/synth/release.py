"""The release a synthesis run starts from: its task, environment, library files, baseline, coverage.

``prepare`` resolves the repository (``pypi:NAME==VER``, a git URL or a local git directory),
builds its environment once (with ``coverage`` added for test selection), runs the whole suite
twice and records per-test coverage in a third run. The stable baseline is the tests that pass in
both runs and show up in the third with the same id (some suites generate test ids from set order,
which changes from run to run); the other tests are never used.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from sweworld.core.errors import SandboxError
from sweworld.core.types import Task
from sweworld.covmap import CoverageMap
from sweworld.envs import EnvBuilder, InstanceLayer
from sweworld.repos.git import git
from sweworld.repos.pypi import pypi_repo
from sweworld.repos.source import RepoSource
from sweworld.synth.candidates import is_test_path
from sweworld.synth.coverage import collect_coverage
from sweworld.synth.runs import CandidateRun, passing

DEFAULT_PACKAGES = "pytest==8.3.3 coverage==7.6.1"
"""Pinned test runner and coverage: every synthesized instance's environment is reproducible."""
SKIP_DIRS = frozenset({"docs", "doc", "examples", "example", "benchmarks", "benchmark", "scripts", "tools",
                       "build", "dist", ".git"})
SKIP_NAMES = frozenset({"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "conf.py", "tasks.py"})


@dataclass
class ReleaseSpec:
    """What to synthesize from: the repository and how to build and test it."""

    repo: str
    """``pypi:NAME==VER``, a git URL, or a local git directory."""
    commit: str = "HEAD"
    """The release commit (git sources only; a PyPI release has one commit)."""
    python: str | None = None
    packages: str = DEFAULT_PACKAGES
    pip_packages: tuple[str, ...] = ()
    test_cmd: str = "pytest -rA"
    name: str | None = None
    """The ``repo`` field of the instances (default: ``pypi/NAME`` or the URL's owner/name)."""


@dataclass
class Release:
    """A prepared release: everything candidates are checked against."""

    task: Task
    layer: InstanceLayer
    files: dict[str, str]
    baseline: set[str]
    flaky: set[str]
    coverage: CoverageMap
    suite_seconds: float
    slug: str

    @property
    def mirror_source(self) -> str:
        return self.task.repo_source or ""


def _names(source: RepoSource, spec: ReleaseSpec) -> tuple[str, str]:
    """(repo name for the instances, slug for instance ids)."""
    if source.kind == "pypi":
        repo = spec.name or f"pypi/{source.name}"
        return repo, f"{source.name}-{source.version}"
    stem = re.sub(r"\.git$", "", str(source.location).rstrip("/"))
    parts = [p for p in re.split(r"[/:]", stem) if p][-2:]
    repo = spec.name or "/".join(parts)
    return repo, repo.replace("/", "__")


def release_task(spec: ReleaseSpec, builder: EnvBuilder) -> tuple[Task, str]:
    source = RepoSource.parse(spec.repo, base=Path.cwd())
    repo, slug = _names(source, spec)
    if source.kind == "pypi":
        commit = pypi_repo(source.name or "", source.version or "", root=builder.repos.root)[1]
    else:
        commit = builder.repos.resolve(repo, spec.commit, spec.repo)
    version = source.version or commit[:12]
    packages = spec.packages if "coverage" in spec.packages else f"{spec.packages} coverage==7.6.1"
    task = Task(instance_id=f"{slug}__release", repo=repo, base_commit=commit, environment_setup_commit=commit,
                version=version, repo_source=spec.repo if source.kind != "local" else str(source.location),
                python=spec.python, packages=packages, pip_packages=list(spec.pip_packages) or None,
                test_cmd=spec.test_cmd, problem_statement="")
    return task, slug if source.kind == "pypi" else f"{slug}-{commit[:8]}"


def library_files(tree: Path) -> dict[str, str]:
    """Python files of the library (no tests, docs, examples, setup scripts), path -> text."""
    files = {}
    for path in git("ls-files", "-z", cwd=tree, what=str(tree)).split("\0"):
        pure = PurePosixPath(path)
        if (not path.endswith(".py") or is_test_path(path) or pure.name in SKIP_NAMES
                or any(part in SKIP_DIRS for part in pure.parts[:-1])):
            continue
        try:
            files[path] = (tree / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return files


def prepare(spec: ReleaseSpec, builder: EnvBuilder, *, timeout: float = 900.0) -> Release:
    """Build the release's environment, run its suite twice and record per-test coverage."""
    task, slug = release_task(spec, builder)
    layer = builder.instance(task)
    runs, seconds = [], []
    with CandidateRun(task, layer, timeout=timeout, label=f"{slug}-baseline") as run:
        for _ in range(2):
            started = time.monotonic()
            runs.append(run.suite())
            seconds.append(time.monotonic() - started)
        coverage = collect_coverage(run.sb, layer.env.recipe.test_cmd, timeout=timeout)
    if any(r.timed_out or r.crashed for r in runs):
        bad = next(r for r in runs if r.timed_out or r.crashed)
        raise SandboxError(f"{spec.repo}: the release's test suite {'timed out' if bad.timed_out else 'crashed'} "
                           f"(exit code {bad.exit_code})", where=task.instance_id,
                           hint="check the test command and the test dependencies (--pip-package)")
    first, second = passing(runs[0].statuses), passing(runs[1].statuses)
    baseline = first & second & set(coverage.tests)  # three runs: ids must not change between runs
    if not baseline:
        raise SandboxError(f"{spec.repo}: no test of the release passes", where=task.instance_id,
                           hint="check --test-cmd and the test dependencies (--pip-package)")
    tree = builder.repos.tree(task.repo, task.base_commit, task.repo_source, instance_id=task.instance_id)
    return Release(task=task, layer=layer, files=library_files(tree), baseline=baseline,
                   flaky=first ^ second, coverage=coverage, suite_seconds=min(seconds), slug=slug)
