"""Why a sandbox cannot start on this host, in one sentence, and what fixes it.

A locked-down host refuses sweworld's namespaces in a few known ways; each leaves its own words on
the standard error of ``unshare``, the mount stage or bubblewrap. ``cause`` reads them with the
host's own settings (``/proc/sys``) and returns the cause and the fix: the sysctl, the AppArmor
profile, the administrator's command. ``SandboxError`` messages and ``sweworld doctor`` both use it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

APPARMOR_PROFILE = """abi <abi/4.0>,
include <tunables/global>

profile sweworld-unshare /usr/bin/unshare flags=(unconfined) {
  userns,
  include if exists <local/sweworld-unshare>
}"""
"""What an administrator puts in ``/etc/apparmor.d/sweworld-unshare`` (then ``apparmor_parser -r``)
on Ubuntu >= 23.10, whose default profile restricts unprivileged user namespaces: the same as
Ubuntu's own ``bwrap-userns-restrict`` lets a listed program keep its user namespace."""


@dataclass(frozen=True)
class Cause:
    """Why the isolation failed (``what``) and what to do about it (``fix``)."""

    what: str
    fix: str

    def __str__(self) -> str:
        return f"{self.what}. Fix: {self.fix}"


def sysctl(name: str) -> str | None:
    """The value of ``name`` (dotted) on this host, or None where the kernel has no such setting."""
    try:
        return Path("/proc/sys", *name.split(".")).read_text().strip()
    except OSError:
        return None


def _userns_disabled() -> Cause | None:
    if sysctl("user.max_user_namespaces") == "0":
        return Cause("user namespaces are disabled on this host (user.max_user_namespaces = 0)",
                     "an administrator runs `sysctl -w user.max_user_namespaces=15000` (and sets it in "
                     "/etc/sysctl.d/ to keep it); or, where bubblewrap is installed setuid root, sweworld "
                     "uses it instead (copy workspaces)")
    if sysctl("kernel.unprivileged_userns_clone") == "0":
        return Cause("unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone = 0)",
                     "an administrator runs `sysctl -w kernel.unprivileged_userns_clone=1` (and sets it in "
                     "/etc/sysctl.d/)")
    return None


def _apparmor() -> Cause:
    return Cause("AppArmor restricts unprivileged user namespaces on this host "
                 "(kernel.apparmor_restrict_unprivileged_userns = 1): the namespace is created without "
                 "the right to map its user",
                 "an administrator installs an AppArmor profile that allows them for unshare "
                 "(/etc/apparmor.d/sweworld-unshare, see `sweworld doctor`; then `apparmor_parser -r` it), "
                 "or runs `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`")


def cause(stderr: str) -> Cause | None:
    """The cause behind a failed sandbox start's standard error, or None when it is not a known one."""
    text = stderr.lower()
    if "no space left on device" in text and ("unshare" in text or "namespace" in text):
        value = sysctl("user.max_user_namespaces")
        where = ("it is 0: user namespaces are disabled" if value == "0" else
                 f"here it reads {value}, so an enclosing namespace's limit or the host's is spent")
        return Cause(f"no user namespace is left to create (user.max_user_namespaces: {where})",
                     "an administrator raises `sysctl -w user.max_user_namespaces=15000`; each live episode "
                     "holds one, so fewer at once need fewer")
    if "uid_map" in text or "uid map" in text or "setgroups" in text:
        if sysctl("kernel.apparmor_restrict_unprivileged_userns") == "1":
            return _apparmor()
        return Cause("the user namespace cannot map this user (writing its uid_map was refused)",
                     "check that the host allows unprivileged user namespaces: `sweworld doctor` names "
                     "the setting")
    if "unshare failed" in text or ("operation not permitted" in text and "unshare" in text):
        return _userns_disabled() or (
            _apparmor() if sysctl("kernel.apparmor_restrict_unprivileged_userns") == "1" else
            Cause("this host refuses unprivileged user namespaces (a seccomp filter, a container "
                  "runtime, or a kernel setting)",
                  "run sweworld where they are allowed, or ask an administrator for bubblewrap "
                  "installed setuid root (`chmod u+s /usr/bin/bwrap`): sweworld then uses it"))
    if "mount" in text and "overlay" in text:
        return Cause("this host refuses overlay mounts in a user namespace (kernel < 5.11, or a "
                     "filesystem under SWEWORLD_HOME that overlayfs cannot use as its upper layer)",
                     "keep the default workspace mode 'auto' (it falls back to copies), or point "
                     "SWEWORLD_HOME at a local disk (not NFS)")
    if "creating new namespace failed" in text or "no permissions to create new namespace" in text:
        return _userns_disabled() or Cause(
            "bubblewrap cannot create its namespaces here", "run `sweworld doctor` for what this host allows")
    return None


def explain(stderr: str) -> str:
    """``cause`` as the sentence a ``SandboxError`` ends with ("" when unknown)."""
    found = cause(stderr)
    return f"{found.what}; fix: {found.fix}" if found else ""


FULL = ("No space left on device", "Disk quota exceeded")


def disk_full(output: str) -> str | None:
    """The words of a full disk (or quota) in a command's ``output``, or None: a build or a command
    that failed for want of disk, not for what it ran."""
    return next((word for word in FULL if word in output), None)


def is_setuid(path: str) -> bool:
    """Whether ``path`` is installed setuid root (bubblewrap on hosts without user namespaces)."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return bool(st.st_mode & 0o4000) and st.st_uid == 0
