"""``sweworld``: the root command and its groups."""

from __future__ import annotations

from typing import Annotated

import typer

from sweworld import __version__
from sweworld.cli import (
    common,
    datasets_cmd,
    doctor_cmd,
    env,
    eval_cmd,
    exec_cmd,
    export_cmd,
    export_tasks,
    mine_cmd,
    openenv_cmd,
    rollout_cmd,
    runtime_cmd,
    select_cmd,
    synth_cmd,
    train_cmd,
    validate_cmd,
    verifier_cmd,
    world_cmd,
)
from sweworld.cli.demo import command as demo

app = typer.Typer(name="sweworld", no_args_is_help=True, add_completion=False,
                  help="Train and evaluate software-engineering agents: docker-free real execution, "
                  "simulated worlds, rollouts and data pipelines.")
app.add_typer(env.app, name="env")
app.add_typer(datasets_cmd.app, name="datasets")
app.command("exec", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(exec_cmd.exec_)
app.command("shell")(exec_cmd.shell)
app.command("eval")(eval_cmd.eval_)
app.command("validate")(validate_cmd.validate)
app.command("rollout")(rollout_cmd.rollout)
app.command("synth")(synth_cmd.synth)
app.command("mine")(mine_cmd.mine)
app.command("select", context_settings=export_cmd.MORE)(select_cmd.select)
app.command("demo")(demo.demo)
app.command("doctor")(doctor_cmd.doctor)
app.add_typer(world_cmd.app, name="world")
app.add_typer(export_cmd.app, name="export")
export_cmd.app.command("swerebench")(export_tasks.swerebench)  # mined tasks for others
export_cmd.app.command("images")(export_tasks.images)
app.add_typer(train_cmd.app, name="train")
app.add_typer(verifier_cmd.app, name="verifier")
app.add_typer(runtime_cmd.app, name="runtime")
app.add_typer(openenv_cmd.app, name="openenv")


def _version(value: bool) -> None:
    if value:
        print(f"sweworld {__version__}")
        raise typer.Exit()


@app.callback()
def root(verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log progress.")] = False,
         version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True)] = False) -> None:
    common.setup_logging(verbose)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
