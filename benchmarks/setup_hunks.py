"""Patches written inside SWE-bench's images, graded as SWE-bench grades them, on real instances.

    python benchmarks/setup_hunks.py --dataset D --repos-dir DIR [--agent-patches P] [--workers 2]
        [--out runs/setup-hunks]

For every instance whose SWE-bench spec edits tracked files in its set-up (``tree_edits``: sphinx's
``tox.ini`` and ``setup.py`` pins, ...), the patch an agent's diff against the base commit holds in
the image: the gold fix plus the spec's own edits (its commands run on the base tree). Graded beside
the gold patch alone; printed per instance: both verdicts, the method that applied the patch and the
hunks found already in the tree. With ``--agent-patches`` (rows ``instance_id``,
``model_name_or_path``, ``model_patch``, ``docker_resolved``), every run's patches are graded too
and their verdicts compared with Docker's, per run and in all.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections import defaultdict
from pathlib import Path

from swebench_parity import build_all, instances_and_builder, run
from sweworld.envs import EnvBuilder
from sweworld.envs.swebench_specs import spec_for, tree_edit_commands
from sweworld.harness.predictions import Prediction, load_predictions


def setup_diff(builder: EnvBuilder, task) -> str:
    """The diff the spec's tree-editing set-up commands make on the task's base tree ("" if none)."""
    commands = tree_edit_commands(spec_for(task.repo, task.version))
    if not commands:
        return ""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        shutil.copytree(builder.repos.base_tree(task), tree, symlinks=True)
        subprocess.run(["bash", "-c", " && ".join(commands)], cwd=tree, check=True)
        return subprocess.run(["git", "diff", task.base_commit], cwd=tree, check=True, capture_output=True,
                              text=True).stdout


def main() -> None:
    args, tasks, builder = instances_and_builder(__doc__.splitlines()[0], "runs/setup-hunks", ("--agent-patches", {}))
    build_all(builder, tasks, args.workers)
    setups = {t.instance_id: setup_diff(builder, t) for t in tasks}
    with_setup = [t for t in tasks if setups[t.instance_id]]
    gold, _ = run(tasks, load_predictions("gold", tasks), "gold", args, builder)
    combined = {t.instance_id: Prediction(instance_id=t.instance_id, model_name_or_path="gold+setup",
                                          model_patch=t.patch + setups[t.instance_id]) for t in with_setup}
    extras: dict = {}
    plus, _ = run(with_setup, combined, "gold+setup", args, builder, records=extras)
    print(f"gold + the spec's set-up edits, {len(with_setup)} instances:")
    print(f"{'instance':<32}{'gold':>6}{'+setup':>8}  method / hunks already in the tree")
    for task in with_setup:
        report = extras.get(task.instance_id)
        how = f"{report.apply_method} / {len(report.hunks_already_present)}" if report else "not evaluated"
        print(f"{task.instance_id:<32}{gold[task.instance_id]!s:>6}{plus[task.instance_id]!s:>8}  {how}")
    same = sum(gold[t.instance_id] == plus[t.instance_id] for t in with_setup)
    print(f"same verdict as the gold patch alone: {same}/{len(with_setup)}")
    if args.agent_patches:
        rows = [json.loads(line) for line in Path(args.agent_patches).read_text().splitlines() if line.strip()]
        runs: dict[str, list[dict]] = defaultdict(list)
        for row in rows:
            runs[row["model_name_or_path"]].append(row)
        agree_all = 0
        for model, items in sorted(runs.items()):
            preds = {r["instance_id"]: Prediction(instance_id=r["instance_id"], model_name_or_path=model,
                                                  model_patch=r["model_patch"]) for r in items}
            verdicts, _ = run([t for t in tasks if t.instance_id in preds], preds, model, args, builder)
            agree = [r["instance_id"] for r in items if bool(verdicts.get(r["instance_id"])) == r["docker_resolved"]]
            agree_all += len(agree)
            differ = sorted({r["instance_id"] for r in items} - set(agree))
            print(f"{model}: {len(agree)}/{len(items)} verdicts equal Docker's" + (f"; differ: {differ}" if differ else ""))
        print(f"agent patches: {agree_all}/{len(rows)} verdicts equal Docker's")


if __name__ == "__main__":
    main()
