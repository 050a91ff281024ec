"""P3: the sim backend's cost over the real one, measured in one run on one shipped instance.

    python benchmarks/world_p3.py [--dataset demo] [--instance ID] [--repeat 30]

- navigation step: ``SimExecutor.run`` vs ``Sandbox.run`` of the same navigation commands (routing
  is the difference; goal <= 1 ms more), and an editor ``view`` through the tools on both;
- episode open: ``SimBackend.open`` (no environment) vs ``RealBackend.open`` (goal: sim <= 20 ms;
  the sandbox's namespaces come up in the background, so also open + first command + close);
- disk: what a sim task needs (the shared base tree; the episode's own upper after the steps) vs a
  real one (the environment's venv and the install layer on top of the same tree).
SWT/SWR call overhead is measured by ``benchmarks/world_overhead.py``. The world model is never
called here (navigation only), so a closed port serves as its endpoint.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from sweworld.backends.real import RealBackend
from sweworld.backends.sim import SimBackend
from sweworld.datasets import path_of
from sweworld.tasks import load_tasks
from sweworld.tools import default_tools
from sweworld.world.config import WorldConfig
from sweworld.world.router import route

NAVIGATION = ["ls", "grep -n 'def ' {module} | head -20", "git status --short", "find . -name '*.py' | wc -l",
              "sed -n '1,40p' {module}", "cat {module} | wc -l"]


def du(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def per_call_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="demo")
    parser.add_argument("--instance", default="more-itertools__first-default")
    parser.add_argument("--module", default="more_itertools/more.py")
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    task = load_tasks(path_of(args.dataset)).by_id(args.instance)
    real = RealBackend()
    real.prepare(task)
    sim = SimBackend(world=WorldConfig.from_options(urls=["http://127.0.0.1:9/v1"]), builder=real.builder)
    tools = default_tools()
    view = {"command": "view", "path": f"/testbed/{args.module}", "view_range": [1, 40]}
    commands = [c.format(module=args.module) for c in NAVIGATION]
    print(f"instance {task.instance_id}; medians of {args.repeat} runs")
    with real.open(task) as r, sim.open(task) as s:
        for command in commands:
            assert r.run(command).output == s.run(command).output, command
        nav_real = per_call_ms(lambda: [r.run(c) for c in commands], args.repeat) / len(commands)
        nav_sim = per_call_ms(lambda: [s.run(c) for c in commands], args.repeat) / len(commands)
        edit_real = per_call_ms(lambda: tools.call(r, "str_replace_editor", view), args.repeat)
        edit_sim = per_call_ms(lambda: tools.call(s, "str_replace_editor", view), args.repeat)
        upper = du(s.sandbox.episode_dir)
    uncached = per_call_ms(lambda: [route.__wrapped__(c) for c in commands], args.repeat) / len(commands)
    print(f"navigation step: real {nav_real:.2f} ms, sim {nav_sim:.2f} ms, sim over real {nav_sim - nav_real:+.2f} ms "
          f"(goal <= 1 ms; routing a new command, uncached: {uncached:.2f} ms)")
    print(f"editor view:     real {edit_real:.2f} ms, sim {edit_sim:.2f} ms, sim over real {edit_sim - edit_real:+.2f} ms")

    def open_only(backend) -> float:
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            episode = backend.open(task)
            times.append((time.perf_counter() - started) * 1000)
            episode.close()
        return statistics.median(times)
    open_sim, open_real = open_only(sim), open_only(real)

    def first_command(backend) -> None:
        with backend.open(task) as episode:
            episode.run("true")
    ready_sim = per_call_ms(lambda: first_command(sim), max(5, args.repeat // 3))
    ready_real = per_call_ms(lambda: first_command(real), max(5, args.repeat // 3))
    print(f"episode open (the namespaces start in the background): sim {open_sim:.1f} ms (goal <= 20 ms), "
          f"real {open_real:.1f} ms")
    print(f"open + first command + close (what waits for the namespaces): sim {ready_sim:.1f} ms, "
          f"real {ready_real:.1f} ms")
    layer = real.builder.instance(task)
    tree = du(layer.tree)
    env = du(layer.env.venv) + du(layer.path)
    print(f"disk: shared base tree {tree / 1e6:.1f} MB; sim adds {upper / 1e3:.1f} kB per episode after the steps "
          f"above; real adds the environment and install layer, {env / 1e6:.1f} MB ({(env + tree) / tree:.1f}x "
          "the tree)")


if __name__ == "__main__":
    main()
