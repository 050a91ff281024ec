"""SWE-rebench rows of SWE-Gym-recipe instances: the same verdicts as the SWE-Gym-spec route?

    python benchmarks/rebench_parity.py [--ledgers runs/swegym-repos] [--per-repo 2] [--repo OWNER/NAME ...]
        [--out runs/rebench-parity]

For each repository mined by ``benchmarks/swegym_repos.py`` (its kept rows, ``OWNER__NAME/tasks.jsonl``
under ``--ledgers``), ``--per-repo`` instances are written as SWE-rebench publishes a row
(``envs.rebench.to_row``): no sweworld environment fields; ``install_config`` from SWE-Gym's spec of
the row's version (python, pre_install, install, pip_packages, test_cmd; ``packages:
requirements.txt`` with ``reqs_path``; ``log_parser``: SWE-Gym's for the repository); beside it the frozen
``requirements``, the ``pip freeze`` of the instance's SWE-Gym-route layer (as SWE-rebench freezes its
built environments); ``docker_image`` / ``image_name`` as SWE-rebench names them. The gold patch and
the empty patch are then graded through both routes (the rows' own SWE-Gym route, whose layers the
mining run built, and the SWE-rebench route, which builds its own environment from the row) and the
verdicts compared. The rows file is written under ``--out`` (not committed: it holds the rows of other
projects); the script names no repository path.
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from pathlib import Path

from sweworld.backends.real import evaluate_instance
from sweworld.core.errors import SWEWorldError
from sweworld.core.types import Task
from sweworld.envs import EnvBuilder, episode_sandbox
from sweworld.envs.rebench import to_row
from sweworld.envs.swegym_specs import REQS_PATHS, spec_for
from sweworld.harness.predictions import Prediction
from sweworld.harness.swegym_parsers import parser_name
from sweworld.tasks import load_tasks


def frozen(builder: EnvBuilder, task: Task) -> str:
    """``pip freeze`` of the task's SWE-Gym-route layer, without the project's own editable install."""
    with episode_sandbox(builder.instance(task), label="freeze") as sb:
        result = sb.run("python -m pip freeze --exclude-editable 2>/dev/null", timeout=300)
    lines = [ln for ln in result.output.splitlines() if ln.strip() and not ln.startswith(("-e ", "#"))]
    return "\n".join(lines) + "\n"


def install_config(task: Task) -> dict:
    spec = spec_for(task.repo, task.version) or {}
    return {"python": spec.get("python"), "packages": "requirements.txt",
            "reqs_path": REQS_PATHS.get(task.repo, ["requirements.txt"]), "pre_install": spec.get("pre_install"),
            "install": spec.get("install"), "pip_packages": spec.get("pip_packages"),
            "test_cmd": spec.get("test_cmd"), "log_parser": parser_name(task.repo)}


def verdicts(task: Task, builder: EnvBuilder, logs: Path) -> tuple[bool | str, bool | str]:
    """(gold resolved, empty resolved) of ``task``, or the error's first line for both."""
    out = []
    for patch in (task.patch, ""):
        prediction = Prediction(instance_id=task.instance_id, model_name_or_path="parity", model_patch=patch)
        try:
            report = evaluate_instance(task, prediction, logs / uuid.uuid4().hex[:8], builder=builder, timeout=900)
        except SWEWorldError as exc:
            return (exc.message.splitlines()[0],) * 2
        out.append(report.error.splitlines()[0] if report.error else report.resolved)
    return out[0], out[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ledgers", type=Path, default=Path("runs/swegym-repos"))
    parser.add_argument("--per-repo", type=int, default=2)
    parser.add_argument("--repo", action="append", default=[], help="OWNER/NAME (default: every mined repository)")
    parser.add_argument("--out", type=Path, default=Path("runs/rebench-parity"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    builder = EnvBuilder()
    names = args.repo or sorted(p.parent.name.replace("__", "/", 1) for p in args.ledgers.glob("*/tasks.jsonl"))
    print("| instance | version | SWE-Gym route (gold, empty) | SWE-rebench row (gold, empty) | same | s |")
    print("| --- | --- | --- | --- | --- | ---: |")
    same = total = 0
    for name in names:
        path = args.ledgers / name.replace("/", "__") / "tasks.jsonl"
        if not path.is_file():
            print(f"| {name} | - | no kept rows at {path} | | | |")
            continue
        for task in list(load_tasks(path))[: args.per_repo]:
            start = time.monotonic()
            own = verdicts(task, builder, args.out / "logs")
            rows = args.out / f"{task.instance_id}.jsonl"
            try:
                row = to_row(task, install_config(task), requirements=frozen(builder, task))
            except SWEWorldError as exc:
                print(f"| {task.instance_id} | {task.version} | {own} | row not written: {exc.message} | no | |")
                continue
            rows.write_text(json.dumps(row) + "\n")
            theirs = verdicts(load_tasks(rows).by_id(task.instance_id), builder, args.out / "logs")
            total += 1
            same += own == theirs
            print(f"| {task.instance_id} | {task.version} | {own} | {theirs} | {'yes' if own == theirs else 'NO'} | "
                  f"{time.monotonic() - start:.0f} |", flush=True)
    print(f"same verdicts: {same} of {total}")


if __name__ == "__main__":
    main()
