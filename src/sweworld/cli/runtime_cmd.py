"""``sweworld runtime serve``: a SWE-ReX runtime server over sweworld episodes (SWE-agent's remote deployment)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from sweworld.cli import backend_opts as bo
from sweworld.cli import common, params
from sweworld.cli.common import Dataset, InstanceIds, Isolation, ReposDir, Split, Workers
from sweworld.core.config import timeouts

app = typer.Typer(no_args_is_help=True, help="SWE-ReX runtimes over sweworld episodes (SWE-agent's "
                  "--env.deployment.type=remote; see docs/swerex.md).")

Port = Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on.")]
Host = Annotated[str, typer.Option("--host", help="Address to bind (0.0.0.0: every interface).")]
ApiKey = Annotated[str, typer.Option("--api-key", envvar="SWEWORLD_API_KEY", help=(
    "The key every request must carry in X-API-Key (SWE-agent: --env.deployment.auth_token); "
    "default: $SWEWORLD_API_KEY."))]
AccessLog = Annotated[bool, typer.Option("--access-log", help="Log one line per request.")]
Wheels = Annotated[list[str] | None, typer.Option("--wheel", help=(
    "A requirement pip in an episode may install without a network, from a wheelhouse filled on this host "
    "(repeat it; real backend; default: what SWE-agent's tool bundles install, "
    "tree-sitter==0.21.3, tree-sitter-languages and flake8)."))]
NoWheels = Annotated[bool, typer.Option("--no-wheels", help="No wheelhouse: pip in an episode installs nothing.")]
Timeout = Annotated[float, typer.Option("--timeout", callback=params.positive, help=(
    "Wall timeout of a command sent without one (swerex's timeout=None), seconds."))]
Threads = Annotated[int, typer.Option("--threads", min=1, help=(
    "Requests running at once on the whole server (its thread pool); /is_alive takes none."))]
EpisodeThreads = Annotated[int, typer.Option("--episode-threads", min=1, help=(
    "Requests of one episode running at once: the rest of the pool stays free for other episodes."))]
EpisodeQueue = Annotated[int, typer.Option("--episode-queue", min=0, help=(
    "Requests of one episode waiting to run; one more is refused at once with 429 and Retry-After."))]
Queue = Annotated[int, typer.Option("--queue", min=0, help=(
    "Requests of all episodes waiting to run; one more is refused at once with 503 and Retry-After."))]
QueueTimeout = Annotated[float, typer.Option("--queue-timeout", callback=params.positive, help=(
    "Seconds a request may wait to start before it is refused (429 or 503, with Retry-After)."))]


def _spec(dataset: str, split: str | None, repos_dir, backend: str, isolation: str, world_url, world_model: str,
          prompt_style: str, world, world_traces, audit_rate: float, route_below, wheels: list[str] | None = None):
    from sweworld import datasets
    from sweworld.integrations.episodes import EpisodeSpec
    options: dict = {}
    if isolation != "bwrap":
        options["sandbox"] = {"isolation": isolation}
    from sweworld.core.config import config_class
    if "world" in config_class(backend).model_fields:
        options["world"] = {"kind": bo.world_kind(world, world_url), "urls": list(world_url or []),
                            "model": world_model, "style": prompt_style, "traces": list(world_traces or [])}
    if backend == "hybrid":
        options.update(audit_rate=audit_rate, route_below=route_below)
    if backend == "real" and wheels is not None:
        options["wheels"] = wheels
    source = common.dataset_path(dataset, split)
    return EpisodeSpec(dataset=source, split=None if datasets.is_shipped(dataset) else split,
                       repos_dir=str(repos_dir) if repos_dir else None, backend=backend,  # type: ignore[arg-type]
                       backend_options=options)


@app.command("serve")
def serve(api_key: ApiKey, port: Port = 8000, host: Host = "127.0.0.1", dataset: Dataset = common.DEFAULT_DATASET,
          split: Split = None, repos_dir: ReposDir = None, instance_ids: InstanceIds = None, workers: Workers = 4,
          backend: bo.BackendName = "real", isolation: Isolation = "bwrap", timeout: Timeout = timeouts.COMMAND,
          world_url: bo.WorldURL = None, world_model: bo.WorldModel = "world", prompt_style: bo.PromptStyle = "sweworld",
          world: bo.WorldKind = None, world_traces: bo.WorldTraces = None, audit_rate: bo.AuditRate = 0.1,
          route_below: bo.RouteBelow = None, access_log: AccessLog = False, wheel: Wheels = None,
          no_wheels: NoWheels = False, threads: Threads = 16, episode_threads: EpisodeThreads = 2,
          episode_queue: EpisodeQueue = 8, queue: Queue = 64, queue_timeout: QueueTimeout = 30.0) -> None:
    """Serve swerex-remote's protocol: /<instance_id>/... is an episode of that instance (opened on first
    use, closed by /<instance_id>/close); with one --instance-ids, the root routes serve it too. A request
    past the bounds (--threads, --episode-threads, --episode-queue, --queue, --queue-timeout) is refused
    at once with 429 (its episode's queue is full) or 503 (the server is saturated) and Retry-After."""
    from sweworld.integrations.swerex import RexServer
    from sweworld.integrations.swerex import serve as serve_http
    if not api_key:
        raise typer.BadParameter("an empty key would let anyone run commands", param_hint="--api-key")
    ids = common.split_ids(instance_ids)
    with common.reported():
        spec = _spec(dataset, split, repos_dir, backend, isolation, world_url, world_model, prompt_style, world,
                     world_traces, audit_rate, route_below, [] if no_wheels else wheel)
        server = RexServer(spec, instance_ids=ids, command_timeout=timeout, workers=workers, threads=threads,
                           episode_threads=episode_threads, episode_queue=episode_queue, queue=queue,
                           queue_timeout=queue_timeout)
        try:
            server.warm()  # a bad id stops here, before anything listens
        except Exception as exc:
            print(f"error: {exc}", file=sys.stderr)
            server.shutdown()
            raise typer.Exit(2) from None
    url = f"http://{host}:{port}"
    target = f"{url}" if server.default else f"{url}/<instance_id>"
    common.console.print(f"SWE-ReX runtime over sweworld ({backend} backend, {spec.dataset}"
                         + (f", {len(ids)} instance(s)" if ids else ", any instance") + f") on {url}\n"
                         f"  SWE-agent: sweagent run --env.deployment.type=remote --env.deployment.host={target} "
                         "--env.deployment.auth_token=<your key> --env.repo.type=preexisting --env.repo.repo_name=testbed",
                         **common.PLAIN)
    serve_http(server, api_key=api_key, host=host, port=port, access_log=access_log)
