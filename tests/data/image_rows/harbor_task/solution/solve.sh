#!/bin/bash
# Oracle: apply the gold patch in the agent's working directory.
set -euo pipefail
cd /testbed
git apply -v /solution/gold.patch
