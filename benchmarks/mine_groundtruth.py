"""``sweworld mine`` against SWE-bench's own rows: does mining a repository's history find, validate and
label SWE-bench's instances as SWE-bench did?

    python benchmarks/mine_groundtruth.py --dataset ROWS.json --repos-dir DIR [--workers 2] [--out runs/mine-gt]

For each row the step that brought its fix is located among the steps ``mine`` walks (the default
branch's first-parent chain and the pull request merges merged into it): one touching the row's
patch files, committed within two years after ``created_at``, whose changed lines cover the row's
patch and test patch best. Then ``mine`` runs over exactly those steps, repository by repository,
and the script prints per repository: rows, steps located, steps that pass the screen (candidates),
validated, ``FAIL_TO_PASS`` and ``PASS_TO_PASS`` equal to
SWE-bench's (exact set equality), with the differences listed after the table. ``DIR`` holds a
clone or bare mirror per repository (``DIR/owner__name``). The script names no dataset and no
repository.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path

from sweworld.backends.real import RealBackend
from sweworld.envs import EnvBuilder
from sweworld.mine.pipeline import MineOptions
from sweworld.mine.repository import steps
from sweworld.mine.run import mine_repository
from sweworld.repos import RepoStore, find_in_repos_dir
from sweworld.repos.git import try_git
from sweworld.tasks import load_tasks

WINDOW = timedelta(days=730)


def changed(diff: str) -> tuple[set[str], set[str]]:
    plus = {line[1:].strip() for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")}
    minus = {line[1:].strip() for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")}
    return plus - {""}, minus - {""}


def history_steps(mirror: Path, tasks) -> list:
    """The steps ``mine`` walks (``mine.repository.steps``) over the rows' window: from 3 days before
    the first row to two years after the last."""
    dates = sorted(datetime.fromisoformat(t.created_at.replace("Z", "+00:00")) for t in tasks)
    return steps(mirror, rev="HEAD", since=(dates[0] - timedelta(days=3)).isoformat(),
                 until=(dates[-1] + WINDOW).isoformat(), commits=None)


def locate(mirror: Path, task, walked: list) -> tuple[str | None, float]:
    """(the step of the walk that brought ``task``'s fix, how much of the row's changed lines it covers):
    among the steps within two years after ``created_at`` that touch the row's patch files, the best
    cover, then the one whose first parent is the row's base, then the oldest."""
    from sweworld.harness.patches import patch_paths

    start = datetime.fromisoformat(task.created_at.replace("Z", "+00:00")) - timedelta(days=3)
    files = set(patch_paths(task.patch))
    want_plus, want_minus = changed(task.patch + task.test_patch)
    scored = []
    for commit in walked:
        when = datetime.fromisoformat(commit.committed)
        if not (start <= when <= start + WINDOW) or not files & {f.path for f in commit.files}:
            continue
        diff = try_git(f"--git-dir={mirror}", "show", "--diff-merges=first-parent", "--no-renames", "--format=",
                       commit.sha)
        plus, minus = changed(diff or "")
        covered = (len(want_plus & plus) + len(want_minus & minus)) / max(1, len(want_plus) + len(want_minus))
        scored.append((round(covered, 3), commit.first_parent == task.base_commit, -when.timestamp(), commit.sha))
    best = max(scored, default=(0.0, False, 0.0, None))
    return (best[3], best[0]) if best[0] >= 0.5 else (None, best[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--repos-dir", required=True, type=Path)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--out", type=Path, default=Path("runs/mine-gt"))
    args = parser.parse_args()
    rows = list(load_tasks(args.dataset))
    by_repo = defaultdict(list)
    for task in rows:
        by_repo[task.repo].append(task)
    repos = RepoStore(repos_dir=args.repos_dir)
    backend = RealBackend(EnvBuilder(repos))
    lines, notes = [], []
    for repo, tasks in sorted(by_repo.items()):
        clone = find_in_repos_dir(args.repos_dir, repo)
        started = time.monotonic()
        walked = history_steps(clone, tasks)
        located = {t.instance_id: locate(clone, t, walked) for t in tasks}
        shas = [sha for sha, _ in located.values() if sha]
        out = args.out / f"{repo.replace('/', '__')}.jsonl"
        out.parent.mkdir(parents=True, exist_ok=True)
        result, summary = mine_repository(str(clone), out, MineOptions(commits=shas, workers=args.workers,
                                                                       timeout=args.timeout),
                                          backend=backend, repos=repos, name=repo)
        mined = {t.mined_from: t for t in result.instances}
        candidates = {c.commit.sha for c in result.screen.candidates}
        drops = {e["commit"]: e for e in result.entries if not e["kept"]}
        f2p_equal = p2p_equal = 0
        for task in tasks:
            sha, score = located[task.instance_id]
            if sha is None:
                notes.append(f"{task.instance_id}: no first-parent step covers the row (best {score:.2f})")
                continue
            if sha not in candidates:
                notes.append(f"{task.instance_id}: {sha[:10]} screened out ({result.screen.skipped.get(sha)})")
                continue
            if sha not in mined:
                notes.append(f"{task.instance_id}: {sha[:10]} dropped: {drops.get(sha, {}).get('reason')}")
                continue
            row = mined[sha]
            same_f2p, same_p2p = set(row.FAIL_TO_PASS) == set(task.FAIL_TO_PASS), \
                set(row.PASS_TO_PASS) == set(task.PASS_TO_PASS)
            f2p_equal += same_f2p
            p2p_equal += same_p2p
            for label, ours, theirs in (("FAIL_TO_PASS", row.FAIL_TO_PASS, task.FAIL_TO_PASS),
                                        ("PASS_TO_PASS", row.PASS_TO_PASS, task.PASS_TO_PASS)):
                extra, missing = sorted(set(ours) - set(theirs)), sorted(set(theirs) - set(ours))
                if extra or missing:
                    notes.append(f"{task.instance_id} {label}: +{len(extra)} {extra[:3]} -{len(missing)} {missing[:3]}"
                                 f" (base {'=' if row.base_commit == task.base_commit else '!='} SWE-bench's, "
                                 f"version {row.version} vs {task.version})")
        lines.append((repo, len(tasks), len(shas), len(candidates), len(mined), f2p_equal, p2p_equal,
                      round(time.monotonic() - started), summary.get("cpu_seconds")))
    print("| repository | rows | located | candidates | validated | F2P equal | P2P equal | wall s | CPU s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for line in lines:
        print("| " + " | ".join(str(v) for v in line) + " |")
    total = [sum(line[i] for line in lines) for i in range(1, 7)]
    print("| total | " + " | ".join(str(v) for v in total) + " | | |")
    print(f"found and validated: {total[3]}/{total[0]} ({total[3] / max(1, total[0]):.1%}); F2P equal among them: "
          f"{total[4]}/{total[3]} ({total[4] / max(1, total[3]):.1%}); P2P equal: {total[5]}/{total[3]}")
    for note in notes:
        print("-", note)
    (args.out / "groundtruth.json").write_text(json.dumps({"table": lines, "notes": notes}, indent=1) + "\n")


if __name__ == "__main__":
    main()
