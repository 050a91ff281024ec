"""The in-sandbox server: a tiny framed-bytes server that runs inside the namespaces.

It is started once per episode (as ``python -I -S server.py config``, standard library only) and
keeps a persistent ``bash`` whose working directory and exported variables survive between
commands. Requests arrive on stdin and replies leave on stdout as frames: a line with the number
of fields, then per field a line ``NAME SIZE`` and SIZE raw bytes. (No json/base64: importing them
costs more than the rest of the start-up; the host imports ``encode_msg`` and ``read_msg`` from here.)

Ops: ``run`` (in the persistent shell), ``exec`` (a fresh ``bash -c``, stateless), ``read``,
``write``, ``ping``, ``restore`` (every process but the server killed, the files put back as the
host's plan says, the shell's cwd and exports set for its next start: ``sandbox.snapshots``). A command past its wall timeout gets every process of the sandbox killed
(the pid namespace makes that exact) and the shell restarted with its last cwd and exports.
Output is read while the command runs; past the cap only the head and the tail are kept.

The server is the pid namespace's first process (bwrap ``--as-pid-1``): no process of the episode
can signal it, and it reaps the orphans. Once it has answered ``ready`` it makes itself
non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``), so that the episode's processes, which run without
``CAP_SYS_PTRACE``, cannot open its ``/proc/1/fd`` (the host's request and reply pipes) nor read its
``/proc/1/environ``; what it runs is dumpable again after ``execve``.

This module is executed as a script; it imports nothing from sweworld, only its two siblings
``frames`` and ``capture`` (copied beside it into the sandbox, see ``isolation.SERVER_FILES``).
"""

import os
import resource
import select
import sys
import time

if __package__:  # imported as sweworld.sandbox.server (nothing does today; keeps sys.path untouched)
    from . import kernel
    from .capture import Capture
    from .frames import read_msg, write_msg
else:  # run as a script inside the sandbox, its siblings beside it
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import kernel
    from capture import Capture
    from frames import read_msg, write_msg

STATE = "/tmp/.sweworld"
CMD_FILE = STATE + "/cmd.sh"
ENV_FILE = STATE + "/env.sh"
CWD_FILE = STATE + "/cwd"
CHUNK = 65536
SIGKILL = 9  # numeric: the signal module imports enum, which doubles the start-up time
SIGPIPE = 13


def set_limits(limits):
    for name, value in limits.items():
        if value is None:
            continue
        which = getattr(resource, name)
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            _soft, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                resource.setrlimit(which, (min(value, hard), hard))


PID_NAMESPACE = False  # set from the config: only then may we kill everything but ourselves


def descendants(root):
    """Pids whose ancestry leads to ``root`` (used where there is no pid namespace of our own)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as handle:
                    parents[int(entry)] = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier and pid not in found}
        found |= frontier
    return found


def zombie(pid):
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


def kill_all_but_me():
    """SIGKILL every process of this pid namespace except pid 1 (ourselves, or bwrap's init) and ourselves.

    Without a pid namespace of our own (isolation 'none') only our descendants are killed.
    """
    me = os.getpid()
    for attempt in range(30):
        if PID_NAMESPACE:
            victims = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, me)]
        else:
            victims = sorted(descendants(me))
        victims = [pid for pid in victims if not zombie(pid)]
        if not victims:
            return
        for pid in victims:
            try:
                os.kill(pid, SIGKILL)
            except OSError:
                pass
        reap()
        time.sleep(min(0.05, 0.0005 * 2 ** attempt))  # a killed process is gone within a ms or two


def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def read_into(fd, capture):
    try:
        data = os.read(fd, CHUNK)
    except BlockingIOError:
        return True
    if not data:
        return False
    capture.feed(data)
    return True


def drain(fd, capture):
    while True:
        try:
            data = os.read(fd, CHUNK)
        except BlockingIOError:
            return
        if not data:
            return
        capture.feed(data)


class Shell:
    """A persistent bash reading wrapped commands from a pipe."""

    def __init__(self, env, limits, cwd):
        self.env = env
        self.limits = limits
        self.cwd = cwd
        self.pid = None

    def start(self):
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        st_r, st_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.setsid()
                os.dup2(in_r, 0)
                os.dup2(out_w, 1)
                os.dup2(out_w, 2)
                os.dup2(st_w, 3)
                os.closerange(4, 1024)
                set_limits(self.limits)
                os.chdir(self.cwd)
                os.execve("/bin/bash", ["bash", "--noprofile", "--norc"], self.env)
            finally:
                os._exit(127)
        for fd in (in_r, out_w, st_w):
            os.close(fd)
        os.set_blocking(out_r, False)
        self.pid, self.stdin, self.out, self.status = pid, in_w, out_r, st_r
        init = "set +m; shopt -s expand_aliases\n"
        if os.path.exists(ENV_FILE):
            init += ". %s >/dev/null 2>&1\n" % ENV_FILE
        if os.path.exists(CWD_FILE):
            with open(CWD_FILE) as handle:
                init += "builtin cd -- %s 2>/dev/null\n" % quote(handle.read().strip() or self.cwd)
        os.write(self.stdin, init.encode())

    def stop(self):
        for fd in (self.stdin, self.out, self.status):
            try:
                os.close(fd)
            except OSError:
                pass
        self.pid = None

    def run(self, command, timeout, cap, cwd=None):
        restarted = False
        if self.pid is None:
            self.start()
        with open(CMD_FILE, "w") as handle:
            handle.write(command + "\n")
        body = "builtin source %s </dev/null 3>&-" % CMD_FILE
        if cwd:
            body = "( builtin cd -- %s && %s )" % (quote(cwd), body)
        wrapper = ("%s; __sw_rc=$?; builtin export -p >%s 2>/dev/null; builtin pwd >%s 2>/dev/null; "
                   "builtin printf '%%s\\n' \"$__sw_rc\" >&3\n" % (body, ENV_FILE, CWD_FILE))
        capture = Capture(cap)
        start = time.monotonic()
        try:
            os.write(self.stdin, wrapper.encode())
        except BrokenPipeError:
            pass
        status = b""
        exit_code, timed_out = None, False
        deadline = start + timeout if timeout else None
        out_open = True
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            fds = [self.status] + ([self.out] if out_open else [])
            ready, _, _ = select.select(fds, [], [], wait)
            if not ready:
                timed_out = True
                break
            if self.out in ready:
                out_open = read_into(self.out, capture)
            if self.status in ready:
                chunk = os.read(self.status, 64)
                status += chunk
                if b"\n" in status:
                    exit_code = int(status.split(b"\n")[0] or b"0")
                    break
                if not chunk:
                    break
        drain(self.out, capture)
        note = ""
        if timed_out:
            kill_all_but_me()
            drain(self.out, capture)
            exit_code = 124
            note = ("\n[sweworld: the command timed out after %gs; every process it started was killed "
                    "and the shell was restarted (cwd and exported variables kept)]\n" % timeout)
        elif exit_code is None:
            _, code = os.waitpid(self.pid, 0)
            exit_code = os.waitstatus_to_exitcode(code)
            if exit_code < 0:
                exit_code = 128 - exit_code
            note = ("\n[sweworld: the shell exited (status %d); a new shell was started with the last "
                    "cwd and exported variables]\n" % exit_code)
        if note:
            restarted = True
            reap()
            self.stop()
        output, truncated = capture.render()
        return {"output": output + note.encode(), "exit_code": exit_code, "timed_out": timed_out,
                "truncated": truncated, "duration": time.monotonic() - start, "restarted": restarted}


def quote(text):
    return "'" + text.replace("'", "'\\''") + "'"


def run_fresh(command, timeout, cap, env, limits, cwd):
    """A stateless command: a fresh ``bash -c`` in its own session; its group is killed on timeout."""
    out_r, out_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            fd = os.open("/dev/null", os.O_RDONLY)
            os.dup2(fd, 0)
            os.dup2(out_w, 1)
            os.dup2(out_w, 2)
            os.closerange(3, 1024)
            set_limits(limits)
            os.chdir(cwd)
            os.execve("/bin/bash", ["bash", "--noprofile", "--norc", "-c", command], env)
        finally:
            os._exit(127)
    os.close(out_w)
    capture = Capture(cap)
    start = time.monotonic()
    deadline = start + timeout if timeout else None
    timed_out = False
    while True:
        wait = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([out_r], [], [], wait)
        if not ready:
            timed_out = True
            break
        if not read_into(out_r, capture):
            break
    if timed_out:
        try:
            os.killpg(pid, SIGKILL)
        except OSError:
            pass
    _, code = os.waitpid(pid, 0)
    os.close(out_r)
    exit_code = 124 if timed_out else os.waitstatus_to_exitcode(code)
    if exit_code < 0:
        exit_code = 128 - exit_code
    output, truncated = capture.render()
    if timed_out:
        output += b"\n[sweworld: the command timed out after %gs and was killed]\n" % timeout
    return {"output": output, "exit_code": exit_code, "timed_out": timed_out,
            "truncated": truncated, "duration": time.monotonic() - start, "restarted": False}


def text(request, key, default=None):
    value = request.get(key)
    return value.decode("utf-8", "surrogateescape") if value is not None else default


def number(request, key, default=None):
    value = request.get(key)
    return float(value) if value else default


PROTECTED = False  # set once ready: whether undumpable() took


def remove(path):
    """``rm -rf path`` (nothing when it is not there)."""
    if os.path.isdir(path) and not os.path.islink(path):
        for entry in os.scandir(path):
            remove(entry.path)
        os.rmdir(path)
    elif os.path.lexists(path):
        os.unlink(path)


def put_back(request):
    """Apply a restore plan (``freeze.Plan``): fields ``k<i>`` (rm, dir, file, link), ``p<i>`` the
    path, ``d<i>`` the data or link target, ``m<i>`` the mode, ``t<i>`` the mtime in ns."""
    dirs = []
    for i in range(int(request["n"])):
        kind, path = request["k%d" % i], request["p%d" % i].decode("utf-8", "surrogateescape")
        data, mode, mtime = request.get("d%d" % i, b""), int(request.get("m%d" % i) or 0), int(request.get("t%d" % i) or 0)
        if kind == b"rm":
            remove(path)
        elif kind == b"dir":
            if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
                os.unlink(path)
            if not os.path.isdir(path):
                os.mkdir(path)
            os.chmod(path, mode)
            if mtime:
                dirs.append((path, mtime))
        else:
            if os.path.lexists(path):
                remove(path)
            if kind == b"link":
                os.symlink(data.decode("utf-8", "surrogateescape"), path)
                continue
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            os.chmod(path, mode)
            os.utime(path, ns=(mtime, mtime))
    for path, mtime in reversed(dirs):
        os.utime(path, ns=(mtime, mtime))


def restore(request, shell, persistent):
    """Back to a snapshot: no process of the episode survives, the files are put back, and the
    shell starts again (at the next command) in the snapshot's cwd with its exports."""
    kill_all_but_me()
    reap()
    if shell.pid is not None:
        shell.stop()
    put_back(request)
    for name, path in (("env", ENV_FILE), ("cwd", CWD_FILE)):
        with open(path, "wb") as handle_:
            handle_.write(request.get(name, b""))
    if persistent:  # started now, it is ready by the next command
        shell.start()
    return {"ok": True}


def handle(request, shell, config):
    op = text(request, "op")
    timeout = number(request, "timeout")
    cap = int(number(request, "cap", 0)) or config["output_cap"]
    if op == "ping":
        return {"ok": True, "pid": os.getpid(), "undumpable": PROTECTED}
    if op == "run" and config["persistent"]:
        return shell.run(text(request, "command"), timeout, cap, text(request, "cwd"))
    if op in ("run", "exec"):
        return run_fresh(text(request, "command"), timeout, cap, config["env"], config["limits"],
                         text(request, "cwd") or config["cwd"])
    if op == "restore":
        return restore(request, shell, config["persistent"])
    if op == "read":
        with open(text(request, "path"), "rb") as handle_:
            return {"data": handle_.read()}
    if op == "write":
        path = text(request, "path")
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "ab" if request.get("append") == b"1" else "wb") as handle_:
            handle_.write(request["data"])
        return {"ok": True}
    raise ValueError("unknown op %r" % op)


def load_config(path):
    """The config frame: cwd, persistent, output_cap, pid_namespace, env:NAME, limit:RLIMIT_X."""
    with open(path, "rb") as handle_:
        raw = read_msg(handle_)
    config = {"env": {}, "limits": {}, "cwd": raw["cwd"].decode(), "persistent": raw["persistent"] == b"1",
              "output_cap": int(raw["output_cap"]), "pid_namespace": raw["pid_namespace"] == b"1"}
    for key, value in raw.items():
        if key.startswith("env:"):
            config["env"][key[4:]] = value.decode("utf-8", "surrogateescape")
        elif key.startswith("limit:"):
            config["limits"][key[6:]] = int(value)
    return config


def main():
    global PID_NAMESPACE, PROTECTED
    config = load_config(sys.argv[1])
    PID_NAMESPACE = config["pid_namespace"] and os.getpid() <= 3
    os.makedirs(STATE, exist_ok=True)
    home = config["env"].get("HOME")
    if home:
        os.makedirs(home, exist_ok=True)
        with open(os.path.join(home, ".gitconfig"), "w") as handle_:
            handle_.write("[user]\n\tname = sweworld\n\temail = sweworld@localhost\n"
                          "[safe]\n\tdirectory = *\n[core]\n\tpager = cat\n")
    keyring = kernel.fresh_session_keyring()  # before the shell: nothing of the episode has run yet
    shell = Shell(config["env"], config["limits"], config["cwd"])
    if config["persistent"]:
        shell.start()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    write_msg(stdout, {"ready": True, "pid": os.getpid(), "keyring": keyring})
    # before the first request: nothing of the episode runs yet
    PROTECTED = kernel.undumpable()
    while True:
        request = read_msg(stdin)
        if request is None:
            break
        try:
            reply = handle(request, shell, config)
        except OSError as exc:
            reply = {"error": type(exc).__name__, "errno": exc.errno or 0, "message": str(exc)}
        except (ValueError, KeyError) as exc:
            reply = {"error": type(exc).__name__, "message": str(exc)}
        write_msg(stdout, reply)
        reap()
    if not PID_NAMESPACE:  # in our own pid namespace the kernel kills everything when its first process exits
        kill_all_but_me()


if __name__ == "__main__":
    main()
