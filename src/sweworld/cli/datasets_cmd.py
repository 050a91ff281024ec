"""``sweworld datasets ls``: the datasets shipped inside the package."""

from __future__ import annotations

from collections import Counter

import typer
from rich.table import Table

from sweworld.cli import common

app = typer.Typer(no_args_is_help=True, help="Datasets shipped with sweworld.")


@app.command("ls")
def ls() -> None:
    """List the embedded datasets: instances, repositories, how many have tests that must go fail -> pass."""
    from sweworld.datasets import available, default_path
    from sweworld.tasks import load_tasks

    table = Table("name", "instances", "with FAIL_TO_PASS", "repositories", "path")
    for name, path in available().items():
        tasks = list(load_tasks(path))
        repos = Counter(t.repo_source or t.repo for t in tasks)
        label = f"{name} (default)" if path == default_path() else name
        table.add_row(label, str(len(tasks)), str(sum(bool(t.FAIL_TO_PASS) for t in tasks)),
                      ", ".join(f"{r} ({n})" for r, n in sorted(repos.items())), str(path))
    common.out.print(table)
