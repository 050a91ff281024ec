"""Fresh-clone `make demo`: wall time and `.venv` size from an empty venv, home and download caches.

    python benchmarks/fresh_demo.py REPO [--rev REV]
    python benchmarks/fresh_demo.py REPO --before REV --after REV     # both, one after the other, and the ratio

REPO is anything `git clone` takes (a path or a URL). Each measurement clones REPO at REV into a new
temporary directory and runs `make demo` there with SWEWORLD_HOME, UV_CACHE_DIR and PIP_CACHE_DIR
pointing at empty directories inside it (and PIP_NO_CACHE_DIR=1), so no run benefits from a warm
cache of an earlier one. `make demo`'s output goes to a log in that directory; the directory is removed
afterwards unless --keep or the run failed (then it is kept, with its log). The install time is the wall time minus the demo's own "demo finished in Ns".
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Measurement:
    rev: str
    commit: str
    wall_s: float
    demo_s: float | None
    venv: str
    venv_kb: int
    ok: bool


def _du_kb(path: Path) -> int:
    out = subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True, check=True).stdout
    return int(out.split()[0])


def _human(kb: int) -> str:
    return f"{kb / 1024 / 1024:.2f} GB" if kb >= 1024 * 1024 else f"{kb / 1024:.0f} MB"


def measure(repo: str, rev: str, keep: bool, timeout: float) -> Measurement:
    root = Path(tempfile.mkdtemp(prefix="fresh-demo-"))
    src = root / "src"
    subprocess.run(["git", "clone", "-q", repo, str(src)], check=True)
    subprocess.run(["git", "checkout", "-q", rev], cwd=src, check=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=src, capture_output=True,
                            text=True, check=True).stdout.strip()
    env = dict(os.environ)
    for var, name in (("SWEWORLD_HOME", "home"), ("UV_CACHE_DIR", "uv-cache"), ("PIP_CACHE_DIR", "pip-cache")):
        (root / name).mkdir()
        env[var] = str(root / name)
    env["PIP_NO_CACHE_DIR"] = "1"
    env.pop("VIRTUAL_ENV", None)
    log = root / "make-demo.log"
    print(f"[{rev} = {commit}] make demo in {src} (log: {log})", flush=True)
    start = time.monotonic()
    with log.open("w") as out:
        try:
            rc = subprocess.run(["make", "demo"], cwd=src, env=env, stdout=out, stderr=subprocess.STDOUT,
                                timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = -1
    wall = time.monotonic() - start
    text = log.read_text(errors="replace")
    found = re.findall(r"demo finished in (\d+(?:\.\d+)?)s", text)
    venv_kb = _du_kb(src / ".venv") if (src / ".venv").exists() else 0
    if rc != 0:
        print(f"make demo failed (rc {rc}); the end of its log:\n" + "\n".join(text.splitlines()[-30:]))
    if not keep and rc == 0:
        subprocess.run(["rm", "-rf", str(root)], check=False)
    return Measurement(rev, commit, wall, float(found[-1]) if found else None, _human(venv_kb), venv_kb, rc == 0)


def report(m: Measurement) -> None:
    demo = f"{m.demo_s:.0f} s" if m.demo_s is not None else "?"
    install = f"{m.wall_s - m.demo_s:.0f} s" if m.demo_s is not None else "?"
    print(f"{m.rev} ({m.commit}): wall {m.wall_s:.0f} s (install and set-up {install}, demo {demo}), "
          f".venv {m.venv}{'' if m.ok else ', FAILED'}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", help="the repository to clone (a path or URL)")
    ap.add_argument("--rev", default="HEAD", help="the revision to measure (default: the clone's HEAD)")
    ap.add_argument("--before", help="measure this revision first ...")
    ap.add_argument("--after", help="... then this one, and print the ratio")
    ap.add_argument("--keep", action="store_true", help="keep the temporary clones")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per `make demo` (default 3600)")
    args = ap.parse_args(argv)
    if bool(args.before) != bool(args.after):
        ap.error("--before and --after go together")
    revs = [args.before, args.after] if args.before else [args.rev]
    results = []
    for rev in revs:
        results.append(measure(args.repo, rev, args.keep, args.timeout))
        report(results[-1])
    if len(results) == 2:
        before, after = results
        print(f"ratio before/after: wall {before.wall_s / after.wall_s:.2f}x, "
              f".venv {before.venv_kb / max(after.venv_kb, 1):.2f}x")
    return 0 if all(m.ok for m in results) else 1


if __name__ == "__main__":
    sys.exit(main())
