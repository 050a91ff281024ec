"""``mine.quality`` on real commits of a real git repository: formatting-only fixes, lint/style/typing
commits whose diff agrees (and one whose diff does not), statements that say nothing (GitHub's
security-advisory merge ``Merge commit from fork``), and ``screen`` dropping them by reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from sweworld.cli.demo.mine import History
from sweworld.mine.candidates import screen
from sweworld.mine.history import commits_by_sha, step_diff, step_message
from sweworld.mine.quality import quality_reason, statement_content
from sweworld.mine.rules import Limits
from sweworld.mine.split import split_diff

CODE = 'def area(w, h):\n    """The area."""\n    return w * h\n'
TEST = "from pkg.shapes import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n"


@pytest.fixture
def history(tmp_path: Path) -> History:
    history = History(tmp_path / "repo")
    history.root.mkdir()
    history.git("init", "-q", "-b", "main")
    history.write("pkg/__init__.py", "")
    history.write("pkg/shapes.py", CODE)
    history.write("tests/test_shapes.py", TEST)
    history.write("pyproject.toml", "[project]\nname = 'pkg'\n\n[tool.black]\nline-length = 88\n")
    history.commit("Import pkg")
    return history


def _reason(history: History, sha: str, *, model: bool = False) -> str | None:
    mirror = history.root / ".git"
    commit = commits_by_sha(mirror, [sha])[0]
    patch, test_patch = split_diff(step_diff(mirror, commit))
    return quality_reason(commit, patch, test_patch, step_message(mirror, commit), mirror=mirror,
                          model_statements=model)


def _change(history: History, code: str, message: str) -> str:
    """A step changing the code and the tests (a test of its own, so that every step changes them)."""
    history.write("pkg/shapes.py", code)
    history.write("tests/test_shapes.py", TEST + f"\n\ndef test_step_{history.day}():\n    assert area(1, 1) == 1\n")
    return history.commit(message)


def test_reformatting_is_formatting_only_and_a_real_fix_is_not(history):
    reformatted = "def area(w,h):\n    '''The area.'''\n\n    # multiply\n    return (w *\n            h)\n"
    assert _reason(history, _change(history, reformatted, "Fix area() for wide shapes")) == "formatting only"
    assert _reason(history, _change(history, CODE.replace("w * h", "abs(w * h)"), "Fix area() of negative "
                                     "widths")) is None
    docstring = CODE.replace("abs(w * h)", "w * h").replace("The area.", "The area of a rectangle.")
    assert _reason(history, _change(history, docstring, "Say what area() measures")) is None  # __doc__ changed


def test_style_subject_needs_the_diff_to_agree(history):
    history.write("pyproject.toml", "[project]\nname = 'pkg'\n\n[tool.ruff]\nline-length = 120\n")
    history.write(".pre-commit-config.yaml", "repos:\n- repo: https://github.com/astral-sh/ruff-pre-commit\n")
    ruff = _change(history, CODE.replace('"""The area."""', "'''The area.'''"), "style: upgrade to use ruff")
    assert _reason(history, ruff) == "lint or style only"
    typed = "def area(w: float, h: float) -> float:\n    '''The area.'''\n    return w * h\n"
    assert _reason(history, _change(history, typed, "chore(typing): annotate area()")) == "lint or style only"
    code_too = typed.replace("return w * h", "return float(w * h)")
    assert _reason(history, _change(history, code_too, "build: ruff and a float area")) is None  # never on the subject
    history.write("pyproject.toml", "[project]\nname = 'pkg'\n\n[tool.ruff]\nline-length = 100\n")
    assert _reason(history, _change(history, code_too + "\n", "Tune ruff's line length")) is None  # no subject


def test_statements_that_say_nothing(history):
    assert statement_content("Merge commit from fork\n\nSigned-off-by: A <a@example.org>") == ""
    assert statement_content("Merge pull request #12 from someone/patch-1\n\nfix") == ""
    assert statement_content("Merge pull request #12 from someone/patch-1\n\nReject negative widths")
    fix = _change(history, CODE.replace("w * h", "abs(w) * h"), "Merge commit from fork")
    assert _reason(history, fix) == "statement says nothing"
    assert _reason(history, fix, model=True) is None  # the model writes it


def test_an_advisory_merge_takes_the_words_of_the_commits_it_brings(history):
    history.git("checkout", "-q", "-b", "advisory")
    _change(history, CODE.replace("w * h", "max(w, 0) * h"), "Reject negative widths in area()\n\nGHSA-xxxx")
    history.git("checkout", "-q", "main")
    history.day += 1
    history.git("merge", "-q", "--no-ff", "advisory", "-m", "Merge commit from fork")
    merge = history.git("rev-parse", "HEAD")
    assert _reason(history, merge) is None


def test_screen_counts_the_quality_drops(history):
    reformatted = _change(history, CODE.replace("w * h", "w*h"), "Fix area()")
    advisory = _change(history, CODE.replace("w * h", "abs(w) * h"), "Merge commit from fork")
    real = _change(history, CODE.replace("w * h", "abs(w * h)"), "Fix area() of negative widths (#7)")
    mirror = history.root / ".git"
    out = screen(commits_by_sha(mirror, [real, advisory, reformatted]), mirror=mirror, repo="demo/pkg",
                 source="local", limits=Limits(), tree_of=lambda sha: history.root, available_pythons=["3.11"])
    assert out.skipped == {reformatted: "formatting only", advisory: "statement says nothing"}
    assert [c.commit.sha for c in out.candidates] == [real]
