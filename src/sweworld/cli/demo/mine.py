"""The demo's mining step: real tasks from a real history, then evaluated (``sweworld mine``).

The history is built here, offline but for the release's sdist (cached like every other demo
repository): more-itertools 10.5.0 as published, then commits of 2023 the way a project's history
has them (a regression slipped in without a test, a docs change, a fix with its test merged from a
pull request, a refactor whose new test already passed, another regression and its fix with a test,
a release). ``mine`` screens the eight steps of the first-parent chain, validates the three
candidates by real runs and keeps the two real fixes; their gold patches then resolve and the empty
patch does not.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from sweworld.cli import common
from sweworld.cli.common import PLAIN
from sweworld.cli.demo.swr import swr_on_mined

if TYPE_CHECKING:
    from sweworld.cli.demo.run import DemoRun
    from sweworld.htmlreport import Section

NAME, VERSION = "more-itertools", "10.5.0"
MORE, RECIPES = "more_itertools/more.py", "more_itertools/recipes.py"
FIRST_OK, FIRST_BAD = "    if default is _marker:\n        raise ValueError(", \
    "    if default is not _marker:\n        raise ValueError("
ILEN_OK, ILEN_BAD = "    return sum(compress(repeat(1), zip(iterable)))", \
    "    return sum(compress(repeat(1), zip(iterable))) + 1"
FIRST_TEST = ("from more_itertools import first\n\n\ndef test_first_of_empty_with_default():\n"
              "    assert first([], 'x') == 'x'\n\n\ndef test_first_of_many():\n    assert first([5, 6]) == 5\n")
ILEN_TEST = ("from more_itertools import ilen\n\n\ndef test_ilen_counts():\n    assert ilen(iter('abc')) == 3\n\n\n"
             "def test_ilen_of_empty():\n    assert ilen([]) == 0\n")
ILEN_REFACTOR_TEST = "from more_itertools import ilen\n\n\ndef test_ilen_of_range():\n    assert ilen(range(4)) == 4\n"


class History:
    """A git repository written commit by commit with fixed authors and dates (same shas every time)."""

    def __init__(self, root: Path):
        self.root = root
        self.day = 0

    def git(self, *args: str) -> str:
        from sweworld.repos.git import git

        stamp = f"2023-06-{1 + self.day:02d}T12:00:00+00:00"
        return git(*args, cwd=self.root, env={"GIT_AUTHOR_NAME": "Demo Dev", "GIT_AUTHOR_EMAIL": "dev@example.org",
                                              "GIT_COMMITTER_NAME": "Demo Dev", "GIT_COMMITTER_EMAIL": "dev@example.org",
                                              "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})

    def edit(self, path: str, old: str, new: str) -> None:
        target = self.root / path
        text = target.read_text(encoding="utf-8")
        if text.count(old) != 1:
            raise ValueError(f"{path}: expected one {old!r}")
        target.write_text(text.replace(old, new), encoding="utf-8")

    def write(self, path: str, text: str) -> None:
        (self.root / path).parent.mkdir(parents=True, exist_ok=True)
        (self.root / path).write_text(text, encoding="utf-8")

    def commit(self, message: str) -> str:
        self.day += 1
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD")


def build_history(root: Path) -> History:
    """The demo's repository at ``root`` (rebuilt from scratch): see the module docstring."""
    from sweworld.repos import pypi_repo

    mirror, release = pypi_repo(NAME, VERSION)
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    archive = subprocess.run(["git", "--git-dir", str(mirror), "archive", release], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    history = History(root)
    history.git("init", "-q", "-b", "main")
    history.commit(f"Import {NAME} {VERSION}")
    history.edit(MORE, FIRST_OK, FIRST_BAD)
    history.commit("Simplify first()")
    history.write("docs/demo-history.rst", "This history was written by ``sweworld demo``.\n")
    history.commit("docs: say where this history comes from")
    history.git("checkout", "-q", "-b", "fix-first")
    history.edit(MORE, FIRST_BAD, FIRST_OK)
    history.write("tests/test_first_default.py", FIRST_TEST)
    history.commit("Fix first() ignoring its default\n\nfirst([], default) raised ValueError. Fixes #900.")
    history.git("checkout", "-q", "main")
    history.day += 1
    history.git("merge", "-q", "--no-ff", "fix-first", "-m", "Merge pull request #901 from demo/fix-first\n\n"
                "Fix first() ignoring its default")
    history.edit(MORE, "    # This is the \"most beautiful", "    # Counting with compress: the \"most beautiful")
    history.edit(MORE, "    This consumes the iterable, so", "    This consumes the whole iterable, so")  # not only a comment
    history.write("tests/test_ilen_range.py", ILEN_REFACTOR_TEST)
    history.commit("Comment ilen() and test it on a range")
    history.edit(MORE, ILEN_OK, ILEN_BAD)
    history.commit("Speed up ilen()")
    history.edit(MORE, ILEN_BAD, ILEN_OK)
    history.write("tests/test_ilen_counts.py", ILEN_TEST)
    history.commit("Fix ilen() counting one too many (#903)")
    history.edit("more_itertools/__init__.py", "10.5.0", "10.5.1")
    history.commit("Bump version to 10.5.1")
    return history


def mining(run: DemoRun) -> list[Section]:
    """Mine the demo history, then evaluate the mined instances' gold and empty patches."""
    from sweworld.htmlreport import Section
    from sweworld.htmlreport import Table as ReportTable

    repo, out, result, summary = _mine(run)
    rows = _print_mined(result, summary)
    tasks = result.instances
    verdicts = _evaluate_mined(run, tasks)
    common.out.print(f"mined instances -> {out}: gold resolves {verdicts['gold']}/{len(tasks)}, "
                     f"the empty patch {verdicts['empty']}/{len(tasks)}")
    swr_rows, swr_figures, swr_text = _swr_part(run, tasks, repo)
    run.results["mine"] = {"summary": summary, "resolved": verdicts, "swr": swr_figures}
    text = (f"`sweworld mine` over a history of {summary['steps']} steps built from the {NAME} {VERSION} sdist: "
            f"{summary['candidates']} candidates, {summary['validated']} validated (drops by reason: "
            f"{', '.join(f'{reason} {n}' for reason, n in summary['dropped'].items())}). Gold patches of the mined "
            f"instances resolve {verdicts['gold']}/{len(tasks)}, the empty patch {verdicts['empty']}/{len(tasks)}.")
    return [Section(title="Mining: real tasks from a history", text=text,
                    table=ReportTable(columns=["commit", "instance", "verdict", "FAIL_TO_PASS", "PASS_TO_PASS"],
                                      rows=rows)),
            Section(title="The embedded SWR on real-agent-style patches", text=swr_text,
                    table=ReportTable(columns=["patch", "instances", "resolved (real)", "resolved (embedded SWR)",
                                               "agree"], rows=swr_rows))]


def _mine(run: DemoRun):
    """``sweworld mine`` over the demo history (rebuilt): its root, the tasks file, the result and summary."""
    from sweworld.backends.real import RealBackend
    from sweworld.mine.pipeline import MineOptions
    from sweworld.mine.run import mine_repository

    repo = build_history(run.out / "mine" / "history").root
    out = run.out / "mine" / "tasks.jsonl"
    for stale in out.parent.glob("tasks.jsonl*"):
        stale.unlink()
    result, summary = mine_repository(str(repo), out, MineOptions(workers=run.workers, timeout=300),
                                      backend=RealBackend(run.builder), repos=run.builder.repos,
                                      name=f"{NAME}/{NAME}")
    return repo, out, result, summary


def _print_mined(result, summary: dict) -> list[list]:
    """Print the table of every commit mined (kept, dropped, screened out); its rows."""
    table = Table("commit", "instance", "verdict", "F2P", "P2P", title=f"sweworld mine: {summary['steps']} commits, "
                  f"{summary['candidates']} candidates, {summary['validated']} validated")
    rows = []
    for entry in result.entries:
        row = entry.get("row") or {}
        rows.append([entry["commit"][:10], entry["instance_id"], "kept" if entry["kept"] else entry["drop"],
                     len(row.get("FAIL_TO_PASS", [])), len(row.get("PASS_TO_PASS", []))])
    for sha, reason in result.screen.skipped.items():
        rows.append([sha[:10], "-", f"screened out: {reason}", 0, 0])
    for line in rows:
        table.add_row(*(str(v) for v in line))
    common.out.print(table)
    return rows


def _evaluate_mined(run: DemoRun, tasks) -> dict[str, int]:
    """The mined instances resolved by their gold patches and by the empty patch."""
    from sweworld.backends.real import RealBackend
    from sweworld.core.config import EvalConfig, RunnerConfig
    from sweworld.harness.predictions import Prediction
    from sweworld.runs.eval import evaluate_run

    verdicts = {}
    for model, patch_of in (("gold", lambda t: t.patch), ("empty", lambda t: "")):
        preds = {t.instance_id: Prediction(instance_id=t.instance_id, model_name_or_path=model, model_patch=patch_of(t))
                 for t in tasks}
        settings = EvalConfig(run_id="demo-mine", logs_dir=run.out / "mine" / "logs", out=run.out / "mine", force=True,
                              runner=RunnerConfig(workers=run.workers))
        evaluated, _ = evaluate_run(tasks, preds, settings, model=model, backend=RealBackend(run.builder))
        verdicts[model] = evaluated["resolved_instances"]
    return verdicts


def _swr_part(run: DemoRun, tasks, repo: Path) -> tuple[list, dict, str]:
    """The embedded SWR on agent-style patches of the mined instances: printed; rows, figures, text."""
    swr_rows, swr_figures = swr_on_mined(run, tasks, repo)
    swr_table = Table("patch", "instances", "resolved (real)", "resolved (embedded SWR)", "agree",
                      title="embedded SWR on real-agent-style patches of the mined instances")
    for line in swr_rows:
        swr_table.add_row(*(str(v) for v in line))
    common.out.print(swr_table)
    r = lambda x: "-" if x is None else f"{x:.3f}"  # noqa: E731
    swr_text = (f"The embedded SWR (the shipped model for real instances) on {swr_figures['n']} patches of the kinds "
                f"agents write, each also evaluated for real: accuracy {r(swr_figures['accuracy'])} (always "
                f"'unresolved': {r(swr_figures['majority_accuracy'])}), precision {r(swr_figures['precision'])}, "
                f"recall {r(swr_figures['recall'])}, AUC {r(swr_figures['auc'])}.")
    common.out.print(swr_text, **PLAIN)
    return swr_rows, swr_figures, swr_text
