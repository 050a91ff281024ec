"""What the instance stage runs after the install, in its layer (``instance_epilogue``), and what the
env stage runs after a venv is built (``COMPILE_VENV``): caches warmed, the artefacts the install
made recorded (so that they never show in a diff), SWE-bench's set-up commit."""

from __future__ import annotations

from sweworld.envs.recipes import EnvRecipe

_ASSUME_UNCHANGED = ("  xargs -r -d '\\n' git update-index --assume-unchanged < .git/info/sweworld-install-changes "
                     "|| true\n")

#: Untracked files the install produced (egg-info, build dirs, compiled extensions) are listed in
#: .git/info/exclude of the layer, so that no episode's diff or `git status` ever shows them.
_RECORD_ARTEFACTS = r"""
cd /testbed
if [ -d .git ]; then
  mkdir -p .git/info
  git ls-files --others --exclude-standard --directory | sed 's#^#/#' >> .git/info/exclude || true
  # tracked files the install rewrote (an sdist's own *.egg-info, a setuptools_scm version file) are
  # part of the installed state, not the agent's work: hidden from git status and listed for
  # Sandbox.diff, which leaves them out of every episode's diff
  git diff --name-only > .git/info/sweworld-install-changes || true
  xargs -r -d '\n' git update-index --assume-unchanged < .git/info/sweworld-install-changes || true
  if [ -s .git/info/sweworld-install-changes ]; then
    echo "sweworld: the install modified tracked files (left out of diffs): $(tr '\n' ' ' < .git/info/sweworld-install-changes)"
  fi
fi
"""

#: Byte-compile the venv and the tree once, in the shared layers, so that episodes do not each
#: write their own copies (uv does not compile; every import would copy up a __pycache__).
_WARM_CACHES = r"""
cd /testbed
python -m compileall -q -j 0 /sweworld/venv/lib >/dev/null 2>&1 || true
python -m compileall -q -j 0 -x '(^|/)\.git/' /testbed >/dev/null 2>&1 || true
"""

COMPILE_VENV = "\n/sweworld/venv/bin/python -m compileall -q -j 0 /sweworld/venv/lib >/dev/null 2>&1 || true\n"

#: pytest writes assertion-rewritten copies of the test modules on first import; do it here once.
_WARM_PYTEST = r"""
cd /testbed
timeout 300 python -m pytest --collect-only -q -p no:cacheprovider >/dev/null 2>&1 || true
"""


#: SWE-bench's images commit the tree as the set-up left it (``make_repo_script_list_py`` since
#: swebench 3.0.17; the v5 Dockerfiles too): HEAD is a commit "SWE-bench" on the base commit, so an
#: agent's ``git diff`` (against HEAD) leaves the set-up edits out, a diff against the base commit
#: holds them, and ``git apply --3way`` merges a patch that repeats them (docs/swebench.md). The
#: same here for recipes of SWE-bench's specs, dated as the base commit (a layer rebuilt on another
#: node is the same commit); the list of what the install changed still keeps it out of
#: ``Sandbox.diff`` (against the base commit).
_COMMIT_SETUP = r"""
cd /testbed
if [ -d .git ]; then
  export GIT_AUTHOR_DATE="$(git log -1 --format=%cI HEAD)" GIT_COMMITTER_DATE="$(git log -1 --format=%cI HEAD)"
  git -c user.name=SWE-bench -c user.email=setup@swebench.config -c commit.gpgsign=false     commit --allow-empty --no-verify -qam SWE-bench || echo "sweworld: could not commit the set-up state"
fi
"""

def instance_epilogue(recipe: EnvRecipe) -> str:
    """What runs after the install, in the layer: caches first, then the artefact bookkeeping (and,
    for SWE-bench's specs, the commit of the set-up state, after the list of what it changed)."""
    if recipe.language != "python":  # no Python to warm: the bookkeeping only
        return _RECORD_ARTEFACTS
    warm = _WARM_CACHES + (_WARM_PYTEST if "pytest" in recipe.test_cmd else "")
    if recipe.commits_setup():
        return warm + _RECORD_ARTEFACTS.replace(_ASSUME_UNCHANGED, "") + _COMMIT_SETUP
    return warm + _RECORD_ARTEFACTS
