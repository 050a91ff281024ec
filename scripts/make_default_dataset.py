"""Build the embedded default dataset: synthesize from pinned PyPI releases, pick the lite split.

    python scripts/make_default_dataset.py [--work runs/default-dataset] [--workers 2]

Writes ``src/sweworld/datasets/default.jsonl.gz`` (every validated instance, release by release),
``src/sweworld/datasets/lite.jsonl.gz`` (50 of them: round-robin over releases and methods,
deterministic) and ``<work>/stats.json`` (yield per method, costs). Resumable: each release's
outcomes are cached under ``<work>``.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from sweworld.synth.instance import scrub_paths
from sweworld.synth.pipeline import SynthOptions, synthesize
from sweworld.synth.release import ReleaseSpec
from sweworld.tasks import save_tasks

RELEASES = [  # (repo, instances, extra test requirements); isodate 0.7.2 left out: its test ids
    # come from the iteration order of a set holding None, which changes from run to run
    ("pypi:cachetools==5.5.0", 45, ()),
    ("pypi:toolz==1.0.0", 50, ()),
    ("pypi:boltons==24.0.0", 40, ()),
    ("pypi:inflection==0.5.1", 25, ()),
    ("pypi:parse==1.20.2", 40, ()),
    ("pypi:voluptuous==0.15.2", 40, ()),
    ("pypi:schema==0.7.7", 35, ()),
    ("pypi:pathspec==0.12.1", 40, ()),
    ("pypi:tabulate==0.9.0", 40, ()),
]
SEED = 2026
LITE = 50
DATASETS = Path(__file__).resolve().parents[1] / "src" / "sweworld" / "datasets"


def lite_split(instances: list, size: int, seed: int) -> list:
    """``size`` instances, round-robin over releases, each release's picks spread over methods."""
    rng = random.Random(seed)
    queues: dict[str, list] = {}
    for task in instances:
        queues.setdefault(task.repo, []).append(task)
    for repo, tasks in queues.items():
        by_method: dict[str, list] = {}
        for task in tasks:
            by_method.setdefault(task.model_extra.get("method", ""), []).append(task)
        for group in by_method.values():
            rng.shuffle(group)
        ordered, groups = [], [by_method[m] for m in sorted(by_method)]
        while any(groups):
            for group in groups:
                if group:
                    ordered.append(group.pop())
        queues[repo] = ordered
    picked, repos = [], sorted(queues)
    while len(picked) < size and any(queues.values()):
        for repo in repos:
            if queues[repo] and len(picked) < size:
                picked.append(queues[repo].pop(0))
    return sorted(picked, key=lambda t: t.instance_id)


def kept_by_validation(instances: list, validated: Path) -> list:
    """The instances `sweworld validate` kept, as it wrote them (tests flaky under validation taken out
    of their lists), minus any whose listed tests did not behave as listed. Tests that validation
    finds passing beyond the lists are fine: they are the ids the harness's parser truncates at a
    space (parametrized ids with spaces), which synthesis leaves out of the stable baseline."""
    from sweworld.tasks import load_tasks

    kept = {t.instance_id: t for t in load_tasks(validated)}
    notes = json.loads(validated.with_name(validated.name + ".drops.json").read_text())
    flaky: dict[str, set[str]] = {}  # a test flaky in one instance of a release is dropped from all
    for note in notes["kept_with_notes"]:
        if note["instance_id"] in kept:
            flaky.setdefault(kept[note["instance_id"]].repo, set()).update(note["flaky"])
        if any("did not behave so" in d for d in note["disagreements"]):
            kept.pop(note["instance_id"], None)
    for iid, task in list(kept.items()):
        bad = flaky.get(task.repo, set())
        f2p = [t for t in task.FAIL_TO_PASS if t not in bad]
        kept[iid] = task.model_copy(update={"FAIL_TO_PASS": f2p,
                                            "PASS_TO_PASS": [t for t in task.PASS_TO_PASS if t not in bad]})
        if not f2p:
            kept.pop(iid)
    print(f"validation: tests flaky somewhere, dropped everywhere: {sorted(t for v in flaky.values() for t in v)}")
    dropped = [t.instance_id for t in instances if t.instance_id not in kept]
    print(f"validation: {len(dropped)} instances dropped: {dropped}")
    return [kept[t.instance_id] for t in instances if t.instance_id in kept]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("runs/default-dataset"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", nargs="*", help="Repos to (re)do, e.g. pypi:toolz==1.0.0")
    parser.add_argument("--validated", type=Path, help="Output of `sweworld validate` on the dataset: keep only "
                        "the instances it kept with no disagreement (the .drops.json beside it is read)")
    args = parser.parse_args()
    everything, stats = [], {}
    for repo, count, extra in RELEASES:
        name = repo.split(":", 1)[1].replace("==", "-")
        out = args.work / f"{name}.jsonl"
        if out.exists() and not (args.only and repo in args.only):
            from sweworld.tasks import load_tasks

            everything += list(load_tasks(out))
            stats[repo] = json.loads((args.work / f"{name}.stats.json").read_text())
            continue
        spec = ReleaseSpec(repo=repo, pip_packages=tuple(extra))
        result = synthesize(spec, SynthOptions(max_instances=count, seed=SEED, workers=args.workers),
                            work=args.work / f"{name}.work",
                            on_outcome=lambda o, n=name: print(f"{n} {o.index} {o.method} {o.status}", flush=True))
        save_tasks(result.instances, out)
        stats[repo] = result.stats.to_dict()
        (args.work / f"{name}.stats.json").write_text(json.dumps(stats[repo], indent=1) + "\n")
        everything += result.instances
        print(f"{repo}: {len(result.instances)} instances, {stats[repo]['validated_per_core_hour']} per core-hour",
              flush=True)
    if args.validated:
        everything = kept_by_validation(everything, args.validated)
    everything = [t.model_copy(update={"problem_statement": scrub_paths(t.problem_statement)}) for t in everything]
    save_tasks(everything, DATASETS / "default.jsonl.gz")
    save_tasks(lite_split(everything, LITE, SEED), DATASETS / "lite.jsonl.gz")
    (args.work / "stats.json").write_text(json.dumps(stats, indent=1) + "\n")
    print(f"{len(everything)} instances -> {DATASETS / 'default.jsonl.gz'}")


if __name__ == "__main__":
    main()
