"""``/opt/miniconda3`` in every episode: what SWE-bench images' scripts expect of conda, without conda.

SWE-bench's images put the task environment in conda (``/opt/miniconda3/envs/testbed``), and the
scripts written for them start with ``source /opt/miniconda3/bin/activate && conda activate
testbed`` (inspect_evals' SWE-bench scorer, Harbor's SWE-bench tasks, SWE-agent's setup). In a
sweworld episode the task environment is the virtualenv at ``/sweworld/venv``, already first on
``PATH``. The shim mounted read-only at ``/opt/miniconda3`` makes those scripts run unchanged:

- ``bin/activate`` (sourced) defines a ``conda`` shell function and exports ``CONDA_DEFAULT_ENV``
  and ``CONDA_PREFIX`` as conda would;
- ``conda activate NAME`` / ``conda deactivate``: nothing to do, the environment is active;
- ``conda run [-n NAME | -p PREFIX] [--no-capture-output] CMD...``: runs ``CMD``;
- ``conda info --envs`` / ``conda env list``: lists ``testbed`` (the one environment);
- anything else (``conda install``...): exit 1, saying the episode has no conda and what it has;
- ``bin/conda`` is the same as a program (for ``conda run`` from a script that never sourced
  ``activate``), and ``envs/testbed`` links to ``/sweworld/venv`` (``/opt/miniconda3/envs/testbed/bin/python``).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from sweworld.core.paths import subdir

MOUNT = "/opt/miniconda3"
VENV = "/sweworld/venv"
VERSION = "1"

_BODY = r"""
_sweworld_conda() {
  case "$1" in
    activate|deactivate) return 0 ;;
    run)
      shift
      while [ $# -gt 0 ]; do
        case "$1" in
          -n|--name|-p|--prefix) shift 2 ;;
          --no-capture-output|--live-stream|--cwd=*) shift ;;
          --) shift; break ;;
          *) break ;;
        esac
      done
      "$@" ;;
    info|env)
      echo "# conda environments (sweworld episode: one virtualenv, no conda):"
      echo "testbed  *  @VENV@" ;;
    --version|-V) echo "conda 0.0 (sweworld shim)" ;;
    *)
      echo "conda $1: not available in a sweworld episode (no conda here); the task's environment is the" \
           "virtualenv @VENV@, already active: use pip (python -m pip) or run the command directly" >&2
      return 1 ;;
  esac
}
"""

ACTIVATE = ("# sourced by SWE-bench-style scripts: `source /opt/miniconda3/bin/activate && conda activate testbed`\n"
            + _BODY + "conda() { _sweworld_conda \"$@\"; }\n"
            "export CONDA_DEFAULT_ENV=testbed CONDA_PREFIX=@VENV@ CONDA_SHLVL=1 CONDA_EXE=@MOUNT@/bin/conda\n")
PROGRAM = "#!/bin/bash\n# conda as a program (see activate)\n" + _BODY + "_sweworld_conda \"$@\"\n"


def _render(text: str) -> str:
    return text.replace("@VENV@", VENV).replace("@MOUNT@", MOUNT)


def shim_dir() -> Path:
    """The shim's directory under ``$SWEWORLD_HOME`` (written once per version, atomically)."""
    root = subdir("shims")
    final = root / f"conda-{VERSION}"
    if (final / "bin" / "conda").is_file():
        return final
    staging = Path(tempfile.mkdtemp(prefix=".conda-", dir=root))
    (staging / "bin").mkdir()
    (staging / "envs").mkdir()
    (staging / "bin" / "activate").write_text(_render(ACTIVATE))
    (staging / "bin" / "deactivate").write_text("# sourced: nothing to undo (sweworld conda shim)\n")
    program = staging / "bin" / "conda"
    program.write_text(_render(PROGRAM))
    program.chmod(0o755)
    os.symlink(VENV, staging / "envs" / "testbed")
    try:
        staging.rename(final)
    except OSError:  # another process wrote it first
        if not (final / "bin" / "conda").is_file():
            raise
        from sweworld.core.paths import remove_tree
        remove_tree(staging)
    return final


__all__ = ["MOUNT", "shim_dir"]
