"""What a set-up agent may propose: the shape of its recipe and the commands it may not hold.

A proposal is a SWE-rebench ``install_config`` (``envs/rebench.py`` reads it: ``python``,
``pip_packages``, ``packages``/``reqs_path``, ``pre_install``, ``install``, ``test_cmd``, ``log_parser``
and ``env_vars``). Every command it holds runs inside the sandbox (builds with the package registries,
tests with no network), so a harmful one harms nothing outside; it is still refused, with one line
that says which command and why, and the agent is told so:

- privilege and escape: ``sudo``, ``su``, ``doas``, ``chroot``, ``nsenter``, ``unshare``, ``mount``;
- reaching out: ``ssh``, ``scp``, ``nc``, ``socat``, ``telnet``, ``git push``, and a download piped
  into a shell (``curl ... | sh``);
- destroying: ``rm -r`` of ``/``, ``~``, ``/usr``, ``/etc`` or any path outside ``/testbed`` and
  ``/tmp``; ``mkfs``, ``dd of=/dev/...``, a fork bomb;
- writing outside the episode's own trees: a redirection into ``/etc``, ``/usr``, ``/dev/sd*``, ``~/.ssh``.
"""

from __future__ import annotations

import re
from typing import Any

from sweworld.shell import simple_commands

KEYS = ("python", "packages", "reqs_path", "pip_packages", "pre_install", "install", "test_cmd", "log_parser",
        "env_vars")
LISTS = ("reqs_path", "pip_packages", "pre_install")
FORBIDDEN = {"sudo": "runs as another user", "su": "runs as another user", "doas": "runs as another user",
             "chroot": "leaves the tree", "nsenter": "enters other namespaces", "unshare": "makes namespaces",
             "mount": "mounts file systems", "umount": "unmounts file systems", "ssh": "reaches another host",
             "scp": "reaches another host", "nc": "opens raw connections", "ncat": "opens raw connections",
             "socat": "opens raw connections", "telnet": "reaches another host", "mkfs": "formats a device",
             "shutdown": "stops the machine", "reboot": "stops the machine", "kill": "signals other processes",
             "pkill": "signals other processes", "killall": "signals other processes"}
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "python", "python3", "perl"})
DOWNLOADERS = frozenset({"curl", "wget"})
SAFE_ROOTS = ("/testbed", "/tmp", "/sweworld/venv")
WRITE_TARGETS = re.compile(r"^(/etc|/usr|/bin|/sbin|/lib|/boot|/dev/(sd|nvme|vd|hd)|/proc|/sys|~/\.ssh|/root)")
FORK_BOMB = re.compile(r":\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:")


class Refused(ValueError):
    """A proposal that is not taken: the message says which field or command, and why."""


def _words_problem(words: list[str]) -> str | None:
    head = words[0].rsplit("/", 1)[-1]
    if head in FORBIDDEN:
        return f"`{head}` {FORBIDDEN[head]}"
    if head == "git" and "push" in words[1:3]:
        return "`git push` reaches another host"
    if head == "dd" and any(w.startswith("of=/dev/") for w in words):
        return "`dd` writes a device"
    if head == "rm" and any(w.startswith("-") and ("r" in w or "R" in w) for w in words[1:]):
        for target in (w for w in words[1:] if not w.startswith("-")):
            if target in ("/", "~", "/*", "*", "..") or (target.startswith(("/", "~"))
                                                        and not target.startswith(SAFE_ROOTS)):
                return f"`rm -r {target}` removes what is not the episode's"
    for word, following in zip(words, [*words[1:], ""], strict=True):
        redirect = re.match(r"^[0-9&]?>>?\|?", word)
        target = (word[redirect.end():] or following) if redirect else ""
        if target and WRITE_TARGETS.match(target):
            return f"a redirection writes into {target}"
    return None


def command_problem(command: str) -> str | None:
    """Why ``command`` is refused, or None."""
    if FORK_BOMB.search(command):
        return "a fork bomb"
    found = simple_commands(command)
    for index, (operator, words) in enumerate(found):
        problem = _words_problem(words)
        if problem:
            return problem
        head = words[0].rsplit("/", 1)[-1]
        if operator == "|" and head in SHELLS and index and found[index - 1][1][0].rsplit("/", 1)[-1] in DOWNLOADERS:
            return "a download piped into a shell"
    return None


def _as_list(value: Any, key: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    raise Refused(f"`{key}` must be a string or a list of strings, got {type(value).__name__}")


def checked(proposal: Any) -> dict[str, Any]:
    """``proposal`` as an ``install_config`` (``KEYS``); ``Refused`` when its shape or a command is not taken."""
    if not isinstance(proposal, dict):
        raise Refused(f"the proposal must be a JSON object of {', '.join(KEYS)}")
    unknown = sorted(set(proposal) - set(KEYS))
    if unknown:
        raise Refused(f"unknown keys {unknown}: use only {', '.join(KEYS)}")
    if not proposal.get("test_cmd"):
        raise Refused("`test_cmd` is missing: say how the tests run")
    config = {k: v for k, v in proposal.items() if v not in (None, "", [])}
    for key in LISTS:
        if key in config:
            config[key] = _as_list(config[key], key)
    commands = [*config.get("pre_install", []), *_as_list(config.get("install"), "install"),
                *_as_list(config.get("test_cmd"), "test_cmd")]
    for command in commands:
        problem = command_problem(command)
        if problem:
            raise Refused(f"refused {command!r}: {problem}")
    env_vars = config.get("env_vars", {})
    if not isinstance(env_vars, dict) or not all(isinstance(v, str) for v in env_vars.values()):
        raise Refused("`env_vars` must be an object of strings")
    if any(name in ("LD_PRELOAD", "PATH", "HOME") for name in env_vars):
        raise Refused("`env_vars` may not set LD_PRELOAD, PATH or HOME")
    return config
