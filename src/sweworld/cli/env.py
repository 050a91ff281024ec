"""``sweworld env build|pull|ls|rm|gc``: the shared environment cache and the pulled images."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.progress import Progress
from rich.table import Table

from sweworld.cli import common, env_images
from sweworld.cli.common import Dataset, InstanceIds, ReposDir, SkipInvalid, Split, Workers
from sweworld.core.errors import SWEWorldError

app = typer.Typer(no_args_is_help=True, help="Build, pull, list and remove environments and images.")


@app.command("build")
def build(dataset: Dataset = common.DEFAULT_DATASET, split: Split = None, repos_dir: ReposDir = None,
          instance_ids: InstanceIds = None, workers: Workers = 1, skip_invalid: SkipInvalid = False) -> None:
    """Build the environment and install layer of every task (each environment once)."""
    from sweworld.envs import EnvBuilder
    from sweworld.parallel.map import map_items
    from sweworld.repos import RepoStore
    with common.reported():
        tasks = list(common.load(dataset, split=split, instance_ids=instance_ids, skip_invalid=skip_invalid))
    builder = EnvBuilder(RepoStore(repos_dir=repos_dir))
    failures: dict[str, str] = {}
    with Progress(console=common.console) as progress:
        bar = progress.add_task("building", total=len(tasks))

        def built(task, layer) -> None:
            progress.console.print(f"[green]ok[/green] {task.instance_id} env={layer.env.key}")
            progress.advance(bar)

        def failed(task, exc: BaseException) -> None:
            failures[task.instance_id] = str(exc)
            progress.console.print(f"[red]failed[/red] {task.instance_id}: {exc}")
            progress.advance(bar)

        map_items(tasks, builder.instance, workers=workers, on_done=built, catch=SWEWorldError, on_error=failed)
    common.out.print(f"{len(tasks) - len(failures)}/{len(tasks)} instances ready")
    if failures:
        raise typer.Exit(1)


@app.command("pull")
def pull(images: list[str] = typer.Argument(..., help="Image names: \\[REGISTRY/]REPO\\[:TAG]\\[@DIGEST], oci:DIR:TAG, "
                                           "docker-archive:FILE."),
         refresh: bool = typer.Option(False, "--refresh", help="Ask the registry again for an image already pulled.")) -> None:
    """Pull container images without a daemon or root, each layer stored and unpacked once.

    skopeo fetches them, configured as the containers tools are: registries.conf from
    $CONTAINERS_REGISTRIES_CONF, logins from $REGISTRY_AUTH_FILE or ~/.docker/config.json."""
    if env_images.pull(images, refresh):
        raise typer.Exit(1)


@app.command("ls")
def ls() -> None:
    """List built environments and pulled images."""
    from sweworld.envs import list_envs
    with common.reported():
        envs = list_envs()
    rows = [(meta.get("key", "?"), meta.get("repo", "?"), meta.get("python", "?"),
             meta.get("recipe", {}).get("source", "?"), str(meta["instances"]),
             f"{meta['size_bytes'] / 1e6:.1f} MB", meta.get("built_at", "?")) for meta in envs]
    header = ("key", "repo", "python", "source", "instances", "size", "built")
    if not common.out.is_terminal:  # piped: full keys, one tab-separated line per environment
        for row in [header, *rows]:
            print("\t".join(row))
        env_images.table()
        return
    table = Table(*header)
    table.columns[0].no_wrap = True
    for row in rows:
        table.add_row(*row)
    common.out.print(table)
    env_images.table()


@app.command("rm")
def rm(key: str = typer.Argument(..., help="Environment key, image key or image name (or an unambiguous prefix).")) -> None:
    """Remove one environment and its install layers, or one pulled image."""
    from sweworld.envs import remove_env
    with common.reported():
        if env_images.remove(key):
            return
        path = remove_env(key)
    common.out.print(f"removed {path}")


OlderThan = Annotated[str | None, typer.Option(
    "--older-than", help="Also remove environments and base trees unused for this long (e.g. 7d, 12h, 30m) and "
    "not mounted by a live episode.")]


def _gc_shared(verb: str, dry_run: bool) -> int:
    """The shared files (``sweworld.cas``) no environment or image layer links any more."""
    from sweworld import cas
    freed = cas.gc(dry_run=dry_run)
    if freed["files"]:
        print(f"{verb} {freed['files']} shared files no layer holds ({freed['bytes'] / 2**20:.1f} MiB)")
    return freed["files"]


DryRun = Annotated[bool, typer.Option("--dry-run", help="List what would be removed; remove nothing.")]


@app.command("gc")
def gc(older_than: OlderThan = None, dry_run: DryRun = False) -> None:
    """Remove dead episodes' directories, unheld image layers and, with --older-than, unused environments.

    An episode directory goes when its process is gone (killed, or never closed it); an image layer or blob
    when no pulled image holds it; a shared file when no layer links it; with --older-than, environments and
    base trees unused for that long."""
    from sweworld.envs import gc as garbage
    try:
        age = garbage.parse_age(older_than) if older_than is not None else None
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--older-than") from None
    verb = "would remove" if dry_run else "removed"
    count = 0
    with common.reported():
        for item in garbage.collect(age):
            if dry_run or garbage.remove(item):
                count += 1
                print(f"{verb} {item.kind} {item.path} ({item.reason})")
        count += env_images.gc(dry_run)
        count += _gc_shared(verb, dry_run)
    print(f"{count} {'items would be' if dry_run else 'items'} removed" if count else "nothing to remove")
