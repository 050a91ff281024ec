"""Real SWE-bench verdicts with the seccomp filter and without, against Docker's (issue 50).

    python benchmarks/confinement_parity.py --dataset D --repos-dir DIR [--predictions P] [--workers 2]
        [--out runs/confinement]

Every instance's gold patch, and with ``--predictions`` every agent patch of that file (JSONL rows
``{instance_id, model_name_or_path, model_patch, docker_resolved}``, several runs per instance
allowed), graded twice in fresh episodes: under the episodes' seccomp filter (the default) and
without it (``allow_syscalls=['*']``), one after the other. Prints per repository the pairs graded,
the pairs whose verdicts (resolved, resolution, error kind, failing tests) are the same, and the
agreement of each side with Docker; then every pair that differs. Each pair is appended to
``OUT/pairs.jsonl`` as it is graded, and a rerun skips the pairs already there.
"""

from __future__ import annotations

import json
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from threading import Lock

from confinement import OFF, ON, evaluation
from swebench_parity import build_all, instances_and_builder


def read_pairs(path) -> list[dict]:
    if not path.exists():
        return []
    with path.open() as handle:
        return [json.loads(line) for line in handle]


def items(tasks, predictions: str | None) -> list[dict]:
    """(task, label, patch, docker verdict) for the gold patches and the agent patches."""
    by_id = {t.instance_id: t for t in tasks}
    found = [{"task": t, "label": "gold", "patch": t.patch, "docker": None} for t in tasks]
    if predictions:
        with open(predictions) as handle:
            for line in handle:
                row = json.loads(line)
                if row["instance_id"] in by_id:
                    found.append({"task": by_id[row["instance_id"]], "label": row["model_name_or_path"],
                                  "patch": row.get("model_patch") or "", "docker": row.get("docker_resolved")})
    return found


def main() -> None:
    args, tasks, builder = instances_and_builder(__doc__.splitlines()[0], "runs/confinement",
                                                 ("--predictions", {}), ("--gold-verdicts", {}))
    args.out.mkdir(parents=True, exist_ok=True)
    done_path = args.out / "pairs.jsonl"
    done = {(r["instance_id"], r["label"]) for r in read_pairs(done_path)}
    built, _ = build_all(builder, tasks, args.workers)
    gold_docker = json.loads(Path(args.gold_verdicts).read_text()) if args.gold_verdicts else {}
    todo = [i for i in items(tasks, args.predictions)
            if built.get(i["task"].instance_id) and (i["task"].instance_id, i["label"]) not in done]
    lock = Lock()

    def grade(item: dict) -> None:
        task = item["task"]
        if len(item["patch"]) % 2:  # either order, about half each: the second finds the caches the first warmed
            off, off_s = evaluation(builder, task, OFF, item["patch"])
            on, on_s = evaluation(builder, task, ON, item["patch"])
        else:
            on, on_s = evaluation(builder, task, ON, item["patch"])
            off, off_s = evaluation(builder, task, OFF, item["patch"])
        docker = item["docker"]
        if docker is None and item["label"] == "gold":
            docker = gold_docker.get(task.instance_id, {}).get("gold_resolved")
        row = {"instance_id": task.instance_id, "repo": task.repo, "label": item["label"], "on": list(on[:3]),
               "off": list(off[:3]), "same": on == off, "docker": docker, "on_s": on_s, "off_s": off_s}
        with lock, done_path.open("a") as handle:
            handle.write(json.dumps(row) + "\n")
        print(f"{task.instance_id} {item['label']}: on {on[:3]} off {off[:3]}", flush=True)

    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        list(pool.map(grade, todo))
    summarise(read_pairs(done_path))


def summarise(rows: list[dict]) -> None:
    total, same, on_docker, off_docker, with_docker = Counter(), Counter(), Counter(), Counter(), Counter()
    for row in rows:
        repo = row["repo"]
        total[repo] += 1
        same[repo] += row["same"]
        if row["docker"] is not None:
            with_docker[repo] += 1
            on_docker[repo] += row["on"][0] == row["docker"]
            off_docker[repo] += row["off"][0] == row["docker"]
    print(f"{'repository':<22}{'pairs':>6}{'same':>6}{'on=docker':>11}{'off=docker':>12}")
    for repo in sorted(total):
        print(f"{repo:<22}{total[repo]:>6}{same[repo]:>6}{on_docker[repo]:>7}/{with_docker[repo]:<3}"
              f"{off_docker[repo]:>8}/{with_docker[repo]:<3}")
    print(f"{'all':<22}{sum(total.values()):>6}{sum(same.values()):>6}{sum(on_docker.values()):>7}/"
          f"{sum(with_docker.values()):<3}{sum(off_docker.values()):>8}/{sum(with_docker.values()):<3}")
    on_s, off_s = sum(r["on_s"] for r in rows), sum(r["off_s"] for r in rows)
    print(f"grading time, filter on / off: {on_s:.0f} s / {off_s:.0f} s ({100 * (on_s / max(off_s, 1e-9) - 1):+.1f} %)")
    for row in rows:
        if not row["same"]:
            print(f"  differs: {row['instance_id']} {row['label']}: on {row['on']} off {row['off']}")


if __name__ == "__main__":
    main()
