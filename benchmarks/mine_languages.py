"""Yield of ``sweworld mine`` on repositories it was never tuned on, per language, in one run.

    python benchmarks/mine_languages.py --list benchmarks/mine_repos.txt --repos-dir DIR
        [--language python] [--since 2022-01-01] [--max 1] [--max-candidates 8] [--timeout 300]
        [--workers 2] [--out runs/mine-languages]

``--list``: one repository a line, ``owner/name language`` (``#`` starts a comment); ``DIR/owner__name``
is a clone or bare mirror of each. Each repository is mined with ``mine_repository`` (the library call
behind ``sweworld mine``) into ``OUT/owner__name.jsonl``, with its summary and ledger beside it: a rerun
resumes. A repository that fails (missing, not a git repository, an error of the run) is one line and
the run goes on.

Prints one row per repository (commits walked, candidates, validated, kept, CPU seconds, the main
causes of the drops) and per language: repositories with at least one validated task, validated tasks
per CPU-hour and disk per task beyond the shared environments. CPU is the run's own: as root, the
script moves itself into a cgroup of its own (every sandbox and test run it starts inherits it) and
reads it before and after each repository; otherwise this process's and its reaped children's
``getrusage`` time. The script names no repository; the list does.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from collections import Counter, defaultdict
from pathlib import Path

from mine_yield import cgroup_cpu_seconds, instance_disk, own_cgroup
from sweworld.backends.real import RealBackend
from sweworld.envs import EnvBuilder
from sweworld.mine.pipeline import MineOptions
from sweworld.mine.run import mine_repository
from sweworld.repos import RepoStore


def read_list(path: Path, language: str | None) -> list[tuple[str, str]]:
    """(owner/name, language) of each line of ``path``."""
    out = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2 or "/" not in parts[0]:
            raise SystemExit(f"{path}:{number}: expected 'owner/name language', got {raw!r}")
        if language is None or parts[1] == language:
            out.append((parts[0], parts[1]))
    return out


class CpuClock:
    """The run's own CPU seconds: its cgroup's (root), else getrusage of self and reaped children."""

    def __init__(self) -> None:
        self.group = own_cgroup()

    @property
    def source(self) -> str:
        return "cgroup" if self.group is not None else "getrusage"

    def __call__(self) -> float:
        if self.group is not None:
            return cgroup_cpu_seconds(self.group)
        own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def mine_one(repo: str, args: argparse.Namespace, repos: RepoStore, clock: CpuClock) -> dict:
    """One repository's row of the table (``error`` set when the run failed)."""
    source = args.repos_dir / repo.replace("/", "__")
    out = args.out / f"{repo.replace('/', '__')}.jsonl"
    options = MineOptions(since=args.since, max_instances=args.max, max_candidates=args.max_candidates,
                          workers=args.workers, timeout=args.timeout)
    cpu0, wall0, disk0 = clock(), time.monotonic(), instance_disk(repos, repo)
    row: dict = {"repo": repo}
    try:
        _result, summary = mine_repository(str(source), out, options, backend=RealBackend(EnvBuilder(repos)),
                                           repos=repos, name=repo)
    except Exception as exc:  # one repository fails, the run goes on
        row["error"] = f"{type(exc).__name__}: {(str(exc) or '').splitlines()[0] if str(exc) else ''}"
        summary = {}
    row.update(cpu=clock() - cpu0, wall=time.monotonic() - wall0, disk=instance_disk(repos, repo) - disk0,
               steps=summary.get("steps", 0), candidates=summary.get("candidates", 0),
               validated_candidates=summary.get("validated_candidates", 0), kept=summary.get("validated", 0),
               dropped=summary.get("dropped", {}), summary_cpu=summary.get("cpu_seconds"))
    return row


def causes(row: dict, n: int = 3) -> str:
    if row.get("error"):
        return row["error"][:100]
    screen = {"root commit", "revert", "release", "branch merge", "tests only", "docs only", "no source change",
              "no test change", "vendored", "generated", "binary files"}
    counted = Counter({k: v for k, v in row["dropped"].items() if k not in screen and not k.startswith(
        ("patch over", "test patch over", "excluded"))})
    return "; ".join(f"{k} ({v})" for k, v in counted.most_common(n)) or "-"


def report(rows: list[dict], languages: dict[str, str], clock: CpuClock) -> str:
    lines = ["| repository | language | commits | candidates | validated | kept | CPU s | drops after screening |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    lines += [f"| {r['repo']} | {languages[r['repo']]} | {r['steps']} | {r['candidates']} | "
              f"{r['validated_candidates']} | {r['kept']} | {r['cpu']:.0f} | {causes(r)} |" for r in rows]
    lines += ["", f"CPU measured by {clock.source}.", "",
              "| language | repositories with >= 1 task | kept | CPU h | kept per CPU-hour | disk per kept task |",
              "| --- | ---: | ---: | ---: | ---: | ---: |"]
    by: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by[languages[r["repo"]]].append(r)
    for language, group in sorted(by.items()):
        good, kept = sum(r["kept"] > 0 for r in group), sum(r["kept"] for r in group)
        cpu_h, disk = sum(r["cpu"] for r in group) / 3600, sum(max(r["disk"], 0) for r in group)
        per_h = f"{kept / cpu_h:.1f}" if cpu_h else "-"
        per_task = f"{disk / kept / 1e6:.1f} MB" if kept else "-"
        lines.append(f"| {language} | {good} of {len(group)} ({100 * good / len(group):.0f} %) | {kept} | "
                     f"{cpu_h:.2f} | {per_h} | {per_task} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", type=Path, required=True)
    parser.add_argument("--repos-dir", type=Path, required=True)
    parser.add_argument("--language")
    parser.add_argument("--since", default="2022-01-01")
    parser.add_argument("--max", type=int, default=1)
    parser.add_argument("--max-candidates", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("runs/mine-languages"))
    args = parser.parse_args()
    listed = read_list(args.list, args.language)
    args.out.mkdir(parents=True, exist_ok=True)
    clock, repos, rows = CpuClock(), RepoStore(), []
    for repo, _language in listed:
        rows.append(mine_one(repo, args, repos, clock))
        print(json.dumps({k: v for k, v in rows[-1].items() if k != "dropped"}), flush=True)
        (args.out / "rows.json").write_text(json.dumps(rows, indent=1) + "\n")
    print(report(rows, dict(listed), clock))


if __name__ == "__main__":
    main()
