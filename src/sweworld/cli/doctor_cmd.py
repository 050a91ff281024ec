"""``sweworld doctor``: what isolation and limits this host gives this user, and how to get the rest."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from sweworld.cli import common

AsJson = Annotated[bool, typer.Option("--json", help="One JSON object: the checks and whether episodes are isolated.")]

MARKS = {True: "[green]ok[/green]", False: "[red]FAIL[/red]", None: "[cyan]info[/cyan]"}


def doctor(as_json: AsJson = False) -> None:
    """Check this host for sweworld's isolation: namespaces, workspaces, a real episode, limits.

    Exits 1 when episodes cannot be isolated here (each failing line says why and what fixes it)."""
    from sweworld.sandbox import doctor as checks
    results = checks.checks()
    isolated = checks.isolated(results)
    if as_json:
        common.out.print_json(json.dumps({"isolated": isolated, "checks": [c.as_dict() for c in results]}))
    else:
        table = Table(title="sweworld doctor", show_lines=True)
        for column in ("check", "", "what this host gives", "fix"):
            table.add_column(column, overflow="fold")
        for c in results:
            table.add_row(c.name, MARKS[c.ok], c.detail, c.fix)
        common.out.print(table)
        common.out.print("[green]episodes are isolated here[/green]" if isolated else
                         "[red]episodes cannot be isolated here[/red]: see the FAIL lines")
    if not isolated:
        raise typer.Exit(1)
