"""A SWE-ReX runtime server over sweworld episodes: SWE-agent's ``--env.deployment.type=remote``.

It speaks swerex-remote's protocol (``swerex/server.py``: the routes ``/is_alive``,
``/create_session``, ``/run_in_session``, ``/close_session``, ``/execute``, ``/read_file``,
``/write_file``, ``/upload``, ``/close``; swerex's own pydantic request and response models; the
``X-API-Key`` header; an ``X-Request-ID`` answered again from the responses kept; errors as HTTP 511
``{"swerexception": {message, class_path, traceback, extra_info}}`` so that swerex's
``RemoteRuntime`` re-raises them), but every call runs in a sweworld episode (``Executor``: the real
isolated sandbox, or a sim/hybrid world) instead of the server's own machine.

``/<instance_id>/...`` addresses an episode of that instance of the server's dataset, opened on first
use and closed by ``/<instance_id>/close``; when the server serves one instance (``instance_ids=[ID]``)
the root routes serve it too. The task and the backend come from ``sweworld.integrations.episodes``
(``EpisodeSpec``, ``task_of``, ``backend_for``). Use::

    server = RexServer(EpisodeSpec(dataset="lite", backend="real"), instance_ids=["boltons-..."])
    serve(server, api_key="K", port=8000)          # or: sweworld runtime serve --port 8000 --api-key K ...

and on the client ``RemoteRuntime(host="http://127.0.0.1:8000/<instance_id>", auth_token="K")``.
Sessions, interrupts and what is not supported: ``swerex_shell``, ``swerex_episode``, docs/swerex.md.
Sharing fairly (``admission``, ``swerex_guard``): an episode's work runs on the server's own pool, a
few threads per episode, behind bounded queues; past them a request is refused at once with 429 or
503 and ``Retry-After``; ``/is_alive`` is answered on the event loop, behind no queue. An error reply
names no host path (``redact``).
Snapshot, fork and restore (sweworld's own routes beside swerex's, ``BranchingRuntime`` on the
client): ``swerex_branch``, docs/branching_frameworks.md.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from fastapi import FastAPI, File, Form, Request, UploadFile
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from swerex.exceptions import DeploymentStartupError, SwerexException
from swerex.runtime.abstract import (
    Action,
    CloseResponse,
    CloseSessionRequest,
    Command,
    CreateSessionRequest,
    IsAliveResponse,
    ReadFileRequest,
    WriteFileRequest,
    _ExceptionTransfer,
)

from sweworld.core.config import timeouts
from sweworld.core.errors import ConfigError, SWEWorldError
from sweworld.integrations import swerex_branch
from sweworld.integrations.admission import AdmissionConfig, Gate, Refused
from sweworld.integrations.episodes import EpisodeSpec, backend_for, task_of, with_scratch_dirs
from sweworld.integrations.redact import HostPaths
from sweworld.integrations.swerex_episode import Episode
from sweworld.integrations.swerex_guard import Guard

if TYPE_CHECKING:
    from pydantic import BaseModel

    from sweworld.core.protocols import Backend

#: What SWE-agent 1.1's default tool bundles pip-install (``edit_anthropic``: tree-sitter 0.21.3 and
#: tree-sitter-languages; ``windowed_edit_linting``: flake8): episodes have no network, so the real
#: backend serves them from a wheelhouse filled on the host (``RealBackendConfig.wheels``).
SWE_AGENT_WHEELS = ("tree-sitter==0.21.3", "tree-sitter-languages", "flake8")
#: Where SWE-agent writes outside /testbed and /tmp (its tool bundles, .swe-agent-env, state.json).
SWE_AGENT_DIRS = ("/root",)
ROUTES = ("is_alive", "create_session", "run_in_session", "close_session", "execute", "read_file", "write_file",
          "upload", "close")
#: The mark of a fork's name: ``<instance_id>@<hex>`` (``swerex_branch``).
FORK = "@"


class RexServer:
    """The instances a server serves, one lazily opened ``Episode`` each.

    ``spec``: the dataset, split, clones and backend (its ``instance_id`` is ignored); ``instance_ids``:
    only these are served (one: the root routes serve it too; all: any instance of the dataset);
    ``backend``: a ``Backend`` to use instead of ``backend_for(spec)``; ``command_timeout``: the wall
    limit of a command given no timeout (swerex's ``timeout=None``); ``workers``: episodes opening at once.

    The bounds of its admission (``admission.AdmissionConfig``; past them a request is answered 429 or
    503 with ``Retry-After`` at once): ``threads`` requests running at once, ``episode_threads`` of them
    for one episode, ``episode_queue`` waiting per episode, ``queue`` waiting in all, each waiting at most
    ``queue_timeout`` seconds. ``/is_alive`` takes none of them."""

    def __init__(self, spec: EpisodeSpec, *, instance_ids: list[str] | None = None, backend: Backend | None = None,
                 command_timeout: float = timeouts.COMMAND, workers: int = 4, threads: int = 16,
                 episode_threads: int = 2, episode_queue: int = 8, queue: int = 64, queue_timeout: float = 30.0):
        try:
            bounds = AdmissionConfig(threads=threads, episode_threads=episode_threads, episode_queue=episode_queue,
                                     queue=queue, queue_timeout=queue_timeout)
        except ValidationError as exc:
            raise ConfigError(f"bad admission bounds: {exc.errors()[0]['loc'][0]} {exc.errors()[0]['msg']}",
                              where="sweworld runtime serve", hint="give threads and episode_threads >= 1, "
                              "queues >= 0 and a positive queue_timeout") from None
        # SWE-agent writes its tools and state under /root: each episode gets its own, writable
        options = with_scratch_dirs(spec.backend_options, SWE_AGENT_DIRS)
        if spec.backend == "real" and "wheels" not in options:  # its default tool bundles pip-install these
            options = {**options, "wheels": list(SWE_AGENT_WHEELS)}
        spec = spec.model_copy(update={"backend_options": options})
        self.spec, self.instance_ids, self.command_timeout = spec, list(instance_ids or []), command_timeout
        self.default = self.instance_ids[0] if len(self.instance_ids) == 1 else None
        self._backend = backend
        self._episodes: dict[str, Episode] = {}
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sweworld-rex-open")
        self.gate = Gate(bounds, name="sweworld-rex")
        self.hostpaths = HostPaths.of_server(spec.dataset, spec.repos_dir)

    def _where(self) -> str:
        return f"dataset {self.spec.dataset}" + (f" (split {self.spec.split})" if self.spec.split else "")

    def known(self, instance_id: str | None) -> Episode | None:
        """The episode of ``instance_id`` (None: the root's) if it was addressed before; no lookup, no wait."""
        with self._lock:
            return self._episodes.get(instance_id or self.default or "")

    def episode(self, instance_id: str | None) -> Episode:
        """The runtime of ``instance_id`` (None: the root's); ``DeploymentStartupError`` saying why not."""
        if instance_id is None:
            if self.default is None:
                served = ", ".join(self.instance_ids[:5]) or f"any instance of {self._where()}"
                raise SwerexException("this sweworld runtime serves several instances: address one as "
                                      f"http://HOST:PORT/<instance_id>/... (served: {served})")
            instance_id = self.default
        with self._lock:
            found = self._episodes.get(instance_id)
        if found is not None:
            return found
        if FORK in instance_id:
            raise SwerexException(f"no episode {instance_id!r}: it was closed (a fork's close is for good), or the "
                                  "server restarted; POST /<episode>/fork makes a new one")
        if self.instance_ids and instance_id not in self.instance_ids:
            raise DeploymentStartupError(f"instance {instance_id!r} is not served here (this server serves "
                                         f"{', '.join(self.instance_ids)} of {self._where()})\n  what to do: use one "
                                         "of those, or start `sweworld runtime serve --instance-ids` with it")
        try:
            task = task_of(self.spec.model_copy(update={"instance_id": instance_id}), where=self._where())
            backend = self._backend or backend_for(self.spec)
        except SWEWorldError as exc:
            hint = (f"{exc.hint}; " if exc.hint else "") + ("check the instance id (`sweworld datasets ls` lists the "
                                                            "shipped datasets), or start `sweworld runtime serve "
                                                            "--dataset` with the dataset that holds it")
            raise DeploymentStartupError(f"sweworld cannot serve instance {instance_id!r} of {self._where()}: "
                                         f"{exc.message}\n  what to do: {hint}") from None
        episode = Episode(instance_id, lambda: backend.open(task, timeout=self.command_timeout,
                                                            label=f"swerex-{instance_id}"),
                          self._pool, command_timeout=self.command_timeout)
        with self._lock:
            return self._episodes.setdefault(instance_id, episode)

    def fork(self, parent: Episode, snapshot_id: str | None) -> str:
        """A new episode forked from ``parent`` at ``snapshot_id`` (None: now), served as ``/<name>``."""
        executor = parent.fork(snapshot_id)
        name = f"{parent.instance_id.split(FORK)[0]}{FORK}{uuid.uuid4().hex[:12]}"
        episode = Episode(name, lambda: executor, self._pool, command_timeout=self.command_timeout)
        episode.start()
        with self._lock:
            self._episodes[name] = episode
        return name

    def warm(self) -> None:
        """Check every listed instance now (a bad id raises here) and start opening its episode."""
        for instance_id in self.instance_ids:
            self.episode(instance_id).start()

    def close(self, instance_id: str | None = None) -> None:
        """Close one instance's episode (None: the root's, or every one when the root serves none); an
        instance never opened has nothing to close."""
        with self._lock:
            if instance_id is None and self.default is None:
                episodes = list(self._episodes.values())
            else:
                found = self._episodes.get(instance_id or self.default or "")
                episodes = [found] if found is not None else []
            for episode in episodes:  # a fork cannot open again: it goes
                if FORK in episode.instance_id:
                    self._episodes.pop(episode.instance_id, None)
        for episode in episodes:
            episode.close()

    def shutdown(self) -> None:
        with self._lock:
            episodes = list(self._episodes.values())
        for episode in episodes:
            self.close(episode.instance_id)
        self._pool.shutdown(wait=True)
        self.gate.shutdown()


def transfer(exc: BaseException, paths: HostPaths | None = None) -> JSONResponse:
    """swerex's server's ``exception_handler``: HTTP 511 with the exception for ``RemoteRuntime`` (its
    class and message, which it re-raises), naming no host path (``redact.HostPaths``: the traceback's
    frames as module names, the host's directories in the message and ``extra_info`` replaced)."""
    paths = paths or HostPaths()
    sent = _ExceptionTransfer(message=paths.text(str(exc)), class_path=f"{type(exc).__module__}.{type(exc).__name__}",
                              traceback=paths.traceback(exc),
                              extra_info=paths.value(getattr(exc, "extra_info", {}) or {}))
    return JSONResponse(status_code=511, content={"swerexception": sent.model_dump()})


def _json(model: BaseModel) -> Response:
    return Response(model.model_dump_json(), media_type="application/json")


def create_app(server: RexServer, api_key: str) -> FastAPI:
    """The FastAPI app: swerex's routes at the root and under ``/{instance_id}``."""
    if not api_key:
        raise ValueError("an API key is required (swerex's X-API-Key): a sweworld runtime never runs unauthenticated")

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await run_in_threadpool(server.shutdown)

    app = FastAPI(title="sweworld SWE-ReX runtime", lifespan=lifespan)
    app.add_middleware(Guard, api_key=api_key, server=server)

    async def call(request: Request, fn: Callable[[Episode], BaseModel]) -> Response:
        """``fn(episode)`` on a thread of the server's pool once admitted (``admission.Gate``)."""
        instance_id = request.path_params.get("instance_id")
        try:
            return _json(await server.gate.run(instance_id or server.default or "",
                                               lambda: fn(server.episode(instance_id))))
        except Refused as refused:
            return refused.response(request.url.path.rsplit("/", 1)[-1])
        except Exception as exc:  # every failure goes to the client, as swerex's server sends it
            return transfer(exc, server.hostpaths)

    @app.get("/")
    async def root() -> dict:
        return {"message": "hello world"}

    for prefix in ("", "/{instance_id}"):
        _routes(app, server, prefix, call)
        swerex_branch.add_routes(app, server, prefix, call)
    return app


def _routes(app: FastAPI, server: RexServer, prefix: str, call: Callable) -> None:
    suffix = "_instance" if prefix else ""

    @app.get(f"{prefix}/is_alive", operation_id=f"is_alive{suffix}")
    async def is_alive(request: Request) -> Response:
        """Answered on the event loop, behind no queue and no lock of an episode's work (an episode
        never addressed before is looked up on a thread of its own first)."""
        if prefix == "" and server.default is None:
            return _json(IsAliveResponse(is_alive=False, message="this sweworld runtime serves several instances: "
                                         "address one as http://HOST:PORT/<instance_id>"))
        instance_id = request.path_params.get("instance_id")
        try:
            episode = server.known(instance_id) or await run_in_threadpool(server.episode, instance_id)
            return _json(episode.alive())
        except Exception as exc:
            return transfer(exc, server.hostpaths)

    @app.post(f"{prefix}/create_session", operation_id=f"create_session{suffix}")
    async def create_session(request: Request, body: CreateSessionRequest) -> Response:
        return await call(request, lambda episode: episode.create_session(body))

    @app.post(f"{prefix}/run_in_session", operation_id=f"run_in_session{suffix}")
    async def run_in_session(request: Request, action: Action) -> Response:
        return await call(request, lambda episode: episode.run_in_session(action))

    @app.post(f"{prefix}/close_session", operation_id=f"close_session{suffix}")
    async def close_session(request: Request, body: CloseSessionRequest) -> Response:
        return await call(request, lambda episode: episode.close_session(body.session))

    @app.post(f"{prefix}/execute", operation_id=f"execute{suffix}")
    async def execute(request: Request, command: Command) -> Response:
        return await call(request, lambda episode: episode.execute(command))

    @app.post(f"{prefix}/read_file", operation_id=f"read_file{suffix}")
    async def read_file(request: Request, body: ReadFileRequest) -> Response:
        return await call(request, lambda episode: episode.read_file(body.path, body.encoding, body.errors))

    @app.post(f"{prefix}/write_file", operation_id=f"write_file{suffix}")
    async def write_file(request: Request, body: WriteFileRequest) -> Response:
        return await call(request, lambda episode: episode.write_file(body.path, body.content))

    @app.post(f"{prefix}/upload", operation_id=f"upload{suffix}")
    async def upload(request: Request, file: UploadFile = File(...), target_path: str = Form(...),
                     unzip: bool = Form(False)) -> Response:
        try:  # the request's body, spooled to disk by starlette, is read a piece at a time (swerex_upload)
            return await call(request, lambda episode: episode.upload(file.file, target_path, unzip))
        finally:
            await file.close()

    @app.post(f"{prefix}/close", operation_id=f"close{suffix}")
    async def close(request: Request) -> Response:
        instance_id = request.path_params.get("instance_id")
        try:  # behind the server's bounds only: a client can always close its flooded episode
            await server.gate.run(None, lambda: server.close(instance_id))
        except Refused as refused:
            return refused.response("close")
        except Exception as exc:
            return transfer(exc, server.hostpaths)
        return _json(CloseResponse())


class ServerThread:
    """uvicorn serving ``app`` on a thread of this process (tests, benchmarks): a context manager;
    ``url`` is ``http://HOST:PORT`` once it listens (``port=0``: a free port)."""

    def __init__(self, app: FastAPI, host: str = "127.0.0.1", port: int = 0):
        import uvicorn
        self.server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, name="sweworld-rex-server", daemon=True)
        self.host = host

    def __enter__(self) -> ServerThread:
        self.thread.start()
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("the SWE-ReX server thread stopped before it listened (see its log)")
            time.sleep(0.01)
        return self

    @property
    def url(self) -> str:
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://{self.host}:{port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join()


def serve(server: RexServer, *, api_key: str, host: str = "127.0.0.1", port: int = 8000,
          log_level: str = "info", access_log: bool = False) -> None:
    """Serve ``server`` until interrupted (uvicorn; ``access_log``: a line per request); every episode
    is closed on the way out."""
    import uvicorn
    uvicorn.run(create_app(server, api_key), host=host, port=port, log_level=log_level, access_log=access_log)


__all__ = ["ROUTES", "RexServer", "ServerThread", "create_app", "serve", "transfer"]
