"""The image side of ``sweworld env``: ``env pull`` and the images in ``env ls``, ``env rm`` and ``env gc``."""

from __future__ import annotations

import time

from rich.table import Table

from sweworld.cli import common


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def pull(names: list[str], refresh: bool) -> int:
    """Pull each image (one failure does not stop the others); returns how many failed."""
    from sweworld.core.errors import SWEWorldError
    from sweworld.oci.pull import pull as pull_image
    failed = 0
    for name in names:
        start = time.perf_counter()
        try:
            record = pull_image(name, refresh=refresh)
        except SWEWorldError as exc:
            failed += 1
            common.out.print(f"[red]failed[/red] {exc}")
            continue
        common.out.print(f"[green]ok[/green] {name} key={record.key} layers={len(record.layers)} "
                         f"compressed={_mb(record.compressed)} unpacked={_mb(record.unpacked)} "
                         f"({time.perf_counter() - start:.1f}s)")
    return failed


def table() -> None:
    """The pulled images, after the environments (nothing when there are none)."""
    from sweworld.oci import store
    records = store.list_images()
    if not records:
        return
    header = ("image key", "image", "layers", "compressed", "unpacked", "workdir")
    rows = [(r.key, r.name, str(len(r.layers)), _mb(r.compressed), _mb(r.unpacked), r.workdir or "/") for r in records]
    if not common.out.is_terminal:
        for row in [header, *rows]:
            print("\t".join(row))
        return
    shown = Table(*header)
    for row in rows:
        shown.add_row(*row)
    common.out.print(shown)


def remove(key: str) -> bool:
    """Forget the image ``key`` (its key, name or an unambiguous key prefix); False when none is."""
    from sweworld.oci import store
    record = store.find(key)
    if record is None:
        return False
    store.remove(record.key)
    common.out.print(f"removed image {record.name} ({record.key}); `sweworld env gc` frees the layers no image holds")
    return True


def gc(dry_run: bool) -> int:
    """Layers and blobs no image holds; returns how many items went (or would go)."""
    from sweworld.oci import store
    freed = store.gc(dry_run=dry_run)
    items = freed["layers"] + freed["blobs"]
    if items:
        verb = "would remove" if dry_run else "removed"
        print(f"{verb} {freed['layers']} image layers and {freed['blobs']} blobs ({_mb(freed['bytes'])})")
    return items
