"""SWE-Gym's repositories without Docker: mined, built with SWE-Gym's recipes, validated.

    python benchmarks/swegym_repos.py --repo MIRROR --name OWNER/NAME [--repo MIRROR2 --name OWNER/NAME2 ...]
        [--repos-file FILE] --since 2023-01-01 --until 2024-06-30 [--versions 3] [--per-version 3]
        [--max-candidates N] [--workers 2] [--out runs/swegym-repos] [--report]

For each repository (a local clone, a bare mirror or a URL, named as SWE-Gym names it; ``--repos-file``
lists ``LOCATION OWNER/NAME`` per line): its first-parent history in [since, until] is screened as
``sweworld mine`` does; the candidates are taken newest first from ``--versions`` release lines spread
over those that SWE-Gym has specs for (oldest, newest and evenly between), ``--per-version`` each;
they are validated as ``sweworld mine`` validates (``mine.pipeline.validate_candidates``: the tests
the test patch touches, without the fix (the empty patch) and with it, twice each; kept when some
test goes fail -> pass and none pass -> fail), with SWE-Gym's recipe (``recipe_source`` swegym).
Verdicts go to the ledger ``OUT/OWNER__NAME/tasks.jsonl.mine.jsonl``: a rerun with the same
arguments validates only what is missing, and ``--report`` prints the table from the ledger alone.

Printed per repository: versions tried and built, candidates, validated, kept, the median build
time of the environment stage and of the per-instance install layer (SWE-Gym's ``install`` runs per
instance), disk per environment and per kept instance beyond it (its install layer and base tree;
SWE-Gym: a 2.6 GB image per instance), CPU-seconds per kept instance (the run's own cgroup when it
can make one, summed over resumed runs), and the build failures by version and cause (the command
that failed, from the build's ``set -x`` trace, and the last lines of its log). The script names no
repository path.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from mine_yield import SWEGYM_IMAGE_MB, cgroup_cpu_seconds, own_cgroup
from sweworld.backends.real import RealBackend
from sweworld.core.errors import SWEWorldError
from sweworld.envs import EnvBuilder
from sweworld.envs.discovery import list_interpreters
from sweworld.envs.store import disk_usage, envs_root, read_meta
from sweworld.mine.candidates import Candidate, screen
from sweworld.mine.ledger import Ledger, verdict_key
from sweworld.mine.pipeline import MineOptions, validate_candidates
from sweworld.mine.repository import open_repository, steps
from sweworld.mine.run import output_paths
from sweworld.repos import RepoStore
from sweworld.tasks import save_tasks

TAIL = 3


def spread(candidates: list[Candidate], versions: int, per_version: int, limit: int | None) -> list[Candidate]:
    """Newest first, ``per_version`` of each of ``versions`` release lines (SWE-Gym spec'd ones only)
    spread from the oldest to the newest; round-robin over the lines, at most ``limit``."""
    by_version: dict[str, list[Candidate]] = defaultdict(list)
    for c in candidates:
        if (c.task.model_extra or {}).get("recipe_spec_version"):
            by_version[str(c.task.version)].append(c)
    lines = sorted(by_version, key=lambda v: [int(p) for p in v.split(".") if p.isdigit()])
    if len(lines) > versions:
        step = (len(lines) - 1) / max(versions - 1, 1)
        lines = list(dict.fromkeys(lines[round(i * step)] for i in range(versions)))
    chosen = []
    for rank in range(per_version):
        for line in reversed(lines):
            if rank < len(by_version[line]):
                chosen.append(by_version[line][rank])
    return chosen[:limit] if limit else chosen


def _failure(log: Path) -> str:
    """'failing command | last lines' of a failed build log (its ``set -x`` trace)."""
    try:
        lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "no log"
    body = [ln for ln in lines if not ln.startswith("### ")]
    command = next((ln[2:].strip() for ln in reversed(body) if ln.startswith("+ ")), "?")
    tail = [ln.strip()[:160] for ln in body if not ln.startswith("+ ")][-TAIL:]
    return f"`{command[:160]}` | " + " / ".join(tail)


def environments(builder: EnvBuilder, chosen: list[Candidate]) -> dict[str, dict[str, Any]]:
    """Per version: env key, whether built, env-stage seconds and bytes, install layers (seconds,
    bytes) and failed builds by cause. Bytes are what each adds on disk, in that order (a file shared
    with one counted before it is not counted again)."""
    out: dict[str, dict[str, Any]] = {}
    seen: set[tuple[int, int]] = set()
    for c in chosen:
        version = str(c.task.version)
        if version in out:
            continue
        info: dict[str, Any] = {"built": False, "layers": [], "failures": []}
        out[version] = info
        try:
            key = builder.key(c.task)
        except SWEWorldError as exc:
            info["failures"].append(f"recipe: {exc.message.splitlines()[0]}")
            continue
        env = envs_root() / key
        meta = read_meta(env / "env.json")
        info["key"] = key
        if not meta.get("complete"):
            log = envs_root() / "logs" / f"{key}.log"
            if log.is_file() and log.stat().st_size and not (envs_root() / f".{key}.building").exists():
                info["failures"].append("environment: " + _failure(log))
            continue
        info.update(built=True, seconds=meta.get("seconds"),
                    bytes=disk_usage(env / "venv", seen))
        for log in sorted((env / "logs").glob("*.log")):
            layer = read_meta(env / "instances" / log.stem / "meta.json")
            if layer.get("complete"):
                info["layers"].append({"seconds": layer.get("seconds"),
                                       "bytes": disk_usage(env / "instances" / log.stem, seen)})
            elif not (env / "instances" / f".{log.stem}.building").exists():  # not one in flight or killed
                info["failures"].append("install: " + _failure(log))
    return out


def mine_one(location: str, name: str, args: argparse.Namespace, repos: RepoStore, group: Path | None) -> dict:
    source, label, mirror = open_repository(location, repos, name)
    history = steps(mirror, rev=args.rev, since=args.since, until=args.until, commits=None)
    screened = screen(history, mirror=mirror, repo=label, source=source.describe(), limits=MineOptions().limits,
                      tree_of=lambda sha: repos.tree(label, sha, source),
                      available_pythons=[i.version for i in list_interpreters()])
    total = len(screened.candidates)
    chosen = spread(screened.candidates, args.versions, args.per_version, args.max_candidates)
    screened.candidates = chosen
    base = args.out / label.replace("/", "__")
    base.mkdir(parents=True, exist_ok=True)
    out = base / "tasks.jsonl"
    state_path = base / "swegym.json"
    state = json.loads(state_path.read_text()) if state_path.is_file() else {"cpu_seconds": 0.0, "runs": 0}
    options = MineOptions(rev=args.rev, since=args.since, until=args.until, workers=args.workers,
                          timeout=args.timeout)
    ledger = Ledger(output_paths(out)[1])
    builder = EnvBuilder(repos)
    if args.report:
        keys = [verdict_key(c.task, options.timeout, options.runs) for c in chosen]
        entries = [ledger.known[k] for k in keys if k in ledger.known]
    else:
        cpu0, spent = (cgroup_cpu_seconds(group) if group else None), state["cpu_seconds"]
        state["runs"] += 1

        def record(_entry: dict) -> None:  # a killed run keeps the CPU it had spent
            if group is not None:
                state["cpu_seconds"] = round(spent + cgroup_cpu_seconds(group) - cpu0, 1)
                state_path.write_text(json.dumps(state, indent=1) + "\n")

        result = validate_candidates(screened, RealBackend(builder), options, ledger=ledger, on_entry=record)
        record({})
        entries = result.entries
        save_tasks(result.instances, out)
    spec_lines = sorted({str(c.task.version) for c in screened.candidates})
    version_of = {c.task.instance_id: str(c.task.version) for c in chosen}
    per_version = {v: f"{sum(e['kept'] for e in entries if version_of.get(e['instance_id']) == v)} kept of "
                      f"{sum(version_of.get(e['instance_id']) == v for e in entries)}" for v in spec_lines}
    return {"repo": label, "steps": screened.steps, "candidates": total, "chosen": len(chosen),
            "versions_in_window": sorted({str(v) for v in screened.versions}), "versions_tried": spec_lines,
            "validated": len(entries), "kept": sum(bool(e["kept"]) for e in entries),
            "drops": dict(Counter(e["drop"] for e in entries if not e["kept"]).most_common()),
            "per_version": per_version,
            "cpu_seconds": state["cpu_seconds"] if group is not None or args.report else None,
            "envs": environments(builder, chosen), "trees_bytes": disk_usage(repos.root / "trees" /
                                                                            label.replace("/", "__"))}


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.0f}" if values else "-"


def row(r: dict) -> str:
    envs = r["envs"].values()
    built = [v for v, e in r["envs"].items() if e["built"]]
    layers = [layer for e in envs for layer in e["layers"]]
    env_mb = [e["bytes"] / 1e6 for e in envs if e["built"]]
    kept = r["kept"]
    beyond = (sum(la["bytes"] for la in layers) + r["trees_bytes"]) / kept / 1e6 if kept else None
    cpu = f"{r['cpu_seconds'] / kept:.0f}" if kept and r["cpu_seconds"] else "-"
    return (f"| {r['repo']} | {', '.join(r['versions_tried'])} | {', '.join(built) or '-'} | {r['candidates']} "
            f"({r['chosen']} chosen) | {r['validated']} | {kept} | {_median([e['seconds'] for e in envs if e['built']])}"
            f" / {_median([la['seconds'] for la in layers])} | {_median(env_mb)} MB | "
            f"{f'{beyond:.0f} MB' if beyond is not None else '-'} | {cpu} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", action="append", default=[], help="repeatable, each with its --name")
    parser.add_argument("--name", action="append", default=[])
    parser.add_argument("--repos-file", type=Path, help="lines 'LOCATION OWNER/NAME'")
    parser.add_argument("--since")
    parser.add_argument("--until")
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--versions", type=int, default=3)
    parser.add_argument("--per-version", type=int, default=3)
    parser.add_argument("--max-candidates", type=int)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--out", type=Path, default=Path("runs/swegym-repos"))
    parser.add_argument("--report", action="store_true", help="print the table from the ledgers, validate nothing")
    args = parser.parse_args()
    if len(args.repo) != len(args.name):
        parser.error("give one --name per --repo")
    pairs = list(zip(args.repo, args.name, strict=True))
    if args.repos_file:
        pairs += [tuple(line.split()[:2]) for line in args.repos_file.read_text().splitlines()
                  if line.strip() and not line.startswith("#")]
    group = None if args.report else own_cgroup()
    repos = RepoStore()
    results = []
    for location, name in pairs:
        result = mine_one(location, name, args, repos, group)
        results.append(result)
        (args.out / name.replace("/", "__") / "report.json").write_text(json.dumps(result, indent=1) + "\n")
    print("| repository | versions tried | built | candidates | validated | kept | median build s (env / "
          "install layer) | disk per environment | disk per kept instance beyond it | CPU s per kept |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in results:
        print(row(r))
    print(f"SWE-Gym: a {SWEGYM_IMAGE_MB} MB image per instance")
    for r in results:
        print(f"{r['repo']}: {'; '.join(f'{v}: {n}' for v, n in r['per_version'].items())}; "
              f"drops {r['drops'] or 'none'}")
        for version, e in r["envs"].items():
            for cause, n in Counter(e["failures"]).most_common():
                print(f"  {version}: {n} x {cause}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
