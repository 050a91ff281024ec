"""``sweworld openenv serve``: sweworld's episodes as an OpenEnv environment server (docs/openenv.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from sweworld.cli import backend_opts as bo
from sweworld.cli import common, params
from sweworld.cli.common import Dataset, InstanceIds, Isolation, ReposDir, Split, Workers
from sweworld.cli.runtime_cmd import AccessLog, Host, Port, _spec
from sweworld.core.config import timeouts

app = typer.Typer(no_args_is_help=True, help="OpenEnv environment servers over sweworld episodes (OpenEnv's "
                  "clients, TRL's OpenEnv mode; see docs/openenv.md).")

STEP_LIMIT = 50
"""Default --step-limit: ``sweworld.integrations.gym.STEP_LIMIT`` (not imported: the CLI starts without gym)."""

StepLimit = Annotated[int, typer.Option("--step-limit", min=1, help=(
    "Steps before an episode is truncated (done, reward 0.0, the patch so far)."))]
EvalTimeout = Annotated[float, typer.Option("--eval-timeout", callback=params.positive, help=(
    "Wall timeout of the grading on submit, seconds."))]
ApiKey = Annotated[str | None, typer.Option("--api-key", envvar="SWEWORLD_API_KEY", help=(
    "Serve under /k/KEY only (clients: base_url=http://HOST:PORT/k/KEY; OpenEnv's clients send no header). "
    "Required to bind beyond loopback. Default: $SWEWORLD_API_KEY, else none (127.0.0.1 only)."))]
IdleTimeout = Annotated[float | None, typer.Option("--idle-timeout", callback=params.positive, help=(
    "Close a session (and its episode) idle this long, seconds (default: never)."))]


@app.command("serve")
def serve(port: Port = 8000, host: Host = "127.0.0.1", dataset: Dataset = common.DEFAULT_DATASET,
          split: Split = None, repos_dir: ReposDir = None, instance_ids: InstanceIds = None, workers: Workers = 8,
          backend: bo.BackendName = "real", isolation: Isolation = "bwrap", step_limit: StepLimit = STEP_LIMIT,
          eval_timeout: EvalTimeout = timeouts.EVALUATION, idle_timeout: IdleTimeout = None,
          world_url: bo.WorldURL = None, world_model: bo.WorldModel = "world", prompt_style: bo.PromptStyle = "sweworld",
          world: bo.WorldKind = None, world_traces: bo.WorldTraces = None, audit_rate: bo.AuditRate = 0.1,
          route_below: bo.RouteBelow = None, access_log: AccessLog = False, api_key: ApiKey = None) -> None:
    """Serve OpenEnv's protocol (WebSocket /ws, /reset, /step, /state, /schema): each client session is
    one episode at a time of a task of --dataset (reset(instance_id=...), else the next in turn), up to
    --workers sessions at once; submit's reward is the backend's verdict."""
    from sweworld.integrations.keyed import loopback
    from sweworld.integrations.openenv import OpenEnvServer
    from sweworld.integrations.openenv import serve as serve_http
    if not api_key and not loopback(host):
        raise typer.BadParameter(f"{host} is reachable from other machines, and without a key whoever reaches the "
                                 "port runs commands in the episodes: give --api-key KEY (clients then use "
                                 "base_url=http://HOST:PORT/k/KEY), or bind 127.0.0.1", param_hint="--host")
    ids = common.split_ids(instance_ids)
    with common.reported():
        spec = _spec(dataset, split, repos_dir, backend, isolation, world_url, world_model, prompt_style, world,
                     world_traces, audit_rate, route_below)
        server = OpenEnvServer(spec, instance_ids=ids, step_limit=step_limit, eval_timeout=eval_timeout,
                               max_sessions=workers, idle_timeout=idle_timeout)
    url = f"http://{host}:{port}" + ("/k/<your key>" if api_key else "")
    common.console.print(f"OpenEnv server over sweworld ({backend} backend, {len(server.tasks)} task(s) of "
                         f"{spec.dataset}, up to {workers} sessions) on {url}\n"
                         f"  client: GenericEnvClient(base_url={url!r}, message_timeout_s=3600).sync()",
                         **common.PLAIN)
    serve_http(server, host=host, port=port, access_log=access_log, api_key=api_key)
