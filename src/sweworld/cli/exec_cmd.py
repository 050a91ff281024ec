"""``sweworld exec`` and ``sweworld shell``: run commands in an isolated episode of a task."""

from __future__ import annotations

import shlex
import sys
from typing import Annotated

import typer

from sweworld.cli import common, params
from sweworld.cli.backend_opts import (
    BackendName,
    PromptStyle,
    WorldKind,
    WorldModel,
    WorldTraces,
    WorldURL,
    backend_from_options,
)
from sweworld.cli.common import Dataset, Isolation, ReposDir, Split
from sweworld.core.protocols import Described

Instance = Annotated[str, typer.Option("--instance", help="Instance id.")]
Timeout = Annotated[float, typer.Option("--timeout", callback=params.positive, help="Wall timeout per command, seconds.")]


def _open(dataset: str, split: str | None, instance: str, repos_dir, isolation: str, timeout: float,
          backend: str = "real", world_url: list[str] | None = None, world_model: str = "world",
          prompt_style: str = "sweworld", world: str | None = None, world_traces: list[str] | None = None):
    from sweworld.sandbox import SandboxConfig
    task = common.load(dataset, split=split, instance_ids=[instance]).by_id(instance)
    chosen = backend_from_options(backend, repos_dir=repos_dir, world_url=world_url, world_model=world_model,
                                  prompt_style=prompt_style, world=world, world_traces=world_traces, dataset=dataset,
                                  sandbox_config=SandboxConfig(isolation=isolation, timeout=timeout))
    return chosen.open(task, timeout=timeout)


def exec_(ctx: typer.Context, dataset: Dataset = common.DEFAULT_DATASET, instance: Instance = ...,
          split: Split = None, repos_dir: ReposDir = None, isolation: Isolation = "bwrap",
          timeout: Timeout = 300.0, backend: BackendName = "real", world_url: WorldURL = None,
          world_model: WorldModel = "world", prompt_style: PromptStyle = "sweworld", world: WorldKind = None,
          world_traces: WorldTraces = None) -> None:
    """Run one command (after --) in a fresh isolated episode of an instance; exit with its status."""
    command = (ctx.args[0] if len(ctx.args) == 1 else shlex.join(ctx.args)).strip()
    if not command:
        common.console.print("[red]error:[/red] no command given; usage: sweworld exec --instance ID -- COMMAND")
        raise typer.Exit(2)
    with common.reported(), _open(dataset, split, instance, repos_dir, isolation, timeout, backend, world_url,
                                  world_model, prompt_style, world, world_traces) as sandbox:
        result = sandbox.run(command)
    sys.stdout.write(result.output)
    if result.timed_out:
        common.console.print(f"[red]timed out after {timeout}s[/red]")
    raise typer.Exit(result.exit_code)


def shell(dataset: Dataset = common.DEFAULT_DATASET, instance: Instance = ..., split: Split = None,
          repos_dir: ReposDir = None, isolation: Isolation = "bwrap", timeout: Timeout = 300.0,
          backend: BackendName = "real", world_url: WorldURL = None, world_model: WorldModel = "world",
          prompt_style: PromptStyle = "sweworld", world: WorldKind = None, world_traces: WorldTraces = None) -> None:
    """An interactive shell in an isolated episode (one command per line; `exit` or EOF leaves)."""
    with common.reported(), _open(dataset, split, instance, repos_dir, isolation, timeout, backend, world_url,
                                  world_model, prompt_style, world, world_traces) as sandbox:
        info = sandbox.info if isinstance(sandbox, Described) else {}
        common.console.print(f"[bold]{instance}[/bold]: isolated episode, {backend} backend "
                             f"({info.get('workspace', '?')} workspace, no network). `diff` shows your changes; "
                             "`exit` leaves.")
        cwd = sandbox.workdir
        while True:
            try:
                line = input(f"{cwd}$ ")
            except EOFError:
                break
            if line.strip() in ("exit", "logout"):
                break
            if line.strip() == "diff":
                sys.stdout.write(sandbox.diff())
                continue
            if not line.strip():
                continue
            result = sandbox.run(line)
            sys.stdout.write(result.output)
            if result.output and not result.output.endswith("\n"):
                sys.stdout.write("\n")
            if result.exit_code:
                common.console.print(f"[dim](exit {result.exit_code})[/dim]")
            cwd = sandbox.run("pwd").output.strip() or cwd
