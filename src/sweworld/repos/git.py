"""Running git: a scrubbed environment, failures wrapped as ``RepoError`` with stderr's tail.

Two environments:

- *hermetic* (the default): no global or system git config (``GIT_CONFIG_GLOBAL=/dev/null``,
  ``GIT_CONFIG_NOSYSTEM=1``), no inherited ``GIT_*`` variables, fixed core settings (``-c`` flags).
  Every local operation and every commit sweworld creates runs here, so results do not depend on
  the user's ``~/.gitconfig``.
- *network*: the user's config is kept (credential helpers, proxies, ``url.insteadOf``,
  ``safe.directory``) for cloning and fetching mirrors; inherited ``GIT_*`` variables that redirect repositories are still dropped
  and prompts are disabled so a missing repository fails instead of waiting for a password.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from sweworld.core.errors import RepoError

SHA_RE = re.compile(r"^[0-9a-f]{40}$")
HEX_RE = re.compile(r"^[0-9a-f]{4,40}$")

# Settings that change what git writes; fixed on every command.
CORE_FLAGS = (
    "-c", "core.autocrlf=false", "-c", "core.safecrlf=false", "-c", "core.eol=lf",
    "-c", "core.fileMode=true", "-c", "core.symlinks=true", "-c", "core.ignoreCase=false",
    "-c", "core.precomposeUnicode=false", "-c", "core.hooksPath=/dev/null",
    "-c", "commit.gpgSign=false", "-c", "tag.gpgSign=false", "-c", "gc.auto=0",
    "-c", "maintenance.auto=false", "-c", "init.defaultBranch=main",
    "-c", "protocol.file.allow=always", "-c", "advice.detachedHead=false",
)
# Lets a depth-1 fetch ask for any commit by sha, reachable from a ref or not.
UPLOAD_PACK = "git -c uploadpack.allowAnySHA1InWant=true -c uploadpack.allowReachableSHA1InWant=true upload-pack"
# Inherited variables that are kept; every other GIT_* variable is dropped.
_KEEP = {"GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "GIT_PROXY_COMMAND", "GIT_SSL_CAINFO", "GIT_SSL_NO_VERIFY"}


def git_env(*, hermetic: bool = True, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment git runs in (see the module docstring)."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("GIT_") or (not hermetic and key in _KEEP)}
    env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "LANGUAGE": "C"})
    if hermetic:
        env.update({"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_ATTR_NOSYSTEM": "1"})
    if extra:
        env.update(extra)
    return env


def tail(text: str, lines: int = 20) -> str:
    """The last ``lines`` non-empty lines of ``text``, for error messages."""
    kept = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


def run_cmd(argv: Sequence[str], *, cwd: Path | str | None = None, env: Mapping[str, str] | None = None,
            input: bytes | None = None, what: str = "", hint: str | None = None,
            timeout: float | None = None, label: str | None = None) -> bytes:
    """Run ``argv``; return stdout. A non-zero exit raises ``RepoError`` with stderr's tail.

    ``label`` is the command as shown in the error (default: ``argv`` joined).
    """
    shown = label or " ".join(str(a) for a in argv)
    try:
        proc = subprocess.run(list(argv), cwd=cwd, env=dict(env) if env is not None else None, input=input,
                              stdin=subprocess.DEVNULL if input is None else None,
                              capture_output=True, timeout=timeout, check=False)
    except FileNotFoundError as exc:
        raise RepoError(f"cannot run {argv[0]!r}: {exc}", where=what or None,
                        hint=hint or f"install {argv[0]} and put it on PATH") from exc
    except subprocess.TimeoutExpired as exc:
        raise RepoError(f"{shown} timed out after {timeout}s", where=what or None,
                        hint=hint) from exc
    if proc.returncode != 0:
        err = tail(proc.stderr.decode("utf-8", "replace") or proc.stdout.decode("utf-8", "replace"))
        raise RepoError(f"command failed (exit {proc.returncode}): {shown}\n  stderr:\n"
                        + "\n".join("    " + line for line in err.splitlines()),
                        where=what or None, hint=hint)
    return proc.stdout


def git(*args: str | Path, cwd: Path | str | None = None, hermetic: bool = True,
        env: Mapping[str, str] | None = None, input: bytes | None = None, what: str = "",
        hint: str | None = None, timeout: float | None = None) -> str:
    """Run ``git <args>`` with the fixed core flags; return stdout (decoded, stripped)."""
    argv = ["git", *CORE_FLAGS, *(str(a) for a in args)]
    out = run_cmd(argv, cwd=cwd, env=git_env(hermetic=hermetic, extra=env), input=input, what=what,
                  hint=hint, timeout=timeout, label="git " + " ".join(str(a) for a in args))
    return out.decode("utf-8", "replace").strip()


def try_git(*args: str | Path, cwd: Path | str | None = None, env: Mapping[str, str] | None = None,
            input: bytes | None = None) -> str | None:
    """Run a hermetic git query (``input`` on its stdin); return stdout, or ``None`` when git exits
    non-zero."""
    argv = ["git", *CORE_FLAGS, *(str(a) for a in args)]
    proc = subprocess.run(argv, cwd=cwd, env=git_env(extra=env), input=input,
                          stdin=subprocess.DEVNULL if input is None else None,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    return proc.stdout.decode("utf-8", "replace").strip() if proc.returncode == 0 else None


def is_git_repo(path: Path | str) -> bool:
    """True when ``path`` is the top of a git repository (a worktree with ``.git``, or a bare repo)."""
    path = Path(path)
    if not path.is_dir():
        return False
    if (path / ".git").exists():
        return True
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and try_git(
        "rev-parse", "--is-bare-repository", cwd=path) == "true"


def resolve_commit(repo: Path | str, rev: str) -> str | None:
    """The full sha of commit ``rev`` (sha, abbreviated sha, tag or branch) in ``repo``, or ``None``."""
    rev = rev.strip()
    if not rev or rev.startswith("-") or any(c.isspace() for c in rev):
        return None
    sha = try_git("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}", cwd=repo)
    return sha if sha and SHA_RE.match(sha) else None
