"""Base trees shared between commits (issue 20): time and extra disk of each tree, old vs new way.

    python benchmarks/base_tree.py --repo DIR [--name owner/name] (COMMIT ... | --dataset FILE)

``--repo``: a clone (or bare repository) with the commits; ``--dataset``: a JSON or JSONL file of
task rows whose ``base_commit`` (rows of ``--name`` only, when given) are measured, in file order.
For each commit, in one run and in two fresh caches under ``--work``:

- old: what ``RepoStore.tree`` did before trees were shared: ``git fetch --depth 1`` of the commit
  from the mirror into an empty repository, ``git checkout``, each tree on its own;
- new: ``RepoStore.tree`` (the first tree from the mirror, each further one hard-linking what it has
  in common with a finished tree of the same repository, see ``sweworld/repos/share.py``).

Time: the call, from a resolved mirror (cloned before the first measurement), wall and CPU (this
process and its children; steadier than wall on a busy machine); disk: bytes actually allocated
under the cache's ``trees`` directory (st_blocks, each inode once) after minus before;
``cp -al``: a hard-link copy of the previous new tree, the floor of any tree made of hard links;
``shared``: the new tree's files that are hard links. The two trees of a commit are checked to hold
the same files (paths, modes, contents).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sweworld.envs.store import disk_usage
from sweworld.repos import RepoStore
from sweworld.repos.cache import locked, publish, staging
from sweworld.repos.commit import commit_env
from sweworld.repos.git import UPLOAD_PACK, git
from sweworld.repos.source import safe_name

MB = 1e6


def old_build(mirror: Path, sha: str, dest: Path) -> None:
    """The tree as built before sharing (``repos/tree.py`` up to issue 20)."""
    git("init", "--quiet", "--template=", dest)
    run = (f"--git-dir={dest / '.git'}", f"--work-tree={dest}")
    git(*run, "fetch", "--quiet", "--depth", "1", "--no-tags", "--no-write-fetch-head",
        f"--upload-pack={UPLOAD_PACK}", str(mirror), sha, cwd=dest)
    git(*run, "checkout", "--quiet", "--detach", sha, cwd=dest, env=commit_env())
    git(*run, "config", "core.autocrlf", "false", cwd=dest)
    git(*run, "update-index", "-q", "--refresh", cwd=dest)
    (dest / ".git" / "sweworld-complete").write_text(sha + "\n")


def old_tree(store: RepoStore, name: str, sha: str, source: str) -> Path:
    """``RepoStore.tree`` with the old build: resolve, lock, stage, build, publish."""
    sha = store.resolve(name, sha, source)
    final = store.tree_path(name, sha)
    mirror = store.mirror(name, source)
    with locked(store.root, f"tree-{safe_name(name)}-{sha}"), staging(final) as tmp:
        old_build(mirror, sha, tmp)
        publish(tmp, final)
    return final


def worktree_digest(tree: Path) -> str:
    """A digest of the worktree: every path, its mode and its content (or link target)."""
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if not (Path(root) == tree and d == ".git"))
        for name in sorted(files) + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            path = Path(root) / name
            st = path.lstat()
            body = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            digest.update(f"{path.relative_to(tree)}\0{st.st_mode:o}\0".encode())
            digest.update(hashlib.sha256(body).digest())
    return digest.hexdigest()


def shared_fraction(tree: Path) -> float:
    """The fraction of the tree's files (worktree and .git) that are hard links shared with another tree."""
    total = shared = 0
    for root, _dirs, files in os.walk(tree):
        for name in files:
            total += 1
            shared += os.lstat(os.path.join(root, name)).st_nlink > 1
    return shared / total if total else 0.0


@dataclass
class Cost:
    """One tree: wall seconds, CPU seconds (this process and its children) and bytes added."""

    seconds: float
    cpu: float
    bytes: int


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(build, trees: Path) -> tuple[Cost, Path]:
    """The cost of ``build()``, the bytes being what it added under ``trees``; and the tree it built."""
    os.sync()
    before = disk_usage(trees) if trees.exists() else 0
    cpu, started = cpu_seconds(), time.perf_counter()
    tree = build()
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    os.sync()
    return Cost(seconds, cpu, disk_usage(trees) - before), tree


def commits_of(args: argparse.Namespace) -> list[str]:
    if not args.dataset:
        return list(args.commits)
    text = Path(args.dataset).read_text()
    if text.lstrip().startswith("["):
        rows = json.loads(text)
    else:
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    wanted = [r["base_commit"] for r in rows if args.name is None or r.get("repo") == args.name]
    return list(dict.fromkeys(wanted + list(args.commits)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="a clone or bare repository holding the commits")
    parser.add_argument("--name", help="the repository label (owner/name); also selects --dataset rows")
    parser.add_argument("--dataset", help="JSON or JSONL task rows; their base_commit are measured")
    parser.add_argument("--work", help="where the two caches go (default: a temporary directory, removed); "
                        "on the file system of --repo, the mirrors are hard-linked, not copied")
    parser.add_argument("--no-old", action="store_true", help="measure the new way only")
    parser.add_argument("commits", nargs="*")
    args = parser.parse_args()
    commits = commits_of(args)
    if not commits:
        parser.error("no commits: give some, or --dataset (with --name)")
    name = args.name or f"local/{safe_name(Path(args.repo).resolve().name)}"
    source = str(Path(args.repo).resolve())
    work = Path(args.work).resolve() if args.work else Path(tempfile.mkdtemp(prefix="sweworld-bench-trees-"))
    ways = {"new": RepoStore(root=work / "new")}
    if not args.no_old:
        ways["old"] = RepoStore(root=work / "old")
    try:
        for store in ways.values():
            store.mirror(name, source)
        run(ways, name, source, commits)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


def link_copy_seconds(tree: Path) -> float:
    """Seconds of ``cp -al`` of ``tree`` (the floor of any copy by hard links), the copy removed after."""
    scratch = tree.parent / f".cp-al-{tree.name}"
    os.sync()
    started = time.perf_counter()
    subprocess.run(["cp", "-al", str(tree), str(scratch)], check=True)
    seconds = time.perf_counter() - started
    shutil.rmtree(scratch)
    return seconds


def run(ways: dict[str, RepoStore], name: str, source: str, commits: list[str]) -> None:
    costs: dict[str, list[Cost]] = {way: [] for way in ways}
    print(f"{name}: {len(commits)} commits; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'#':>3} {'commit':12} {'old s':>6} {'new s':>6} {'ratio':>6} {'old cpu':>7} {'new cpu':>7} "
          f"{'cp -al':>6} {'old MB':>7} {'new MB':>7} {'ratio':>6} {'shared':>6}")
    previous: Path | None = None
    nan = Cost(float("nan"), float("nan"), 0)
    for n, commit in enumerate(commits, 1):
        floor = link_copy_seconds(previous) if previous is not None else float("nan")
        built = {}
        for way, store in ways.items():
            def build(store=store, commit=commit, way=way) -> Path:
                if way == "new":
                    return store.tree(name, commit, source)
                return old_tree(store, name, commit, source)
            cost, built[way] = measure(build, store.root / "trees")
            costs[way].append(cost)
        if "old" in built and worktree_digest(built["old"]) != worktree_digest(built["new"]):
            raise SystemExit(f"{commit}: the new tree differs from the old one")
        previous = built["new"]
        new, old = costs["new"][-1], costs["old"][-1] if "old" in costs else nan
        speedup = old.seconds / new.seconds
        print(f"{n:>3} {commit[:12]:12} {old.seconds:6.2f} {new.seconds:6.2f} {speedup:5.1f}x {old.cpu:7.2f} "
              f"{new.cpu:7.2f} {floor:6.2f} {old.bytes / MB:7.2f} {new.bytes / MB:7.2f} "
              f"{old.bytes / max(new.bytes, 1):5.1f}x {shared_fraction(previous):6.0%}")
    summary(costs)


def summary(costs: dict[str, list[Cost]]) -> None:
    print()
    for label, part in (("first tree", slice(0, 1)), ("each further tree", slice(1, None))):
        cells = []
        for way, values in costs.items():
            chosen = values[part]
            if not chosen:
                continue
            seconds, cpu, sizes = ([getattr(c, f) for c in chosen] for f in ("seconds", "cpu", "bytes"))
            cells.append(f"{way} median {statistics.median(seconds) * 1000:.0f} ms "
                         f"(max {max(seconds) * 1000:.0f}), cpu {statistics.median(cpu) * 1000:.0f} ms, "
                         f"{statistics.median(sizes) / MB:.2f} MB (max {max(sizes) / MB:.2f})")
        if cells:
            print(f"{label}: " + "; ".join(cells))
    if "old" in costs and len(costs["new"]) > 1:
        old, new = costs["old"][1:], costs["new"][1:]
        def ratio(field: str) -> float:
            return sum(getattr(c, field) for c in old) / max(sum(getattr(c, field) for c in new), 1e-9)
        print(f"further trees, old/new: time {ratio('seconds'):.1f}x, cpu {ratio('cpu'):.1f}x, "
              f"disk {ratio('bytes'):.1f}x")
    totals = {way: sum(c.bytes for c in values) / MB for way, values in costs.items()}
    print("all trees: " + ", ".join(f"{way} {mb:.1f} MB" for way, mb in totals.items())
          + f"; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
