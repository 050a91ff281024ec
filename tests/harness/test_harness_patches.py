"""The patch apply chain in a real sandbox over a real git tree; refusal of unsafe patches."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest

from sweworld.core.errors import InfraError, PatchApplyError
from sweworld.harness.patches import apply_patch, patch_paths, symlink_escapes, unsafe_paths
from sweworld.sandbox import Layers, Sandbox

pytestmark = pytest.mark.bwrap

MOD = "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(12))


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout


def diff_of(tree: Path, edits: dict[str, str | None]) -> str:
    """The git diff that turns the committed tree into the tree with ``edits`` (None deletes)."""
    for name, text in edits.items():
        path = tree / name
        if text is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    git(tree, "add", "-A")
    patch = git(tree, "diff", "--cached", "--binary")
    git(tree, "reset", "-q", "--hard")
    git(tree, "clean", "-fdq")
    return patch


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text(MOD)
    (root / "pkg" / "other.py").write_text("A = 1\nB = 2\nC = 3\n")
    (root / "README").write_text("small tree\n")
    (root / ".gitignore").write_text("build/\n")
    os.symlink("/tmp", root / "link")
    os.symlink("..", root / "up")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    (root / "build").mkdir()
    (root / "build" / "artefact.so").write_text("built\n")  # ignored, like an in-place build
    return root, git(root, "rev-parse", "HEAD").strip()


def sandbox(tree: tuple[Path, str]) -> Sandbox:
    root, commit = tree
    return Sandbox({"/testbed": Layers([root])}, base_commit=commit)


def status(sb: Sandbox) -> str:
    result = sb.run("git status --porcelain --untracked-files=all", cwd="/testbed")
    assert result.exit_code == 0, result.output
    return result.output.strip()


def test_clean_patch_applies_with_git_apply(tree):
    patch = diff_of(tree[0], {"pkg/other.py": "A = 1\nB = 20\nC = 3\n", "pkg/new.py": "X = 1\n"})
    with sandbox(tree) as sb:
        result = apply_patch(sb, patch, label="model")
        assert result.applied and result.method == "git apply" and not result.refused
        assert "git apply -v /tmp/sweworld-model.diff" in result.log
        assert sb.read_file("pkg/other.py") == "A = 1\nB = 20\nC = 3\n"
        assert sb.read_file("pkg/new.py") == "X = 1\n"
    assert (tree[0] / "pkg" / "other.py").read_text() == "A = 1\nB = 2\nC = 3\n"


def test_fuzzy_patch_applies_through_patch_fuzz_and_leaves_no_backup(tree):
    patch = diff_of(tree[0], {"pkg/mod.py": MOD.replace("    return 5\n", "    return 50\n")})
    assert patch.count(" def f6():\n") == 1  # the last context line
    fuzzy = patch.replace(" def f6():\n", " def f6_renamed_upstream():\n")
    with sandbox(tree) as sb:
        result = apply_patch(sb, fuzzy)
        assert result.applied and result.method == "patch --fuzz", result.log
        assert sb.read_file("pkg/mod.py") == MOD.replace("    return 5\n", "    return 50\n")
        assert status(sb) == "M pkg/mod.py"  # no .orig / .rej left behind


def test_malformed_patch_is_not_applied_and_tree_is_unchanged(tree):
    patch = "diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1 @@\nthis is not a diff line\n"
    assert patch_paths(patch) == ["README"]
    with sandbox(tree) as sb:
        result = apply_patch(sb, patch)
        assert not result.applied and result.method is None and not result.empty
        assert "could not be applied" in result.log
        assert status(sb) == ""
        assert sb.read_file("build/artefact.so") == "built\n"


def partial_patch(root: Path) -> str:
    good = diff_of(root, {"pkg/other.py": "A = 1\nB = 2\nC = 30\n"})
    bad = diff_of(root, {"pkg/mod.py": MOD.replace("    return 7\n", "    return 70\n")})
    return good + bad.replace("-    return 7\n", "-    return 7000\n")  # no fuzz finds this line


def test_partially_applicable_patch_is_refused_and_tree_reset(tree):
    with sandbox(tree) as sb:
        result = apply_patch(sb, partial_patch(tree[0]))
        assert not result.applied, result.log
        for command in ("git apply -v --3way", "git apply -v --reject", "patch --batch --forward --fuzz=5 -p1"):
            assert command in result.log
        assert status(sb) == ""
        leftovers = sb.run("find . -name '*.rej' -o -name '*.orig'", cwd="/testbed")
        assert leftovers.output.strip() == ""
        assert sb.read_file("pkg/other.py") == "A = 1\nB = 2\nC = 3\n"
        assert sb.read_file("build/artefact.so") == "built\n"


def build_copy(root: Path) -> str:
    """An install's copy of pkg/other.py at build/lib (ignored), and the diff that creates it."""
    artefact = (root / "pkg" / "other.py").read_text()
    (root / "build" / "lib" / "pkg").mkdir(parents=True)
    (root / "build" / "lib" / "pkg" / "other.py").write_text(artefact)
    lines = artefact.splitlines(keepends=True)
    return ("diff --git a/build/lib/pkg/other.py b/build/lib/pkg/other.py\nnew file mode 100644\n"
            f"--- /dev/null\n+++ b/build/lib/pkg/other.py\n@@ -0,0 +1,{len(lines)} @@\n"
            + "".join("+" + line for line in lines))


def test_a_patch_that_recreates_an_install_build_is_not_applied_and_nothing_is_reversed(tree):
    """psf__requests-863 (CodeR; Docker: not resolved): the patch also adds the files of an install's
    ``build/lib``, which the install left in the tree too. ``git apply`` and ``--3way`` refuse it
    ("already exists"), ``--reject`` applies the rest and exits 1, the tree is reset, and
    ``patch --forward`` skips the creation that looks applied (never deletes the copy: ``--batch``
    alone assumed "reversed") and exits 1: not applied, as SWE-bench 5.x's chain has it. The copy
    is recorded as a hunk the tree held already."""
    root = tree[0]
    fixed = MOD.replace("    return 5\n", "    return 50\n")
    patch = diff_of(root, {"pkg/mod.py": fixed}) + build_copy(root)
    with sandbox(tree) as sb:
        result = apply_patch(sb, patch)
        assert "already exists in working directory" in result.log
        assert "Applied patch pkg/mod.py cleanly" in result.log  # by --reject, which exits 1
        assert not result.applied and "Skipping patch" in result.log and "Assuming -R" not in result.log
        assert result.already_present == ["build/lib/pkg/other.py @@ -0,0 +1,3 @@"]
        assert result.rejected == []  # refused whole ("already exists"), no hunk of it rejected
        assert sb.read_file("pkg/mod.py") == MOD
        assert sb.read_file("build/lib/pkg/other.py") == "A = 1\nB = 2\nC = 3\n"
        assert status(sb) == ""  # no .rej or .orig of the attempts left behind
        assert sb.read_file("build/artefact.so") == "built\n"


def test_a_failed_chain_puts_back_the_build_copies_and_patch_never_reverses_them(tree):
    """The reset puts back ignored build copies too, and ``patch --forward`` skips a creation that
    looks applied instead of deleting the file (``--batch`` alone did, then failed on another hunk)."""
    root = tree[0]
    patch = partial_patch(root) + build_copy(root)
    with sandbox(tree) as sb:
        result = apply_patch(sb, patch)
        assert not result.applied and "Skipping patch" in result.log and "Assuming -R" not in result.log, result.log
        assert sb.read_file("build/lib/pkg/other.py") == "A = 1\nB = 2\nC = 3\n"
        assert sb.read_file("pkg/other.py") == "A = 1\nB = 2\nC = 3\n"
        assert status(sb) == ""


def installed(root: Path, edits: dict[str, str]) -> None:
    """Tracked files rewritten as an install (SWE-bench's ``pre_install`` seds) rewrites them, marked
    assume-unchanged as the instance build marks them (envs/build.py)."""
    for name, text in edits.items():
        (root / name).write_text(text)
    git(root, "update-index", "--assume-unchanged", *edits)


def test_a_failed_chain_keeps_what_the_install_rewrote(tree):
    """sphinx-doc__sphinx-8713/-8721 (CodeR): the patch also makes the edits that SWE-bench's
    ``pre_install`` already made in /testbed (setup.py pins) and rewrites a file ``pre_install``
    edited differently (tox.ini). Nothing of it applies to the installed tree: the chain must fail.
    The restore between attempts used to snapshot with ``git add -A``, which skips assume-unchanged
    files, so it put back the files as committed and ``patch`` then applied the whole patch."""
    root = tree[0]
    pins = "A = 1\nB = 20\nC = 3\n"
    tox = MOD.replace("    return 7\n", "    return 7  # -rA\n")
    patch = diff_of(root, {"pkg/other.py": pins, "README": "fixed\n",
                           "pkg/mod.py": MOD.replace("    return 7\n", "    return 70\n")})
    installed(root, {"pkg/other.py": pins, "pkg/mod.py": tox})
    with sandbox(tree) as sb:
        result = apply_patch(sb, patch)
        assert "Applied patch README cleanly" in result.log  # --reject
        assert not result.applied and "could not be applied" in result.log, result.log
        assert sb.read_file("pkg/other.py") == pins and sb.read_file("pkg/mod.py") == tox
        assert sb.read_file("README") == "small tree\n"
        assert status(sb) == ""


def test_failed_patch_keeps_earlier_changes(tree):
    """A test patch failing after a model patch must not wipe the model patch."""
    model = diff_of(tree[0], {"README": "fixed\n", "pkg/added.py": "Y = 2\n"})
    partial = partial_patch(tree[0])
    with sandbox(tree) as sb:
        assert apply_patch(sb, model, label="model").applied
        before = status(sb)
        assert "pkg/added.py" in before
        result = apply_patch(sb, partial, label="test")
        assert not result.applied
        assert status(sb) == before
        assert sb.read_file("README") == "fixed\n" and sb.read_file("pkg/added.py") == "Y = 2\n"


def test_failed_patch_adding_gitattributes_leaves_the_tree_clean(tree):
    """The .gitattributes a failed attempt created used to steer the restoring checkout (CRLF), so
    the tree could not be put back and the chain raised: a bad patch must be a verdict, not a crash."""
    attributes = "diff --git a/.gitattributes b/.gitattributes\nnew file mode 100644\n--- /dev/null\n" \
                 "+++ b/.gitattributes\n@@ -0,0 +1 @@\n+* text eol=crlf\n"
    with sandbox(tree) as sb:
        result = apply_patch(sb, attributes + partial_patch(tree[0]))
        assert not result.applied and "could not be applied" in result.log
        assert status(sb) == ""
        assert sb.read_file("pkg/other.py") == "A = 1\nB = 2\nC = 3\n"


def test_a_broken_apply_machinery_is_an_infrastructure_error(tree):
    hook = tree[0] / ".git" / "hooks" / "post-checkout"  # git checkout exits with the hook's status
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(0o755)
    with sandbox(tree) as sb, pytest.raises(PatchApplyError) as raised:
        apply_patch(sb, partial_patch(tree[0]), label="model")
    assert isinstance(raised.value, InfraError)
    assert "could not restore the tree" in str(raised.value)


def new_file(path: str, text: str = "pwned") -> str:
    return (f"diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..1111111\n"
            f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+{text}\n")


def test_unsafe_patches_are_refused_and_never_applied(tree):
    marker = f"sweworld-{uuid.uuid4().hex}"
    symlink = ("diff --git a/evil b/evil\nnew file mode 120000\nindex 0000000..1111111\n--- /dev/null\n"
               "+++ b/evil\n@@ -0,0 +1 @@\n+/etc\n\\ No newline at end of file\n")
    cases = {
        "traversal": (new_file(f"../../etc/{marker}"), "'..'"),
        "absolute": (f"--- /dev/null\n+++ /tmp/{marker}\n@@ -0,0 +1 @@\n+pwned\n", "absolute path"),
        "hook": (new_file(".git/hooks/pre-commit", "#!/bin/sh"), ".git"),
        "symlink": (symlink + new_file(f"evil/{marker}"), "absolute path '/etc'"),
        "through-link": (new_file(f"link/{marker}"), "through a symlink"),
        "through-up": (new_file(f"up/{marker}"), "through a symlink"),
    }
    with sandbox(tree) as sb:
        for name, (patch, why) in cases.items():
            result = apply_patch(sb, patch, label=name)
            assert not result.applied and result.refused, name
            assert any(why in line for line in result.refused), (name, result.refused)
            assert "git apply" not in result.log
        assert status(sb) == ""
        for inside in (f"/etc/{marker}", f"/tmp/{marker}", "/testbed/.git/hooks/pre-commit", f"/{marker}"):
            assert sb.run(f"test -e {inside}").exit_code != 0, inside
    root = tree[0]
    for host in (Path("/etc", marker), Path("/tmp", marker), root / ".git/hooks/pre-commit",
                 root.parent / marker, root / "evil"):
        assert not host.exists(), host


def test_symlink_escapes_resolves_existing_links(tree):
    with sandbox(tree) as sb:
        found = symlink_escapes(sb, ["link/x", "up/y", "pkg/mod.py", "newdir/z", "link"], "/testbed")
        assert len(found) == 3
        assert any("'link/x'" in line and "'/tmp/x'" in line for line in found)
        assert any("'up/y'" in line for line in found)
        assert symlink_escapes(sb, [], "/testbed") == []


def test_empty_patch():
    for patch in (None, "", "  \n\t"):
        result = apply_patch(None, patch)  # type: ignore[arg-type]  # the executor is never touched
        assert result.empty and not result.applied and result.method is None


def test_patch_paths_of_every_kind_of_change(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    for name, text in {"keep.txt": "a\n", "ren.txt": "".join(f"{i}\n" for i in range(40)),
                       "del.txt": "gone\n", "mode.sh": "echo\n", "sub/sp ace.txt": "q\n"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "bin.dat").write_bytes(b"\x00\x01bin")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "i")
    git(root, "mv", "ren.txt", "renamed.txt")
    git(root, "rm", "-q", "del.txt")
    (root / "bin.dat").write_bytes(b"\x00\x02bin2")
    (root / "mode.sh").chmod(0o755)
    (root / "new.txt").write_text("new\n")
    (root / "sub/sp ace.txt").write_text("q\nr\n")
    (root / "t\tab.txt").write_text("tab\n")
    os.symlink("keep.txt", root / "lnk")
    git(root, "add", "-A")
    patch = git(root, "diff", "--cached", "--binary", "-M")
    assert "GIT binary patch" in patch and "rename from ren.txt" in patch and "new mode 100755" in patch
    assert sorted(patch_paths(patch)) == sorted([
        "bin.dat", "del.txt", "lnk", "mode.sh", "new.txt", "ren.txt", "renamed.txt", "sub/sp ace.txt",
        "t\tab.txt"])
    assert unsafe_paths(patch) == []  # an in-repo relative symlink is fine


def test_patch_paths_of_a_copy_and_of_a_malformed_patch():
    copy = ("diff --git a/cp.txt b/copied.txt\nsimilarity index 100%\ncopy from cp.txt\ncopy to copied.txt\n")
    assert patch_paths(copy) == ["cp.txt", "copied.txt"]
    broken = "diff --git a/x/y.py b/x/y.py\nindex 1..2 100644\n--- a/x/y.py\n+++ b/x/y.py\n@@ -1,9 +1,2 @@\n x\n"
    assert patch_paths(broken) == ["x/y.py"]
    assert patch_paths("") == []


def test_unsafe_paths_static_checks():
    assert unsafe_paths(new_file("pkg/ok.py")) == []
    assert any("'..'" in p for p in unsafe_paths(new_file("a/../../x")))
    assert any(".git" in p for p in unsafe_paths(new_file("sub/.GIT/config")))
    assert any("NUL" in p for p in unsafe_paths(new_file("pkg/ok.py", "a\0b")))
    # without a/ b/ prefixes, -p1 cuts the first component: x/.git/hooks is .git/hooks
    bare = "--- x/.git/hooks/post-checkout\n+++ x/.git/hooks/post-checkout\n@@ -1 +1 @@\n-a\n+b\n"
    assert any("'.git/hooks/post-checkout'" in p for p in unsafe_paths(bare))
    climbing = ("diff --git a/d/l b/d/l\nnew file mode 120000\n--- /dev/null\n+++ b/d/l\n"
                "@@ -0,0 +1 @@\n+../../outside\n\\ No newline at end of file\n")
    assert any("outside the repository" in p for p in unsafe_paths(climbing))
    inside = climbing.replace("../../outside", "../pkg")
    assert unsafe_paths(inside) == []
    into_git = climbing.replace("../../outside", "../.git/hooks")
    assert any("into .git" in p for p in unsafe_paths(into_git))
    odd_mode = climbing.replace("new file mode 120000", "new file mode 0120644").replace("../../outside", "/etc")
    assert any("absolute path '/etc'" in p for p in unsafe_paths(odd_mode))  # git reads it as a symlink


def test_context_diffs_give_their_paths_too():
    context = "*** /dev/null\n--- /tmp/evil.txt\n***************\n*** 0 ****\n--- 1 ----\n+ hi\n"
    assert patch_paths(context) == ["/tmp/evil.txt"]
    assert any("absolute path" in p for p in unsafe_paths(context))


TOX = "[testenv]\ncommands =\n    pytest {posargs}\n"
SETUP_TOX = TOX.replace("pytest {posargs}", "pytest -rA {posargs}")  # sphinx's pre_install sed
SETUP_PINS = "A = 1\nB = 2  # pinned by the set-up\nC = 3\n"  # as its setup.py pins


def image_tree(root: Path) -> tuple[str, str, str]:
    """The tree as SWE-bench's image holds it: the set-up edits committed as "SWE-bench" on the base
    commit (the base gains a tox.ini first). Returns (base commit, the gold fix, the fix plus the
    set-up edits: what an agent's diff against the base commit holds in such an image)."""
    (root / "tox.ini").write_text(TOX)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "tox")
    base = git(root, "rev-parse", "HEAD").strip()
    fixed = MOD.replace("    return 7\n", "    return 70\n")
    gold = diff_of(root, {"pkg/mod.py": fixed})
    agent = diff_of(root, {"pkg/mod.py": fixed, "tox.ini": SETUP_TOX, "pkg/other.py": SETUP_PINS})
    (root / "tox.ini").write_text(SETUP_TOX)
    (root / "pkg" / "other.py").write_text(SETUP_PINS)
    git(root, "commit", "-qam", "SWE-bench")
    return base, gold, agent


def test_set_up_edits_an_agents_patch_repeats_are_no_ops_and_the_fix_applies(tree):
    """sphinx in SWE-bench's images (mini-swe-agent, OpenHands): the patch carries the image's own
    set-up edits beside the fix. ``git apply`` refuses it; ``--3way`` merges those hunks as the
    same change on both sides and applies the fix (swebench 5.x: resolved). They are recorded as
    already present, and never reversed: tox.ini keeps its one ``-rA``."""
    root = tree[0]
    base, gold, agent = image_tree(root)
    fixed = MOD.replace("    return 7\n", "    return 70\n")
    with Sandbox({"/testbed": Layers([root])}, base_commit=base) as sb:
        result = apply_patch(sb, agent)
        assert result.applied and result.method == "git apply --3way", result.log
        assert sb.read_file("tox.ini") == SETUP_TOX and sb.read_file("pkg/other.py") == SETUP_PINS
        assert sb.read_file("pkg/mod.py") == fixed
        assert result.already_present == ["pkg/other.py @@ -1,3 +1,3 @@", "tox.ini @@ -1,3 +1,3 @@"], result
        assert "already in the tree, so left as they were: pkg/other.py" in result.log
        assert status(sb) == "M pkg/mod.py"  # the fix in the working tree, nothing staged (as git apply)
    with Sandbox({"/testbed": Layers([root])}, base_commit=base) as sb:
        result = apply_patch(sb, gold)  # the gold patch alone: the first command, as before
        assert result.applied and result.method == "git apply" and result.already_present == []
        assert sb.read_file("tox.ini") == SETUP_TOX and sb.read_file("pkg/mod.py") == fixed


def test_a_patch_that_rewrites_a_set_up_edit_otherwise_fails_and_leaves_the_image_as_it_was(tree):
    """CodeR's sphinx patches (Docker: not resolved) rewrite tox.ini their own way: ``--3way``
    conflicts, ``patch --forward`` fails; the tree is the image's again, with no conflict left in the
    index or the files."""
    root = tree[0]
    base, _gold, _agent = image_tree(root)
    git(root, "checkout", "-q", base)
    rewrite = diff_of(root, {"tox.ini": TOX.replace("pytest {posargs}", "pytest -v {posargs}"), "README": "fixed\n"})
    git(root, "checkout", "-q", "-")
    with Sandbox({"/testbed": Layers([root])}, base_commit=base) as sb:
        result = apply_patch(sb, rewrite)
        assert not result.applied and "with conflicts" in result.log, result.log
        assert result.rejected == ["tox.ini hunk #1"], result.log
        assert sb.read_file("tox.ini") == SETUP_TOX and sb.read_file("README") == "small tree\n"
        assert status(sb) == ""
        assert sb.run("git diff --cached --quiet && git log -1 --format=%s", cwd="/testbed").output == "SWE-bench\n"


def test_a_patch_wholly_in_the_tree_counts_as_applied(tree):
    """swebench 5.x's last step: every command failed, ``git apply --check --reverse`` passes."""
    root = tree[0]
    base, _gold, _agent = image_tree(root)
    git(root, "checkout", "-q", base)
    setup_only = diff_of(root, {"tox.ini": SETUP_TOX})
    git(root, "checkout", "-q", "-")
    with Sandbox({"/testbed": Layers([root])}, base_commit=base) as sb:
        result = apply_patch(sb, setup_only)
        assert result.applied and result.method in ("git apply --3way", "already applied"), result.log
        assert sb.read_file("tox.ini") == SETUP_TOX and status(sb) == ""
