"""Patches written inside SWE-bench's images carry the image's own set-up edits beside the fix (an
agent's diff against the base commit holds them). For every repository whose SWE-bench spec edits
tracked files (found in swebench's specs, not listed here by hand), the spec's own ``pre_install``
commands are run on a tree that holds what they edit, the result is committed as the image commits
it ("SWE-bench"), and the gold fix plus those edits is applied as SWE-bench 5.x applies it: the fix
lands, the set-up edits stay as they are (no-ops, recorded), nothing is reversed.
"""

from __future__ import annotations

import shlex
import subprocess

import pytest

from sweworld.envs.swebench_specs import all_specs, specs_editing_the_tree, tree_edits
from sweworld.harness.patches import apply_patch
from sweworld.sandbox import Layers, Sandbox

pytestmark = pytest.mark.bwrap

FIX = ("pkg/mod.py", "def f():\n    return 1\n", "def f():\n    return 2\n")


CASES = [(repo, commands, versions) for repo, groups in sorted(specs_editing_the_tree().items())
         for commands, versions in groups.items()]


def git(root, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


def test_the_specs_that_edit_tracked_files_are_found():
    assert set(specs_editing_the_tree()) == {"astropy/astropy", "pytest-dev/pytest", "sphinx-doc/sphinx",
                                             "micropython/micropython"}
    sphinx = specs_editing_the_tree()["sphinx-doc/sphinx"]
    assert sum(len(v) for v in sphinx.values()) == len(all_specs()["sphinx-doc/sphinx"])  # every version


@pytest.mark.parametrize(("repo", "commands", "versions"), CASES,
                         ids=[f"{repo.split('/')[1]}-{versions[0]}" for repo, _, versions in CASES])
def test_the_gold_fix_with_the_specs_set_up_edits_applies_and_keeps_them(tmp_path, repo, commands, versions):
    """On a tree that holds what the commands edit (the text each matches, in the file it names)."""
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / FIX[0]).write_text(FIX[1])
    for path, pattern in tree_edits({"pre_install": list(commands)}):
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("a") as handle:  # what the command edits, as the repository has it
            handle.write(f"    {pattern}\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    base = git(root, "rev-parse", "HEAD").strip()
    subprocess.run(["bash", "-c", " && ".join(commands)], cwd=root, check=True)  # the spec's own commands
    edited = {p: (root / p).read_text() for p in git(root, "diff", "--name-only").split()}
    assert edited, f"{repo} {versions}: the set-up changed nothing"
    (root / FIX[0]).write_text(FIX[2])
    agent = git(root, "diff", base)  # what an agent's diff against the base commit holds in the image
    (root / FIX[0]).write_text(FIX[1])
    git(root, "commit", "-qam", "SWE-bench")  # the image: the set-up state committed
    with Sandbox({"/testbed": Layers([root])}, base_commit=base) as sb:
        result = apply_patch(sb, agent, label="model")
        assert result.applied and result.method == "git apply --3way", result.log
        assert sb.read_file(FIX[0]) == FIX[2]
        for path, text in edited.items():
            assert sb.read_file(path) == text, f"{path}: {shlex.quote(sb.read_file(path))}"
        assert {hunk.split(" @@")[0] for hunk in result.already_present} == set(edited)
