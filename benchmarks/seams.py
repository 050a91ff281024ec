"""Every framework seam's cost in one run: each ``benchmarks/seam_*.py`` after the other, each timing
one ``echo`` through its seam against the episode's own ``Executor.run`` in its own process (so the
ratio of each line is measured in one run), with the interpreter its framework needs (OpenHands and
Harbor: ``.venv-py312``, the environment ``make test`` builds).

    python benchmarks/seams.py [--calls 200] [--samples 64]

Goals (issue: the agents people run): in-process seams (inspect, OpenHands, Harbor) <= 1.2x direct;
SWE-ReX's HTTP seam <= 2 ms over direct; 64 concurrent inspect samples with 0 errors.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY312 = ROOT / ".venv-py312" / "bin" / "python"


def seams(args: argparse.Namespace) -> list[tuple[str, str, Path, list[str]]]:
    calls = ["--calls", str(args.calls)]
    return [("inspect-ai", "seam_inspect.py", Path(sys.executable), [*calls, "--samples", str(args.samples)]),
            ("SWE-ReX", "seam_swerex.py", Path(sys.executable), calls),
            ("OpenHands", "seam_openhands.py", PY312, calls),
            ("Harbor", "seam_harbor.py", PY312, calls)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--samples", type=int, default=64)
    args = parser.parse_args()
    failed = 0
    for name, script_name, python, extra in seams(args):
        script = ROOT / "benchmarks" / script_name
        print(f"== {name} ({script_name}, {python})", flush=True)
        if not python.exists():
            print(f"   skipped: {python} is missing (make test builds it)")
            continue
        proc = subprocess.run([str(python), str(script), *extra], cwd=ROOT, text=True, capture_output=True)
        print("\n".join(line for line in proc.stdout.splitlines() if line.strip()))
        if proc.returncode != 0:
            failed += 1
            print(f"   failed (exit {proc.returncode}): {proc.stderr.strip()[-1500:]}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
