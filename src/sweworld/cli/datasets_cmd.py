"""``sweworld datasets ls``: the datasets shipped inside the package."""

from __future__ import annotations

from collections import Counter

import typer
from rich.table import Table

from sweworld.cli import common

app = typer.Typer(no_args_is_help=True, help="Datasets shipped with sweworld.")


def _counts(counter: Counter) -> str:
    return "\n".join(f"{key} ({n})" for key, n in sorted(counter.items())) or "-"


@app.command("ls")
def ls() -> None:
    """List the shipped datasets: instances, how many have tests that must go fail -> pass, instances per
    repository and per synthesis method; the default one is marked."""
    from sweworld.datasets import available, default_path
    from sweworld.tasks import load_tasks

    default = default_path()
    table = Table(show_lines=True, caption=f"files: {default.parent}/NAME.jsonl[.gz]")
    for column in ("name", "instances", "with FAIL_TO_PASS", "repositories", "methods"):
        table.add_column(column, no_wrap=True)
    with common.reported():
        for name, path in available().items():
            tasks = list(load_tasks(path))
            repos = Counter(t.repo_source or t.repo for t in tasks)
            methods = Counter(m for t in tasks if (m := (t.model_extra or {}).get("method")))
            label = f"{name} (default)" if path == default else name
            table.add_row(label, str(len(tasks)), str(sum(bool(t.FAIL_TO_PASS) for t in tasks)),
                          _counts(repos), _counts(methods))
    common.out.print(table)
