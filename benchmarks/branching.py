"""Snapshot, fork and restore of a live episode (issue 45), beside ``open``, real and sim.

    python benchmarks/branching.py --repo small=DIR --repo sympy=DIR [--repeat 30] [--forks 64] [--user NAME]

Each ``--repo`` is a checkout (any directory tree), copied once into a directory of the user
running the benchmark (as a user's own checkout is theirs to edit) and mounted read-only as the
episode's base. For each
repository, each backend (``real``: a sandbox; ``sim``: a sim episode over one, whose handle carries
the world's history too) and each change:

- ``agent``: three of the repository's files edited and two new ones written (a few KiB);
- ``build``: a build directory of 400 files of 64 KiB (25 MiB) written beside them;

one run measures, ``--repeat`` times, from a fresh state (a restore to the episode's first snapshot)
with the change made: ``snapshot()``; then, after one more small edit, ``restore(handle)`` (its
answer included: every process ended, the files put back); ``fork(handle)`` returning, and the fork
answering its first command (after an episode's first fork, forks are written into spares started
ahead: ``SandboxConfig.fork_spares``; the share of forks made that way is printed); and the disk
the snapshot holds (its own bytes, hard links to an
earlier copy not counted). ``open`` (open + first command) is measured the same way beside.

Then ``--forks`` forks of one episode (sympy's when given, the agent change made) are held at once
(``held.hold``): errors, PSS and disk per fork, and what is left after they close.
"""

from __future__ import annotations

import argparse
import os
import pwd
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from held import as_user, held_rows, hold, printer, report
from sweworld.core.types import Task
from sweworld.sandbox import Layers, Sandbox
from sweworld.world.simexec import SimExecutor
from trl_env import descendants, my_episodes, pct

CHANGES = {
    "agent": "for f in $(find . -name '*.py' -size +2k -not -path './.git/*' | sort | head -3); do "
             "printf '\\n# edited by the agent\\nVALUE = 1\\n' >> \"$f\"; done; "
             "printf 'import sys\\nprint(sys.argv)\\n' > reproduce.py; printf 'notes\\n' > NOTES.txt",
    "build": "mkdir -p build/lib && for i in $(seq 400); do head -c 65536 /dev/urandom > build/lib/part$i.so; done",
}
EDIT = "printf 'one more edit\\n' >> NOTES.txt; rm -f reproduce.py; mkdir -p scratch && echo x > scratch/x"


class NoWorld:
    """The sim episode's world model: never asked (every command here is a file utility, run for real)."""

    def predict(self, *args, **kwargs):
        raise AssertionError("a file utility was routed to the world model")


def episode(path: Path, backend: str):
    sandbox = Sandbox({"/testbed": Layers([path])}, label=f"bench-{path.name}")
    if backend == "real":
        return sandbox
    task = Task(instance_id="bench__branching-1", repo="bench/branching", base_commit="HEAD",
                problem_statement="", FAIL_TO_PASS=[], PASS_TO_PASS=[])
    return SimExecutor(sandbox, task, NoWorld())


def ms(samples: list[float]) -> dict:
    return {"p50": statistics.median(samples) * 1000, "p99": pct(samples, 0.99) * 1000}


def timed(fn):
    started = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - started


def measure_change(ep, change: str, repeat: int) -> dict:
    shell = ep.sandbox if isinstance(ep, SimExecutor) else ep  # the changes themselves, never simulated
    clean = ep.snapshot()
    snaps, restores, forks, firsts, disk, spared = [], [], [], [], [], 0
    for _ in range(repeat):
        ep.restore(clean)
        shell.run(CHANGES[change])
        handle, took = timed(ep.snapshot)
        snaps.append(took)
        disk.append(handle.bytes)
        shell.run(EDIT)
        _, took = timed(lambda h=handle: ep.restore(h))
        restores.append(took)
        child, took = timed(lambda h=handle: ep.fork(h))
        forks.append(took)
        spared += (child.sandbox if isinstance(child, SimExecutor) else child).info["fork"] == "into a spare"
        _, answered = timed(lambda c=child: c.run("true"))
        firsts.append(took + answered)
        child.close()
        ep.release(handle)
    ep.release(clean)
    return {"snapshot": ms(snaps), "restore": ms(restores), "fork": ms(forks), "fork_first": ms(firsts),
            "disk_kib": statistics.median(disk) / 1024, "spared": spared / repeat}


def measure(args: argparse.Namespace) -> dict:
    figures: dict = {"who": pwd.getpwuid(os.geteuid()).pw_name, "uid": os.geteuid()}
    work = Path(tempfile.mkdtemp(prefix="sweworld-branching-bench-"))
    for name, where in (r.split("=", 1) for r in args.repo):
        path = work / name
        shutil.copytree(where, path, symlinks=True)
        opens = []
        for _ in range(args.repeat + 1):
            ep, took = timed(lambda p=path: episode(p, "real"))
            _, answered = timed(lambda e=ep: e.run("true"))
            opens.append(took + answered)
            ep.close()
        figures[f"{name}/open"] = ms(opens[1:])
        for backend in ("real", "sim"):
            ep = episode(path, backend)
            for command in ("ls", "cd /testbed", "ls -la"):  # a little history for the sim's handles
                ep.run(command)
            for change in CHANGES:
                figures[f"{name}/{backend}/{change}"] = measure_change(ep, change, args.repeat)
            ep.close()
    name = args.repo[-1].split("=", 1)[0]
    parent = episode(work / name, "real")
    parent.run(CHANGES["agent"])
    handle = parent.snapshot()
    figures[f"live{args.forks}"] = hold(lambda: parent.fork(handle), args.forks, args.workers)
    figures["forks_of"], figures["forks"] = name, args.forks
    parent.close()
    time.sleep(1)
    figures["all_closed"] = {"dirs": len(my_episodes()), "processes": len(descendants())}
    shutil.rmtree(work)
    return figures


def table(runs: list[dict]) -> None:
    row = printer(runs)
    keys = [k for k in runs[0] if k.count("/") == 2]
    for repo in dict.fromkeys(k.split("/")[0] for k in keys):
        cells = [f"{r[f'{repo}/open']['p50']:.1f} / {r[f'{repo}/open']['p99']:.1f}" for r in runs]
        print(f"| {repo}: open + first command p50 / p99 (ms) | " + " | ".join(cells) + " |")
    for key in keys:
        for what, label in (("snapshot", "snapshot"), ("restore", "restore"), ("fork", "fork returns"),
                            ("fork_first", "fork + its first command")):
            cells = [f"{r[key][what]['p50']:.1f} / {r[key][what]['p99']:.1f}" for r in runs]
            print(f"| {key}: {label} p50 / p99 (ms) | " + " | ".join(cells) + " |")
        row(f"{key}: disk per snapshot (KiB)", lambda v: f"{v:.1f}", key, "disk_kib")
        row(f"{key}: forks written into a spare", lambda v: f"{v:.0%}", key, "spared")
    held_rows(row, runs, f"forks of one {runs[0]['forks_of']} episode")
    row("after the parent closed too: episode and snapshot directories left", str, "all_closed", "dirs")
    row("after the parent closed too: sandbox processes left", str, "all_closed", "processes")
    for run in runs:
        for error in run[f"live{run['forks']}"]["first_errors"]:
            print(f"\n{run['who']}: a fork failed: {error}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", action="append", required=True, help="NAME=DIR, a checkout (repeatable)")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--forks", type=int, default=64)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--user", help="also measure as this ordinary user (run as root)")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    runs = [measure(args)]
    if args.user:
        argv = [a for r in args.repo for a in ("--repo", r)]
        runs.append(as_user(args.user, __file__, [*argv, "--repeat", str(args.repeat), "--forks", str(args.forks),
                                                  "--workers", str(args.workers)]))
    report(args, runs, table)


if __name__ == "__main__":
    main()
