"""Container images as environments: pull, unpack, open, hold, measured in one run beside a recipe episode.

    python benchmarks/images.py [--images 10] [--repeat 30] [--live 256] [--workers 16] [--user NAME]

Ten images sharing one base layer (Debian's libc, bash, busybox and Python 3.11, unpacked from
Debian's packages) are built here, each with a top layer of its own (a repository of a few hundred
files at ``/testbed``), pushed to a real registry on 127.0.0.1 (Debian's ``docker-registry``) and
pulled through ``registries.conf`` into a fresh store:

- pull plus unpack, all ten, and the store's disk, against the images' compressed sizes summed as a
  registry holds them one by one, and against the ten root file systems flattened (what one
  ``umoci unpack`` or one container per image would keep);
- opening an episode on an image (until a first command answered), the process's first apart, then
  p50 and p99, against an episode of a recipe environment (the demo's first instance) in the same run;
- ``--live`` episodes on one image held at once: errors, open p50/p99, PSS and disk per episode,
  what is left after closing.

With ``--user NAME`` (run as root) the same figures are measured again as that user and printed
beside root's.
"""

from __future__ import annotations

import argparse
import os
import pwd
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from held import as_user, held_rows, hold, printer, report
from oci_images import Entry, Registry, debian_rootfs, layer, write_layout
from sweworld.datasets import path_of
from sweworld.envs import EnvBuilder, episode_sandbox
from sweworld.oci import store
from sweworld.oci.pull import pull
from sweworld.sandbox import Layers, Sandbox, SandboxConfig
from sweworld.tasks import load_tasks
from trl_env import disk_usage, pct

PACKAGES = ("libc6", "libtinfo6", "bash", "busybox-static", "python3.11-minimal", "libpython3.11-minimal",
            "libexpat1", "zlib1g")


def repository(seed: int, files: int = 300) -> list[Entry]:
    rng = random.Random(seed)
    entries = [Entry("testbed", "dir", mode=0o755), Entry("testbed/pkg", "dir", mode=0o755)]
    for n in range(files):
        body = "".join(f"def f{n}_{k}(x):\n    return x * {rng.randint(1, 999)}\n" for k in range(40))
        entries.append(Entry(f"testbed/pkg/m{n}.py", data=body.encode()))
    return entries


def build(root: Path, count: int) -> tuple[list[Path], int]:
    base = layer(debian_rootfs(PACKAGES))
    layouts = [write_layout(root / f"image{n}", "1", [base, layer(None, repository(n))],
                            {"Env": ["PATH=/usr/bin:/bin"], "WorkingDir": "/testbed"}) for n in range(count)]
    flattened = sum(len(base) + len(layer(None, repository(n))) for n in range(count))
    return layouts, flattened


def opened(make, repeat: int) -> dict:
    """The first open of the process apart (it probes the host once), then ``repeat`` more."""
    samples = []
    for _ in range(repeat + 1):
        started = time.perf_counter()
        with make() as episode:
            episode.run("true")
            samples.append((time.perf_counter() - started) * 1000)
    first, rest = samples[0], samples[1:]
    return {"first_ms": first, "p50_ms": statistics.median(rest), "p99_ms": pct(rest, 0.99)}


def _set_home(value: str | None) -> None:
    if value is None:
        os.environ.pop("SWEWORLD_HOME", None)
    else:
        os.environ["SWEWORLD_HOME"] = value


def measure(args: argparse.Namespace) -> dict:
    work = Path(tempfile.mkdtemp(prefix="sweworld-images-bench-"))
    usual = os.environ.get("SWEWORLD_HOME")
    layouts, flattened = build(work / "layouts", args.images)
    registry = Registry(work / "registry")
    try:
        names = [registry.push(layout, "1", f"bench/image{n}:1") for n, layout in enumerate(layouts)]
        home = work / "home"
        os.environ.update(SWEWORLD_HOME=str(home), CONTAINERS_REGISTRIES_CONF=str(registry.conf))
        started = time.perf_counter()
        records = [pull(name) for name in names]
        pulled_s = time.perf_counter() - started
    finally:
        registry.close()
    compressed = sum(r.compressed for r in records)
    record = records[0]

    def on_image() -> Sandbox:
        return Sandbox({"/": Layers(record.layer_dirs())}, workdir=record.workdir or "/",
                       config=SandboxConfig(env=record.env))
    figures = {"who": pwd.getpwuid(os.geteuid()).pw_name, "uid": os.geteuid(), "images": args.images,
               "pull": {"seconds": pulled_s, "compressed_mib": compressed / 2**20,
                        "store_blobs_mib": disk_usage(store.root() / "blobs") / 2**20,
                        "store_layers_mib": disk_usage(store.root() / "layers") / 2**20,
                        "flattened_mib": flattened / 2**20}}
    figures["open_image"] = opened(on_image, args.repeat)
    task = next(t for t in load_tasks(path_of("demo")) if t.FAIL_TO_PASS)
    _set_home(usual)  # the recipe environment from the usual cache
    recipe = EnvBuilder().instance(task)
    figures["open_recipe"] = opened(lambda: episode_sandbox(recipe), args.repeat)
    os.environ["SWEWORLD_HOME"] = str(home)
    for count in args.live:
        figures[f"live{count}"] = hold(on_image, count, args.workers)
    subprocess.run(["rm", "-rf", str(work)], check=False)
    return figures


def table(runs: list[dict]) -> None:
    row = printer(runs)
    n = runs[0]["images"]
    row(f"pull + unpack, {n} images (s)", lambda v: f"{v:.2f}", "pull", "seconds")
    row(f"{n} images compressed, as a registry holds them one by one (MiB)", lambda v: f"{v:.1f}", "pull", "compressed_mib")
    row(f"{n} root file systems flattened (MiB)", lambda v: f"{v:.1f}", "pull", "flattened_mib")
    row("store: blobs (MiB)", lambda v: f"{v:.1f}", "pull", "store_blobs_mib")
    row("store: unpacked layers (MiB)", lambda v: f"{v:.1f}", "pull", "store_layers_mib")
    for key, label in (("open_image", "image"), ("open_recipe", "recipe environment")):
        row(f"open + first command, {label}, first of the process (ms)", lambda v: f"{v:.1f}", key, "first_ms")
        row(f"open + first command, {label}, p50 (ms)", lambda v: f"{v:.1f}", key, "p50_ms")
        row(f"open + first command, {label}, p99 (ms)", lambda v: f"{v:.1f}", key, "p99_ms")
    held_rows(row, runs, "live on one image")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--live", type=int, nargs="*", default=[256])
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--user", help="also measure as this ordinary user (run as root)")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    runs = [measure(args)]
    if args.user:
        runs.append(as_user(args.user, __file__, ["--images", str(args.images), "--repeat", str(args.repeat),
                                                  "--workers", str(args.workers), "--live", *map(str, args.live)],
                            drop=("CONTAINERS_",)))
    report(args, runs, table)


if __name__ == "__main__":
    main()
