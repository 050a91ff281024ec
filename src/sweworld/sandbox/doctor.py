"""``sweworld doctor``: which isolation and limits this host gives this user, and why.

Every check runs the real thing (``unshare``, an overlay mount, a whole episode) rather than reading
settings, and says for what is missing what fixes it (``diagnose``). ``ok`` False on a check marked
``required`` means episodes cannot be isolated here: the command then exits non-zero.
"""

from __future__ import annotations

import os
import pwd
import resource
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from sweworld.core import paths
from sweworld.core.errors import SWEWorldError
from sweworld.sandbox import diagnose, diskprobe, hostlimits, isolation, pids, route
from sweworld.sandbox.config import SandboxConfig


@dataclass
class Check:
    """One line of the report: ``ok`` True, False, or None (information, neither good nor bad)."""

    name: str
    ok: bool | None
    detail: str
    fix: str = ""
    required: bool = False

    def as_dict(self) -> dict:
        return asdict(self)


def _user() -> Check:
    uid = os.geteuid()
    try:
        name = pwd.getpwuid(uid).pw_name
    except KeyError:
        name = str(uid)
    return Check("user", None, f"{name} (uid {uid}{', root' if uid == 0 else ', no root'})")


def _bwrap() -> Check:
    found = shutil.which("bwrap")
    if not found:
        return Check("bubblewrap", False, "not installed", "an administrator installs the 'bubblewrap' package "
                     "(apt-get install bubblewrap / dnf install bubblewrap)", required=True)
    version = subprocess.run([found, "--version"], capture_output=True, text=True, env=isolation.LAUNCH_ENV).stdout
    setuid = " (setuid root)" if diagnose.is_setuid(found) else ""
    return Check("bubblewrap", True, f"{found}: {version.strip()}{setuid}")


def _namespaces() -> list[Check]:
    ok, err = route.probe_userns()
    if not ok:
        found = diagnose.cause(err)
        fix = found.fix if found else "see the error above"
        return [Check("user namespaces", False, found.what if found else err,
                      f"{fix}; or, where user namespaces must stay off, {SETUID_ROUTE}")]
    checks = [Check("user namespaces", True, "an ordinary user may create them (unshare --user --map-root-user)")]
    unshare = isolation.require("unshare", "util-linux")
    proc = subprocess.run([unshare, "--user", "--map-root-user", "--net", "--", "/bin/true"],
                          capture_output=True, text=True, env=isolation.LAUNCH_ENV)
    checks.append(Check("network namespace", proc.returncode == 0,
                        "episodes have no network (a namespace of their own)" if proc.returncode == 0
                        else proc.stderr.strip()[-300:],
                        "" if proc.returncode == 0 else "an administrator allows network namespaces in user "
                        "namespaces (a seccomp or AppArmor rule refuses them here)"))
    return checks


SETUID_ROUTE = ("an administrator installs bubblewrap setuid root (`chmod u+s $(command -v bwrap)`): sweworld "
                "then takes the setuid-bwrap route, copy workspaces and the same isolation (docs/rootless.md)")


def _route() -> Check:
    chosen = route.route()
    fix = chosen.fix
    if chosen.kind == "none":
        fix = f"{fix}; or {SETUID_ROUTE}" if fix else SETUID_ROUTE
    return Check("route", chosen.kind != "none", f"{chosen.kind}: {chosen.why}", fix, required=True)


def _workspace() -> Check:
    if route.route().kind != "userns":
        return Check("workspace", None, "copies (no overlay without a user namespace): opening an episode "
                     "copies its tree")
    ok, why = isolation.overlay_support()
    if ok:
        return Check("workspace", True, "overlay (copy-on-write; opening an episode costs the same whatever "
                     "the tree's size)")
    found = diagnose.cause(f"mount overlay: {why}")
    return Check("workspace", None, f"copies: overlay refused ({why[-200:]})",
                 found.fix if found else "")


def _episode() -> list[Check]:
    """A real episode: opened, a command run, its isolation probed (the keyring and the seccomp filter
    get lines of their own)."""
    from sweworld.sandbox.sandbox import Dir, Sandbox
    from sweworld.testing import keyring as keys
    from sweworld.testing.isolation import check_isolation
    keys.join()  # a session keyring of this process's own, shared with the thread that starts the episode
    try:
        route.route().check()
        with tempfile.TemporaryDirectory(prefix="sweworld-doctor-") as tmp:
            started = time.perf_counter()
            with Sandbox({"/testbed": Dir(Path(tmp))}, config=SandboxConfig(timeout=60)) as sb:
                first = sb.run("echo ok")
                opened = (time.perf_counter() - started) * 1000
                undumpable = sb.ping().get("undumpable") == b"1"
                skip = ("host_files", "read_only_host") + (("cache_paths",) if sb.info["workspace"] == "copy" else ())
                broken = check_isolation(lambda c: (lambda r: (r.exit_code, r.output))(sb.run(c, timeout=60)), skip=skip)
                info, keyring = sb.info, sb.keyring
    except SWEWorldError as exc:
        return [Check("episode", False, exc.message.split(": ", 1)[0] if route.route().kind == "none" else exc.message,
                      "see 'route' above" if route.route().kind == "none" else exc.hint or "", required=True)]
    return [_episode_line(first.output, broken, opened, info, undumpable), *_confinement_lines(broken, info, keyring)]


def _episode_line(answered: str, broken: list[str], opened: float, info: dict, undumpable: bool) -> Check:
    if answered != "ok\n" or broken:
        return Check("episode", False, "; ".join(broken) or f"echo answered {answered!r}",
                     "report this: an isolated episode should pass these probes", required=True)
    note = "" if undumpable else "; the in-episode server could not make itself non-dumpable (no ctypes?)"
    return Check("episode", True, f"opened and answered in {opened:.0f} ms ({info['route']}, {info['workspace']} "
                 f"workspace): no network, own pids, host read-only, no host environment or cache path "
                 f"visible{note}", required=True)


def _confinement_lines(broken: list[str], info: dict, keyring: str) -> list[Check]:
    """The session keyring and the seccomp filter, as the episode's probes found them."""
    key_broken = [b for b in broken if b.startswith("keyring")]
    keys = Check("keyring", keyring == "fresh" and not key_broken,
                 "; ".join(key_broken) or ("each episode joins a fresh session keyring: a key planted in this "
                                           "process's session keyring was neither read nor joined from inside"
                                           if keyring == "fresh" else f"episodes keep this process's session "
                                           f"keyring ({keyring}); the seccomp filter still refuses keyctl"),
                 "" if keyring == "fresh" and not key_broken else "report this, with the kernel's version")
    calls_broken = [b for b in broken if b.startswith("system calls")]
    filtered = info.get("seccomp", "off") != "off"
    calls = Check("seccomp", filtered and not calls_broken,
                  "; ".join(calls_broken) or (f"filter {info.get('seccomp')}: no nested user namespace, keyring, "
                                              "bpf, perf_event_open, io_uring or mount from inside (probed)"
                                              if filtered else "no filter (allow_syscalls ['*'] or no table for "
                                              "this architecture)"),
                  "" if filtered and not calls_broken else "run on x86_64 or aarch64, and leave allow_syscalls empty")
    return [keys, calls]


def _processes() -> Check:
    chosen = route.route().kind
    how = pids.enforcement(SandboxConfig().processes, chosen)
    _soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    limit = "unlimited" if hard == resource.RLIM_INFINITY else str(hard)
    detail = f"per episode: {SandboxConfig().processes} processes by {how}; the user's own limit (ulimit -u): {limit}"
    if os.geteuid() != 0 and hard != resource.RLIM_INFINITY:
        detail += (f"; all episodes together may use {max(0, hard - hostlimits.USER_RESERVE)}, "
                   f"{hostlimits.USER_RESERVE} stay the user's")
    fix = ""
    if how.startswith("rlimit (counting every"):
        fix = ("an episode's process limit counts all your processes here: keep episodes * their processes "
               "under `ulimit -u`, or ask for a kernel >= 5.14 or cgroup delegation")
    return Check("process limit", not how.startswith("not enforced"), detail, fix)


def _open_files() -> Check:
    soft, hard = hostlimits.raise_open_files()
    fits = (hard if hard != resource.RLIM_INFINITY else 10**6) // 4
    return Check("open files", fits >= 64, f"{soft} per process once sweworld raises it (hard limit {hard}): "
                 f"about {fits} live episodes per process (each holds three pipes)",
                 "" if fits >= 64 else "an administrator raises the hard `nofile` limit (/etc/security/limits.conf)")


def _cgroups() -> Check:
    """cgroup v2 delegation (what a memory limit over many episodes would need)."""
    unified = Path("/sys/fs/cgroup/cgroup.controllers")
    if not unified.exists():
        return Check("cgroup delegation", None, "none: this host mounts cgroup v1 (per-process limits: memory "
                     "by RLIMIT_AS, files by RLIMIT_FSIZE, processes as above)",
                     "for a memory limit per episode an administrator boots with cgroup v2 "
                     "(systemd.unified_cgroup_hierarchy=1) and delegates it (systemd user manager)")
    own = Path("/proc/self/cgroup").read_text().strip().split("::")[-1]
    mine = Path("/sys/fs/cgroup") / own.lstrip("/")
    delegated = os.access(mine, os.W_OK)
    controllers = (mine / "cgroup.controllers").read_text().split() if (mine / "cgroup.controllers").exists() else []
    return Check("cgroup delegation", None, f"cgroup v2; this process's cgroup {own} is "
                 f"{'writable' if delegated else 'not writable'} (controllers: {' '.join(controllers) or 'none'}); "
                 "sweworld limits episodes with rlimits (memory by RLIMIT_AS, files by RLIMIT_FSIZE)")


def _disk() -> list[Check]:
    home = paths.home()
    free = shutil.disk_usage(home).free / 1024**3
    space = Check("disk", free > 2, f"{free:.1f} GiB free under {home}; a file written in an episode is at most "
                  f"{(SandboxConfig().file_size or 0) / 1024**3:.0f} GiB (RLIMIT_FSIZE)",
                  "" if free > 2 else "free disk, or point SWEWORLD_HOME elsewhere")
    if route.route().kind == "none":
        return [space]
    ok, detail, fix = diskprobe.doctor_check()
    return [space, Check("disk bound", ok, detail, fix)]


def _others() -> Check:
    found = [tool for tool in ("apptainer", "singularity") if shutil.which(tool)]
    if not found:
        return Check("other runtimes", None, "no Apptainer/Singularity on PATH")
    return Check("other runtimes", None, f"{', '.join(found)} found: sweworld does not run episodes through "
                 "it; bubblewrap (a user namespace, or setuid) is its route")


def checks() -> list[Check]:
    """Every check, in order."""
    return [_user(), _bwrap(), *_namespaces(), _route(), _workspace(), *_episode(), _processes(), _open_files(),
            _cgroups(), *_disk(), _others()]


def isolated(results: list[Check]) -> bool:
    """Whether episodes can be isolated here: every required check passed."""
    return all(c.ok is not False for c in results if c.required)
