#!/bin/bash
# Harbor verifier for psf__requests-90001 (SWE-bench-style grading).
# Harbor uploads tests/ to /tests after the agent finishes; the reward goes to
# /logs/verifier/reward.txt (1 = resolved, 0 = not).
set -uo pipefail

mkdir -p /logs/verifier
source /opt/miniconda3/bin/activate
conda activate testbed
cd /testbed

# Restore the test files the test patch touches, then apply it.
git checkout <base_commit> tests/test_requests.py
git apply -v /tests/test.patch || { echo 0 > /logs/verifier/reward.txt; exit 0; }

: '>>>>> Start Test Output'
pytest -rA tests/test_requests.py 2>&1 | tee /logs/verifier/test_output.txt
: '>>>>> End Test Output'

# Every FAIL_TO_PASS and PASS_TO_PASS test must be reported PASSED.
python - /tests/config.json /logs/verifier/test_output.txt <<'PY' > /logs/verifier/reward.txt
import json, re, sys
cfg = json.load(open(sys.argv[1]))
status = {}
for line in open(sys.argv[2], errors="replace"):
    m = re.match(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL)\s+(\S+)", line.strip())
    if m:
        status[m.group(2)] = m.group(1)
want = list(cfg["FAIL_TO_PASS"]) + list(cfg["PASS_TO_PASS"])
print(1 if want and all(status.get(t) == "PASSED" for t in want) else 0)
PY
