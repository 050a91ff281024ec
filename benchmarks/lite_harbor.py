"""Harbor's ``oracle`` and ``nop`` agents on SWE-bench rows through ``harbor run -e
sweworld.integrations.harbor:SweworldEnvironment``: one Harbor task per instance in the form of
Harbor's SWE-bench adapter (the image in ``environment/Dockerfile``'s ``FROM``, ``solution/solve.sh``
applying the gold patch, ``tests/test.sh`` applying the test patch, running the spec's test command
after ``conda activate testbed`` and writing ``/logs/verifier/reward.txt``); prints each trial's
reward. Run it with the Python 3.12 environment (``.venv-py312``):

    .venv-py312/bin/python benchmarks/lite_harbor.py --dataset lite-6repos.json --repos-dir DIR ID ...
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

#: tests/test.sh's grader: pytest -rA's summary lines (colour codes removed), every listed test passed
PARSER = r'''import json, re, sys
log = re.sub(r"\x1b\[[0-9;]*m", "", open(sys.argv[1]).read())
tests = json.load(open(sys.argv[2]))
status = {}
for line in log.splitlines():
    for word in ("PASSED", "FAILED", "ERROR", "XFAIL", "SKIPPED"):
        if line.startswith(word + " "):
            status[line.split()[1]] = word
failing = [t for key in ("FAIL_TO_PASS", "PASS_TO_PASS") for t in tests[key] if status.get(t) not in ("PASSED", "XFAIL")]
print(json.dumps({"failing": failing}))
sys.exit(1 if failing else 0)
'''


def write_task(root: Path, row: dict) -> Path:
    from swebench.harness.constants import MAP_REPO_VERSION_TO_SPECS
    from swebench.harness.test_spec.python import get_test_directives
    org, rest = row["instance_id"].split("__", 1)
    name, number = rest.rsplit("-", 1)
    task = root / row["instance_id"]
    for sub in ("environment", "tests", "solution"):
        (task / sub).mkdir(parents=True, exist_ok=True)
    (task / "task.toml").write_text('schema_version = "1.4"\n\n[verifier]\ntimeout_sec = 1800.0\n\n[agent]\n'
                                    'timeout_sec = 1800.0\n\n[environment]\nbuild_timeout_sec = 1800.0\n')
    (task / "environment" / "Dockerfile").write_text(
        f"FROM swebench/sweb.eval.x86_64.{org}_1776_{name}-{number}:latest\nWORKDIR /testbed\n")
    (task / "instruction.md").write_text(row["problem_statement"])
    (task / "solution" / "solve.sh").write_text(
        f"#!/bin/bash\nset -euo pipefail\ncd /testbed\ngit apply --verbose - <<'__SOLUTION__'\n{row['patch']}\n__SOLUTION__\n")
    lists = {key: row[key] if isinstance(row[key], list) else json.loads(row[key]) for key in ("FAIL_TO_PASS", "PASS_TO_PASS")}
    (task / "tests" / "config.json").write_text(json.dumps(lists))
    (task / "tests" / "parser.py").write_text(PARSER)
    command = MAP_REPO_VERSION_TO_SPECS[row["repo"]][row["version"]]["test_cmd"]
    files = " ".join(get_test_directives(row))
    (task / "tests" / "test.sh").write_text(
        "#!/bin/bash\nset -uo pipefail -x\nLOG_FILE=$(mktemp)\nsource /opt/miniconda3/bin/activate\n"
        f"conda activate testbed\ncd /testbed\ngit apply -v - <<'__TEST_PATCH__'\n{row['test_patch']}\n__TEST_PATCH__\n"
        f"{command} {files} 2>&1 | tee \"$LOG_FILE\"\nset +x\npython /tests/parser.py \"$LOG_FILE\" /tests/config.json\n"
        "if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n")
    return task


def trial(task: Path, agent: str, dataset: Path, jobs: Path) -> dict:
    harbor = str(Path(sys.executable).with_name("harbor"))
    subprocess.run([harbor, "run", "-p", str(task), "-a", agent, "-e", "sweworld.integrations.harbor:SweworldEnvironment",
                    "--ek", f"dataset={dataset}", "-o", str(jobs), "--job-name", agent, "-y", "-q"],
                   capture_output=True, text=True, env={**os.environ, "HARBOR_TELEMETRY": "0"})
    found = [p for p in (jobs / agent).iterdir() if p.is_dir()] if (jobs / agent).is_dir() else []
    if not found:
        return {"agent": agent, "error": "no trial directory"}
    result = json.loads((found[0] / "result.json").read_text())
    rewards = (result.get("verifier_result") or {}).get("rewards") or {}
    return {"agent": agent, "reward": rewards.get("reward"),
            "exception": (result.get("exception_info") or {}).get("exception_type")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True, type=Path)
    parser.add_argument("--repos-dir", required=True)
    parser.add_argument("ids", nargs="+")
    args = parser.parse_args()
    dataset = args.dataset.resolve()
    os.environ.update(SWEWORLD_DATASET=str(dataset), SWEWORLD_REPOS_DIR=args.repos_dir)
    rows = {r["instance_id"]: r for r in json.loads(dataset.read_text())}
    root = Path(tempfile.mkdtemp(prefix="lite-harbor-"))
    for instance_id in args.ids:
        task = write_task(root / "tasks", rows[instance_id])
        for agent in ("oracle", "nop"):
            print(json.dumps({"instance_id": instance_id, **trial(task, agent, dataset, root / "jobs" / instance_id)}),
                  flush=True)


if __name__ == "__main__":
    main()
