"""sweworld as an OpenEnv environment server: ``sweworld openenv serve``.

OpenEnv (``openenv-core``) serves an ``Environment`` subclass over HTTP and WebSocket
(``openenv.core.env_server.http_server.create_fastapi_app``); its clients (``GenericEnvClient``, an
``EnvClient`` subclass, ``.sync()`` for blocking code) talk to ``/ws``, where every connection is a
session with an environment of its own. Here a session's environment is ``SWEWorldEnvironment``, and
its episode is one sweworld episode:

- ``reset(instance_id=ID)`` opens an episode of that task of the server's dataset (without one:
  ``seed % len(tasks)`` when a seed is given, else the next task in turn, shared by every session) and
  returns the problem statement (``output``) and the tools' schemas (``tools``); a reset closes the
  session's previous episode;
- ``step(SWEAction(tool=..., arguments=...))`` runs one call of the agent's tools (``execute_bash``,
  ``str_replace_editor``, ``search``, ``submit``: ``sweworld.integrations.gym.SWEEnv``'s) and returns
  its output, exit code and ``done``; ``submit`` grades the workspace's diff with the backend and the
  reward is ``seam.grade``'s (``sweworld.seam.reward``) (real: the harness's 1.0/0.0; sim: SWR's
  P(resolved); hybrid: as routed), with ``patch`` and ``report`` beside it; the step limit ends the
  episode with reward 0.0 (``truncated``);
- a tool call that raises an infrastructure error (``InfraError``: the sandbox died...) ends that
  episode with reward 0.0 and the error in ``error``; the session and the server go on;
- ``state`` is ``SWEState``: ``episode_id``, ``step_count``, ``instance_id``;
- branching (docs/branching_frameworks.md), where the backend's episodes can (real, sim, hybrid):
  ``step(SWEAction(branch="snapshot"))`` snapshots the session's episode (no step: the observation's
  ``snapshot_id``); ``reset(from_snapshot=ID)`` in any session of the server opens a fork of it (same
  task and step count, the episode's files and shell state as they were); ``reset(fork_of=EPISODE_ID)``
  forks another session's live episode as it is now; ``SWEAction(branch="restore", snapshot_id=ID)``
  puts the session's episode back to one of its own snapshots, ``branch="release"`` frees one. A
  session's snapshots are released when its episode ends (reset, submit, close); an unknown or
  released id is an error saying so;
- closing the session (the client's ``close()``, a dropped connection, OpenEnv's idle timeout, the
  server's shutdown) closes its episode.

The dataset, the clones and the backend (``real`` by default; ``sim`` and ``hybrid`` on the embedded
world unless ``backend_options`` name another) come from an ``EpisodeSpec``
(``sweworld.integrations.episodes``); one backend serves every session. Use::

    server = OpenEnvServer(EpisodeSpec(dataset="lite", backend="sim"), max_sessions=16)
    serve(server, port=8000)            # or: sweworld openenv serve --dataset lite --backend sim

and on the client ``GenericEnvClient(base_url="http://127.0.0.1:8000").sync()``; see docs/openenv.md.
OpenEnv's stateless ``POST /reset`` and ``POST /step`` build an environment per request (an episode
opened and closed at once): act through the WebSocket client.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import uuid
import weakref
from typing import TYPE_CHECKING, Any

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import EnvironmentMetadata

from sweworld import __version__
from sweworld.backends import make_backend
from sweworld.core.config import timeouts
from sweworld.core.errors import ConfigError, DatasetError, InfraError, SWEWorldError
from sweworld.integrations.episodes import EpisodeSpec, backend_for, load_tasks_of, spec_of
from sweworld.integrations.gym import STEP_LIMIT, SWEEnv
from sweworld.integrations.gym_branch import EnvSnapshot
from sweworld.integrations.keyed import KeyedPath, loopback
from sweworld.integrations.openenv_http import QuietClose, StatelessBound
from sweworld.integrations.openenv_models import SWEAction, SWEObservation, SWEState
from sweworld.integrations.redact import HostPaths
from sweworld.seam import prompt as prompts
from sweworld.seam.tasks import TaskIndex

if TYPE_CHECKING:
    from fastapi import FastAPI

    from sweworld.core.protocols import Backend
    from sweworld.core.types import Task

RESET_ARGUMENTS = ("seed", "episode_id", "instance_id", "from_snapshot", "fork_of")


class OpenEnvServer:
    """What every session of one server shares: the tasks, the backend, the turn, the open episodes.

    ``spec``: an ``EpisodeSpec`` or its dict (the dataset, split, clones, backend and its options; its
    ``instance_id`` is ignored; wrong keys or options: one ``ConfigError``); ``instance_ids``: serve only
    these (default: every task of the dataset); ``backend``: a ``Backend`` (or config) to use instead of
    the spec's; ``step_limit``: steps before an episode is truncated; ``eval_timeout``: the wall limit of
    a grading; ``max_sessions``: WebSocket sessions open at once; ``idle_timeout``: seconds after which
    OpenEnv closes an idle session (None: never)."""

    def __init__(self, spec: EpisodeSpec | dict[str, Any] | None = None, *, instance_ids: list[str] | None = None,
                 backend: Backend | Any = None, step_limit: int = STEP_LIMIT, eval_timeout: float = timeouts.EVALUATION,
                 max_sessions: int = 8, idle_timeout: float | None = None):
        if not isinstance(spec, EpisodeSpec):
            spec = spec_of(dict(spec or {}), where="openenv server")
        if step_limit < 1 or max_sessions < 1:
            raise ConfigError(f"step_limit and max_sessions must be >= 1, got {step_limit} and {max_sessions}",
                              where="openenv server", hint="give positive numbers")
        self.spec = spec
        self.backend: Backend = make_backend(backend) if backend is not None else backend_for(spec)
        self.tasks: list[Task] = load_tasks_of(spec.dataset, spec.split, instance_ids)
        if not self.tasks:
            raise DatasetError("no task to serve", where=self.where(), hint="check --dataset and --instance-ids")
        self._by_id = TaskIndex(self.tasks, where=self.where())
        self.hostpaths = HostPaths.of_server(spec.dataset, spec.repos_dir)
        """What an error sent to a client must not name (``redact``): its host directories are replaced."""
        self.step_limit, self.eval_timeout = step_limit, eval_timeout
        self.max_sessions, self.idle_timeout = max_sessions, idle_timeout
        self._next = 0
        self._changed = threading.Condition()
        self._open: dict[int, dict[str, str]] = {}
        self._sessions: weakref.WeakSet[SWEWorldEnvironment] = weakref.WeakSet()
        self._snapshots: dict[str, tuple[SWEWorldEnvironment, EnvSnapshot]] = {}

    def where(self) -> str:
        return f"dataset {self.spec.dataset}" + (f" (split {self.spec.split})" if self.spec.split else "")

    def task(self, instance_id: str | None = None, seed: int | None = None) -> Task:
        """The task ``instance_id`` names; without one ``tasks[seed % n]``, else the next in turn."""
        if instance_id:
            if instance_id not in self._by_id:
                listed = ", ".join(self._by_id.ids[:5]) + (", ..." if len(self._by_id) > 5 else "")
                raise DatasetError(f"instance {instance_id!r} is not served here", where=self.where(), hint=(
                    f"reset with one of {listed}, or start `sweworld openenv serve` with the dataset that holds it"))
            return self._by_id[instance_id]
        with self._changed:
            if seed is not None:
                self._next = seed % len(self.tasks)
            task = self.tasks[self._next % len(self.tasks)]
            self._next += 1
        return task

    def open_episodes(self) -> list[dict[str, str]]:
        """The episodes open now: ``{"episode_id", "instance_id"}`` each."""
        with self._changed:
            return list(self._open.values())

    def wait_closed(self, timeout: float | None = None) -> bool:
        """Wait until no episode is open (closing a session finishes on the server after the client
        returns); True when none is, False when ``timeout`` passed first."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._open, timeout)

    def _opened(self, env: SWEWorldEnvironment, episode_id: str, instance_id: str) -> None:
        with self._changed:
            self._open[id(env)] = {"episode_id": episode_id, "instance_id": instance_id}
            self._changed.notify_all()

    def _closed(self, env: SWEWorldEnvironment) -> None:
        with self._changed:
            self._open.pop(id(env), None)
            self._changed.notify_all()

    # -- snapshots taken through the server: id -> (the session that took it, the snapshot) ------
    def keep(self, env: SWEWorldEnvironment, snapshot: EnvSnapshot) -> str:
        """A new id for ``env``'s ``snapshot``."""
        snapshot_id = uuid.uuid4().hex
        with self._changed:
            self._snapshots[snapshot_id] = (env, snapshot)
        return snapshot_id

    def snapshot(self, snapshot_id: str) -> tuple[SWEWorldEnvironment, EnvSnapshot]:
        """The session that took ``snapshot_id`` and the snapshot; ``ConfigError`` when none is kept."""
        with self._changed:
            found = self._snapshots.get(snapshot_id)
        if found is None:
            raise ConfigError(f"no snapshot {snapshot_id!r} on this server", where="openenv", hint=(
                "use a snapshot_id a `snapshot` action returned; a session's snapshots are released when its "
                "episode ends (reset, submit, step limit, close) or by a `release` action"))
        return found

    def forget(self, env: SWEWorldEnvironment, snapshot_id: str | None = None) -> None:
        """Drop ``snapshot_id`` (None: every snapshot ``env`` took)."""
        with self._changed:
            for key in [snapshot_id] if snapshot_id else [k for k, (e, _) in self._snapshots.items() if e is env]:
                self._snapshots.pop(key, None)

    def session(self, episode_id: str) -> SWEWorldEnvironment:
        """The session whose live episode is ``episode_id``; ``ConfigError`` when none (or several) is."""
        found = [env for env in list(self._sessions) if env._env is not None and env.state.episode_id == episode_id]
        if len(found) != 1:
            raise ConfigError(f"{'no' if not found else 'more than one'} session has a live episode {episode_id!r}",
                              where="openenv", hint="fork_of names the episode_id of another session's open episode")
        return found[0]

    def close_all(self) -> None:
        """Close every session's episode (the server's shutdown)."""
        for env in list(self._sessions):
            env.close()


class SWEWorldEnvironment(Environment[SWEAction, SWEObservation, SWEState]):
    """One OpenEnv session: its episodes of sweworld tasks, one at a time (see the module docstring)."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, server: OpenEnvServer):
        super().__init__()
        self.server = server
        self.backend_name = server.backend.name
        self._env: SWEEnv | None = None
        self._state = SWEState(backend=self.backend_name)
        self._lock = threading.RLock()  # the episode, against a fork from another session's thread
        server._sessions.add(self)

    def reset(self, seed: int | None = None, episode_id: str | None = None, instance_id: str | None = None,
              from_snapshot: str | None = None, fork_of: str | None = None, **kwargs: Any) -> SWEObservation:
        """Open an episode of ``instance_id`` (else ``seed``'s task, else the next in turn), or a fork of
        the snapshot ``from_snapshot`` or of the live episode ``fork_of`` (any session's), closing the
        session's previous one; ``DatasetError`` for an instance not served, ``ConfigError`` for an
        argument reset does not take or a snapshot or episode there is not (OpenEnv sends its message to
        the client: the host's directories in it are replaced, ``redact``)."""
        try:
            return self._reset(seed, episode_id, instance_id, from_snapshot, fork_of, **kwargs)
        except SWEWorldError as exc:
            exc.args = (self.server.hostpaths.text(str(exc)),)
            raise

    def _reset(self, seed: int | None, episode_id: str | None, instance_id: str | None, from_snapshot: str | None,
               fork_of: str | None, **kwargs: Any) -> SWEObservation:
        if kwargs:
            raise ConfigError(f"reset got unknown argument(s) {sorted(kwargs)}", where="openenv reset",
                              hint=f"reset takes {', '.join(RESET_ARGUMENTS)}")
        if from_snapshot or fork_of:
            if instance_id or seed is not None or (from_snapshot and fork_of):
                raise ConfigError("a fork's task is its parent's", where="openenv reset",
                                  hint="give from_snapshot or fork_of alone (episode_id may go with it)")
            env = self._forked(from_snapshot, fork_of)  # before the session's episode closes: it may be the parent
            self._end()
        else:
            task = self.server.task(instance_id, seed)
            self._end()
            env = SWEEnv(backend=self.server.backend, eval_timeout=self.server.eval_timeout)
            try:
                env.reset(options={"task": task})
            except BaseException:
                env.close()
                raise
        with self._lock:
            self._env = env
        task = env.task
        assert task is not None and env.sandbox is not None
        self._state = SWEState(episode_id=episode_id or uuid.uuid4().hex, step_count=env.steps,
                               instance_id=task.instance_id, backend=self.backend_name)
        self.server._opened(self, self._state.episode_id or "", task.instance_id)
        return self._observe(prompts.statement(task), tools=env.tools.schemas(), workdir=env.sandbox.workdir,
                             reward=None, metadata={"repo": task.repo, "base_commit": task.base_commit})

    def _forked(self, snapshot_id: str | None, episode_id: str | None) -> SWEEnv:
        """A new ``SWEEnv`` whose episode forks ``snapshot_id``, or the live episode ``episode_id``."""
        owner, snapshot = self.server.snapshot(snapshot_id) if snapshot_id else (self.server.session(episode_id or ""),
                                                                                 None)
        with owner._lock:  # the owner's episode stands still while it is copied
            if owner._env is None or (snapshot_id and snapshot_id not in self.server._snapshots):
                raise ConfigError(f"{'the snapshot ' + snapshot_id if snapshot_id else 'the episode ' + str(episode_id)} "
                                  "ended before it was forked", where="openenv reset", hint="fork a live one")
            return owner._env.fork(snapshot)

    def _branch(self, action: SWEAction) -> SWEObservation:
        """A ``snapshot``, ``restore`` or ``release`` of the session's episode (no step)."""
        with self._lock:
            env = self._env
            if env is None or env.sandbox is None:
                return self._observe("", done=True, reward=None, error="no open episode to branch: call reset")
            try:
                if action.branch == "snapshot":
                    return self._observe("", reward=None, snapshot_id=self.server.keep(self, env.snapshot()))
                assert action.snapshot_id is not None
                owner, snapshot = self.server.snapshot(action.snapshot_id)
                if owner is not self:
                    raise ConfigError(f"snapshot {action.snapshot_id!r} is another session's", where="openenv",
                                      hint="restore and release take this session's own snapshots; reset("
                                      "from_snapshot=ID) forks another's")
                if action.branch == "release":
                    env.release(snapshot)
                    self.server.forget(self, action.snapshot_id)
                    return self._observe("", reward=None)
                output, _ = env.restore(snapshot)
                self._state.step_count = env.steps
                return self._observe(output, reward=None, snapshot_id=action.snapshot_id)
            except SWEWorldError as exc:  # a refused snapshot (disk) leaves the episode as it was; a failed restore not
                if isinstance(exc, InfraError) and action.branch == "restore":
                    return self._failed(exc)
                return self._observe("", reward=None, error=self.server.hostpaths.text(str(exc)))

    def step(self, action: SWEAction, timeout_s: float | None = None, **kwargs: Any) -> SWEObservation:
        """Run one tool call or branch operation (``timeout_s`` is not used: commands have the backend's
        limits)."""
        if action.branch is not None:
            return self._branch(action)
        with self._lock:
            return self._step(action)

    def _step(self, action: SWEAction) -> SWEObservation:
        env = self._env
        if env is None or env.sandbox is None:
            return self._observe("", done=True, reward=None, error=(
                "no open episode: it ended (submit, step limit or failure) or none was opened; call reset"))
        self._state.step_count += 1
        try:
            output, reward, terminated, _, info = env.step({"tool": action.tool, "arguments": action.arguments})
        except InfraError as exc:
            return self._failed(exc)
        error = output if info["format_error"] else None
        if terminated:
            report, patch = info["report"], info["patch"]
            if info.get("error"):  # graded by nobody: an infrastructure failure, not the agent's patch (reward 0.0)
                error = f"the evaluation failed: {self.server.hostpaths.text(str(info['error']))}"
            self._end()
            return self._observe(output, exit_code=info["exit_code"], done=True, reward=reward, error=error,
                                 patch=patch, report=report, metadata={"patch": patch, "report": report})
        if self._state.step_count >= self.server.step_limit:
            try:
                patch = env.end_episode()
            except InfraError as exc:
                return self._failed(exc)
            self._end()
            return self._observe(output, exit_code=info["exit_code"], done=True, reward=0.0, error=error,
                                 truncated=True, patch=patch, metadata={"patch": patch})
        return self._observe(output, exit_code=info["exit_code"], reward=0.0, error=error)

    def _failed(self, exc: InfraError) -> SWEObservation:
        """An infrastructure failure ends the episode: reward 0.0, the error said."""
        self._end()
        said = self.server.hostpaths.text(str(exc))
        error = f"infrastructure failure, the episode ended: {said}"
        return self._observe("", done=True, reward=0.0, error=error, metadata={"infra_error": said})

    def _observe(self, output: str, *, reward: float | None, done: bool = False, **fields: Any) -> SWEObservation:
        if done:
            self._state.done = True
        return SWEObservation(output=output, instance_id=self._state.instance_id or "", step=self._state.step_count,
                              backend=self.backend_name, done=done, reward=reward, **fields)

    @property
    def state(self) -> SWEState:
        return self._state

    def _end(self) -> None:
        """Close the open episode, if any, and forget its snapshots."""
        with self._lock:
            env, self._env = self._env, None
            if env is not None:
                self.server.forget(self)
                try:
                    with contextlib.suppress(InfraError):  # a dead sandbox has nothing left to close
                        env.close()
                finally:
                    self.server._closed(self)

    def close(self) -> None:
        """Close the session's episode (OpenEnv calls this when the session ends)."""
        self._end()

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="sweworld", version=__version__,
            description=f"Software-engineering tasks of {self.server.where()} on the {self.backend_name} backend: "
            "tool calls (execute_bash, str_replace_editor, search, submit) in an isolated episode; the reward "
            "is the verdict on the submitted patch.")


def create_app(server: OpenEnvServer) -> FastAPI:
    """OpenEnv's FastAPI app (``create_fastapi_app``: ``/ws``, ``/reset``, ``/step``, ``/state``,
    ``/schema``, ``/metadata``, ``/health``) over sessions of ``server``; every episode still open is
    closed when the app shuts down; at most ``max_sessions`` stateless ``/reset`` or ``/step`` run at
    once (``openenv_http``: one more gets 503 and ``Retry-After``)."""
    from openenv.core.env_server.http_server import create_fastapi_app
    from openenv.core.env_server.types import ConcurrencyConfig
    concurrency = ConcurrencyConfig(max_concurrent_envs=server.max_sessions, session_timeout=server.idle_timeout)
    app = create_fastapi_app(functools.partial(SWEWorldEnvironment, server), SWEAction, SWEObservation,
                             concurrency_config=concurrency)
    app.router.on_shutdown.append(server.close_all)
    app.add_middleware(QuietClose)
    app.add_middleware(StatelessBound, bound=server.max_sessions)
    return app


def serve(server: OpenEnvServer, *, host: str = "127.0.0.1", port: int = 8000, log_level: str = "info",
          access_log: bool = False, api_key: str | None = None) -> None:
    """Serve ``server`` with uvicorn until interrupted; every episode is closed on the way out.

    ``api_key``: served under ``/k/<api_key>/`` only (``keyed.KeyedPath``: OpenEnv's clients send no
    header). Without one the server listens on loopback only: another ``host`` raises ``ConfigError``."""
    import uvicorn
    try:
        if not api_key and not loopback(host):
            raise ConfigError(f"--host {host} serves beyond this machine, and without a key whoever reaches the "
                              "port runs commands in the episodes",
                              hint="give --api-key KEY (clients then use base_url=http://HOST:PORT/k/KEY), or bind "
                              "127.0.0.1 and reach it through an SSH tunnel")
        app = create_app(server)
        uvicorn.run(KeyedPath(app, api_key) if api_key else app, host=host, port=port, log_level=log_level,
                    access_log=access_log)
    finally:
        server.close_all()


__all__ = ["OpenEnvServer", "SWEAction", "SWEObservation", "SWEState", "SWEWorldEnvironment", "create_app", "serve"]
