"""``sweworld export swerebench`` and ``sweworld export images``: mined (or any recipe-built) tasks
for others, as SWE-rebench rows (``mine.export``) and as OCI instance images (``mine.export_images``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sweworld.cli import common, params

Out = Annotated[Path, typer.Option("--out", "-o", callback=params.output_file, dir_okay=False,
                                   help="The JSONL file of rows to write.")]
Timeout = Annotated[float, typer.Option("--timeout", callback=params.positive,
                                        help="Wall timeout of the command run in each environment, seconds.")]


def _backend(repos_dir: Path | None):
    from sweworld.backends.real import RealBackend
    from sweworld.envs import EnvBuilder
    from sweworld.repos import RepoStore
    return RealBackend(EnvBuilder(RepoStore(repos_dir=repos_dir)), env_source="recipe")


def _report(what: str, rows: int, failed: dict[str, str], out: Path) -> None:
    for instance_id, error in failed.items():
        common.console.print(f"[red]failed[/red] {instance_id}: {error}")
    common.out.print(f"{what}: {rows} rows -> {out}; {len(failed)} failed", **common.PLAIN)
    if failed and not rows:
        raise typer.Exit(1)


def swerebench(dataset: common.Dataset, out: Out, split: common.Split = None,
               instance_ids: common.InstanceIds = None, repos_dir: common.ReposDir = None,
               timeout: Timeout = 300.0) -> None:
    """SWE-rebench rows: install_config, the environment's frozen `pip freeze`, meta (builds each environment)."""
    from sweworld.mine.export import export_rebench

    with common.reported():
        tasks = list(common.load(dataset, split=split, instance_ids=instance_ids))
        summary = export_rebench(tasks, out, _backend(repos_dir), timeout=timeout)
    _report("swerebench", summary.rows, summary.failed, out)


def images(dataset: common.Dataset, out: Out,
           layout: Annotated[Path, typer.Option("--layout", file_okay=False, help=(
               "The OCI image layout to write the images into (made when missing; images already in it stay)."))],
           split: common.Split = None, instance_ids: common.InstanceIds = None,
           repos_dir: common.ReposDir = None) -> None:
    """OCI instance images (daemonless, layers shared) and rows naming them (`oci:LAYOUT:TAG`) for `--env-source image`."""
    from sweworld.mine.export_images import export_images

    with common.reported():
        tasks = list(common.load(dataset, split=split, instance_ids=instance_ids))
        summary = export_images(tasks, layout, out, _backend(repos_dir).builder)
    _report(f"images ({len(summary.images)} in {layout})", summary.rows, summary.failed, out)
