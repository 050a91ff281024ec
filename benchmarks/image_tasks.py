"""A row's image as its environment against building the same instance from its recipe, in one run.

    python benchmarks/image_tasks.py [--repeat 10] [--user NAME]

The three instance images of the test suite (``tests/oci_lang_images.py``: a SWE-bench instance image
of ``psf__requests-90001``, a Go module and a JavaScript package, sharing a base layer) are pushed to a
real registry on 127.0.0.1 and used through ``registries.conf`` with a fresh store:

- per image: pull plus unpack (cold store), the store's disk after it, the gold patch evaluated by the
  harness on the image (first evaluation, then the median of ``--repeat``), resolved or not;
- the same Python instance built from its recipe (SWE-bench's spec for psf/requests 2.31: a Python 3.9
  environment, ``pip install .``) in a fresh store: with cold package caches (downloads from PyPI
  included) and again with warm ones, its disk, and the same gold evaluation;
- opening an episode (until a first command answered) on the image and on the recipe's layer, p50/p99.

With ``--user NAME`` (run as root) the figures are measured again as that user and printed beside.
"""

from __future__ import annotations

import argparse
import os
import pwd
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from held import as_user, printer, report
from oci_images import Registry
from oci_lang_images import go_image, js_image, python_image
from sweworld.backends.real import RealBackend
from sweworld.core.errors import SWEWorldError
from sweworld.envs import EnvBuilder, episode_sandbox
from sweworld.harness.predictions import Prediction
from sweworld.oci import store
from sweworld.tasks import validate_rows
from trl_env import disk_usage, pct

BUILDERS = {"python": python_image, "go": go_image, "javascript": js_image}


def _task(image, language: str):
    row = dict(image.row)
    if language != "python":
        row["image_name"] = image.name
    [task] = validate_rows([row])
    return task


def _timed(fn) -> tuple[float, object]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def _evaluations(backend: RealBackend, task, work: Path, repeat: int) -> dict:
    def one(n: int):
        return backend.evaluate(task, Prediction(instance_id=task.instance_id, model_patch=task.patch,
                                                 model_name_or_path="gold"), work / f"eval{n}")
    first, report_ = _timed(lambda: one(0))
    rest = [_timed(lambda n=n: one(n))[0] for n in range(1, repeat + 1)]
    return {"first_s": first, "p50_s": statistics.median(rest) if rest else None, "resolved": report_.resolved}


def _opened(make, repeat: int) -> dict:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        with make() as episode:
            episode.run("true")
        samples.append((time.perf_counter() - started) * 1000)
    return {"p50_ms": statistics.median(samples), "p99_ms": pct(samples, 0.99)}


def measure(args: argparse.Namespace) -> dict:
    work = Path(tempfile.mkdtemp(prefix="sweworld-image-tasks-"))
    images = {language: build() for language, build in BUILDERS.items()}
    registry = Registry(work / "registry")
    figures: dict = {"who": pwd.getpwuid(os.geteuid()).pw_name, "uid": os.geteuid()}
    try:
        for image in images.values():
            registry.push(image.layout, image.tag, image.name)
        os.environ.update(SWEWORLD_HOME=str(work / "home"), CONTAINERS_REGISTRIES_CONF=str(registry.conf))
        image_backend = RealBackend(env_source="image")
        for language, image in images.items():
            task = _task(image, language)
            pulled, env = _timed(lambda t=task: image_backend.image(t))
            figures[f"image_{language}"] = {
                "pull_s": pulled, "compressed_mib": env.record.compressed / 2**20,
                "store_mib": (disk_usage(store.root() / "blobs") + disk_usage(store.root() / "layers")) / 2**20,
                **_evaluations(image_backend, task, work / language, args.repeat)}
        py_task = _task(images["python"], "python")
        # the recipe builds from the release on PyPI the image's repository was made from (no GitHub here)
        py_task = py_task.model_copy(update={"repo_source": "pypi:requests==2.31.0"})
        figures["open_image"] = _opened(lambda: image_backend.open(py_task), args.repeat)
    finally:
        registry.close()
    for label, home in (("recipe_cold", work / "recipe-cold"), ("recipe_warm", work / "recipe-warm")):
        if label == "recipe_warm":  # the package caches of the cold build, nothing else
            (home / "cache").parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(work / "recipe-cold" / "cache", home / "cache", symlinks=True)
        os.environ["SWEWORLD_HOME"] = str(home)
        builder = EnvBuilder()
        try:
            built, layer = _timed(lambda b=builder: b.instance(py_task))
        except SWEWorldError as exc:  # e.g. no Python 3.9 for this user: the image needs none
            print(f"{label}: the recipe does not build for {figures['who']}: {exc.message}", file=sys.stderr)
            figures["recipe_error"] = exc.message.split(";")[0]
            break
        figures[label] = {"build_s": built, "envs_mib": disk_usage(home / "envs") / 2**20,
                          **_evaluations(RealBackend(builder, env_source="recipe"), py_task, work / label, args.repeat)}
    else:
        figures["open_recipe"] = _opened(lambda built_layer=layer: episode_sandbox(built_layer), args.repeat)
    shutil.rmtree(work, ignore_errors=True)
    return figures


def _seconds(v: float) -> str:
    return f"{v:.2f}"


def _mib(v: float) -> str:
    return f"{v:.1f}"


EVALUATION_ROWS = (("gold evaluation, first (s)", _seconds, "first_s"), ("gold evaluation, p50 (s)", _seconds, "p50_s"),
                   ("resolved", str, "resolved"))
IMAGE_ROWS = (("pull + unpack, cold store (s)", _seconds, "pull_s"), ("compressed (MiB)", _mib, "compressed_mib"),
              ("store after it, blobs + layers (MiB)", _mib, "store_mib"), *EVALUATION_ROWS)
RECIPE_ROWS = (("build (s)", _mib, "build_s"), ("environments' disk (MiB)", _mib, "envs_mib"), *EVALUATION_ROWS)


def table(runs: list[dict]) -> None:
    row = printer(runs)
    sections = [(f"{language} image", f"image_{language}", IMAGE_ROWS) for language in BUILDERS]
    sections += [(f"python from its recipe, {label}", key, RECIPE_ROWS)
                 for key, label in (("recipe_cold", "cold package caches"), ("recipe_warm", "warm package caches"))]
    for what, key, rows in sections:
        for label, fmt, sub in rows:
            row(f"{what}: {label}", fmt, key, sub)
    for key, label in (("open_image", "image"), ("open_recipe", "recipe layer")):
        row(f"open + first command, python {label}, p50 (ms)", _mib, key, "p50_ms")
        row(f"open + first command, python {label}, p99 (ms)", _mib, key, "p99_ms")
    for run in runs:
        if run.get("recipe_error"):
            print(f"\n{run['who']}: the recipe did not build: {run['recipe_error']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--user", help="also measure as this ordinary user (run as root)")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    runs = [measure(args)]
    if args.user:
        runs.append(as_user(args.user, __file__, ["--repeat", str(args.repeat)], drop=("CONTAINERS_",)))
    report(args, runs, table)


if __name__ == "__main__":
    main()
