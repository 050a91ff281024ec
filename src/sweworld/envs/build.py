"""Build environments inside the sandbox, once per key, and the per-commit install layer.

The env stage runs with the base tree at the env commit mounted at ``/testbed`` and the venv
directory mounted read-write at ``/sweworld/venv``; the instance stage runs ``pre_install`` and
``install`` at the task's base commit in copy-on-write layers over the tree and the venv, and
those two upper directories become read-only lowers of every later episode (empty git submodules
of the tree are filled first, see submodule_fill.py). Builds have network (package registries);
episodes never do.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sweworld import cas
from sweworld.core import paths
from sweworld.core.config import timeouts
from sweworld.core.errors import EnvBuildError, RepoError, SandboxError
from sweworld.core.paths import remove_tree
from sweworld.core.types import Task
from sweworld.envs import scripts, services, submodule_fill
from sweworld.envs.derived import derive_layer
from sweworld.envs.discovery import Interpreter, find_interpreter
from sweworld.envs.epilogue import COMPILE_VENV, instance_epilogue
from sweworld.envs.fetched import announce, fetched
from sweworld.envs.lang import stage as lang_stage
from sweworld.envs.recipes import EnvRecipe, env_key, instance_key, pinned_by_version, resolve_recipe
from sweworld.envs.scmversion import pretend_version_env, uses_scm_version
from sweworld.envs.store import envs_root, error_line, locked, log_tail, read_meta
from sweworld.repos import RepoStore
from sweworld.sandbox import Dir, Layers, Sandbox, SandboxConfig, diagnose
from sweworld.usage import mark_used

if TYPE_CHECKING:
    from sweworld.envsource import EnvSource

log = logging.getLogger(__name__)

VENV = "/sweworld/venv"
BUILD_TIMEOUT = timeouts.BUILD
FAILED_FOR = 900.0
"""Seconds a failed environment build is answered from memory before it is tried again."""
LAYER_FORMAT = "layer-v4"  # bump when the instance-stage epilogue changes: old layers are rebuilt
PASSTHROUGH = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
               "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_TRUSTED_HOST",
               "PIP_CERT", "PIP_DEFAULT_TIMEOUT", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX",
               "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "UV_NATIVE_TLS",
               "NODE_EXTRA_CA_CERTS", "NPM_CONFIG_REGISTRY", "npm_config_registry",
               "GOPROXY", "GOSUMDB", "GONOSUMDB", "GONOPROXY", "GOPRIVATE", "GOINSECURE", "GOFLAGS",
               "CARGO_REGISTRIES_CRATES_IO_PROTOCOL", "CARGO_HTTP_CAINFO")  # envs.registry


@dataclass
class Environment:
    """A built, shared environment."""

    key: str
    path: Path
    recipe: EnvRecipe
    interpreter: Interpreter

    @property
    def venv(self) -> Path:
        return self.path / "venv"


@dataclass
class InstanceLayer:
    """The per-base-commit install layer on top of an environment."""

    key: str
    path: Path
    env: Environment
    tree: Path
    base_commit: str
    build_env: dict[str, str] = field(default_factory=dict)
    """Variables every (re)install of this commit needs (e.g. the scm version, see scmversion.py)."""
    services: dict[str, Environment] = field(default_factory=dict)
    """Built stand-ins of ``env.recipe.services`` (mounted at /sweworld/services/<name>)."""

    @property
    def testbed(self) -> Path:
        return self.path / "testbed"

    @property
    def venv(self) -> Path:
        return self.path / "venv"


def uv_binary() -> Path | None:
    try:
        from uv import find_uv_bin
        return Path(find_uv_bin()).resolve()
    except (ImportError, FileNotFoundError):
        return None


def _caches() -> dict[str, Path]:
    root = envs_root().parent / "cache"
    dirs = {"uv": root / "uv", "pip": root / "pip", "npm": root / "npm"}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    return dirs


def build_config(timeout: float = BUILD_TIMEOUT) -> SandboxConfig:
    return SandboxConfig(network=True, persistent=False, timeout=timeout, output_cap=4_000_000, processes=4096,
                         memory=None, passthrough_env=list(PASSTHROUGH),
                         env={"UV_CACHE_DIR": "/sweworld/cache/uv", "PIP_CACHE_DIR": "/sweworld/cache/pip",
                              "UV_LINK_MODE": "copy", "UV_PYTHON_DOWNLOADS": "never",
                              "UV_SYSTEM_CERTS": "1"})


def _run_script(sandbox: Sandbox, script: str, log_path: Path, what: str, where: str, timeout: float) -> None:
    sandbox.write_file("/tmp/build.sh", script)
    started = time.monotonic()
    result = sandbox.exec("bash /tmp/build.sh", timeout=timeout)
    with open(log_path, "a", encoding="utf-8") as handle:
        handle.write(f"### {what} ({time.monotonic() - started:.1f}s, exit {result.exit_code})\n")
        handle.write("### script:\n" + script + "\n### output:\n" + result.output + "\n")
    if not result.ok:
        cause = "timed out" if result.timed_out else f"exited with status {result.exit_code}"
        full = diagnose.disk_full(result.output)
        hint = (f"the disk is full: free space under {paths.home()} (or point SWEWORLD_HOME at a larger disk), then "
                "build again" if full else "read the build log; fix the task's install fields (python, install, "
                "pip_packages) or the recipe, then run `sweworld env build` again")
        line = full or error_line(log_path)
        why = f" ({full})" if full else (f": {line}" if line else "")
        raise EnvBuildError(f"{what} {cause}{why}", where=where, log_path=str(log_path),
                            log_tail=log_tail(log_path), hint=hint, cause=line)


UV_IN_SANDBOX = Path("/sweworld/bin/uv")


def tool_mounts(uv: Path | None) -> dict[str, Dir]:
    """Host tools the scripts call, at fixed paths inside the sandbox (host paths may be shadowed,
    e.g. anything under the host's /tmp). The directory ``/sweworld/bin`` is mounted, not the file:
    a directory is mounted as an overlay that names no host path, where a bind of one file shows
    the file's host path in the episode's ``/proc/self/mountinfo``."""
    return {str(UV_IN_SANDBOX.parent): Dir(tool_dir(uv))} if uv is not None else {}


def tool_dir(uv: Path) -> Path:
    """A directory under sweworld's home holding ``uv`` alone (a hard link where the file system
    allows, else a copy), one per uv binary (its size and modification time), made atomically."""
    info = uv.stat()
    final = envs_root().parent / "cache" / "tools" / f"uv-{info.st_size}-{info.st_mtime_ns}"
    if (final / "uv").exists():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".uv-", dir=final.parent))
    try:
        try:
            os.link(uv, staging / "uv")
        except OSError:
            shutil.copy2(uv, staging / "uv")
        os.replace(staging, final)
    except OSError:
        if not (final / "uv").exists():
            raise
    finally:
        if staging.exists():
            remove_tree(staging)
    return final


def sandbox_uv(uv: Path | None) -> Path | None:
    return UV_IN_SANDBOX if uv is not None else None


def _ro_paths(interp: Interpreter) -> list[str]:
    return [str(interp.prefix)]


class EnvBuilder:
    """Resolves, builds and caches environments and instance layers for tasks.

    What is missing here is first asked of ``source`` (by default the process's, see
    ``sweworld.envsource``; none on one machine), then built; what this node has is announced to it."""

    def __init__(self, repos: RepoStore | None = None, *, timeout: float = BUILD_TIMEOUT,
                 source: EnvSource | None = None):
        self.repos = repos or RepoStore()
        self.timeout = timeout
        self.source = source
        self.failed: dict[str, tuple[float, EnvBuildError]] = {}
        """Environments whose build failed in the last ``FAILED_FOR`` seconds: asked again, the same error
        at once (a mining run's candidates of one release line share one environment, and its failure)."""

    def recipe(self, task: Task) -> EnvRecipe:
        tree = self.repos.tree(task.repo, task.env_commit, task.repo_source, instance_id=task.instance_id)
        return resolve_recipe(task, tree)

    def key(self, task: Task, recipe: EnvRecipe | None = None) -> str:
        recipe = recipe or self.recipe(task)
        pinned = task.version if pinned_by_version(recipe) else task.env_commit
        return env_key(recipe, task.repo, pinned)

    def environment(self, task: Task) -> Environment:
        """The shared environment of ``task``, built on first use (file-locked)."""
        recipe = self.recipe(task)
        key = self.key(task, recipe)
        final = envs_root() / key
        when, error = self.failed.get(key, (0.0, None))
        if error is not None and time.monotonic() - when < FAILED_FOR:
            raise error
        with locked(key):
            meta = read_meta(final / "env.json")
            if not meta.get("complete"):
                if not fetched("env", key, self.source):
                    try:
                        self._build_env(task, recipe, key, final)
                    except EnvBuildError as exc:
                        self.failed[key] = (time.monotonic(), exc)
                        raise
                meta = read_meta(final / "env.json")
        announce("env", key, self.source)
        interp = find_interpreter(meta["python"])
        # The task's own recipe, not the one stored by whichever task built the environment first: the
        # key covers the env stage only, and tasks sharing it (a SWE-rebench version, a spec version
        # after a recipe fix) may differ in pre_install, install, test_cmd and env_vars.
        return Environment(key, mark_used(final), recipe, interp)

    def _build_env(self, task: Task, recipe: EnvRecipe, key: str, final: Path) -> None:
        where = f"instance {task.instance_id} (env {key})"
        for note in recipe.notes:
            log.info("%s: %s", where, note)
        tree = self.repos.tree(task.repo, task.env_commit, task.repo_source, instance_id=task.instance_id)
        meta = {"repo": task.repo, "env_commit": task.env_commit, "version": task.version}
        if recipe.language != "python":  # another language's env stage (envs/lang/stage.py): no virtualenv
            script, ro_paths, found = lang_stage.env_stage(recipe, where, venv=VENV, workdir="/testbed")
            build = StagedBuild(final.parent / f".{key}.building", final, envs_root() / "logs" / f"{key}.log", where)
            (build.staging / "venv").mkdir()
            build.run({VENV: Dir(build.staging / "venv", writable=True), "/testbed": Layers([tree])}, script,
                      "environment build", base_commit=task.env_commit, ro_paths=ro_paths, timeout=self.timeout)
            build.publish("env.json", {"key": key, **meta, **found, "recipe": recipe.model_dump()})
            return
        self._build_venv(recipe, key, final, where, tree=tree, base_commit=task.env_commit, epilogue=COMPILE_VENV,
                         meta=meta)

    def _build_venv(self, recipe: EnvRecipe, key: str, final: Path, where: str, *, tree: Path | None,
                    base_commit: str | None, epilogue: str, meta: dict) -> None:
        """The env-stage script of ``recipe`` in a staged build published at ``final`` (with
        ``tree`` at /testbed, or run in /tmp without one), then ``epilogue``; env.json gets ``meta``."""
        interp = find_interpreter(recipe.python)
        uv = uv_binary()
        build = StagedBuild(final.parent / f".{key}.building", final, envs_root() / "logs" / f"{key}.log", where)
        (build.staging / "venv").mkdir()
        mounts = {VENV: Dir(build.staging / "venv", writable=True), **tool_mounts(uv)}
        workdir = "/testbed" if tree is not None else "/tmp"
        if tree is not None:
            mounts["/testbed"] = Layers([tree])
        script = scripts.env_stage_script(recipe, python=interp.path, venv=VENV, uv=sandbox_uv(uv),
                                          workdir=workdir) + epilogue
        build.run(mounts, script, "environment build", base_commit=base_commit,
                  ro_paths=_ro_paths(interp), timeout=self.timeout, workdir=workdir)
        build.publish("env.json", {"key": key, **meta, "python": interp.version, "interpreter": str(interp.path),
                                   "recipe": recipe.model_dump()})

    def instance(self, task: Task, env: Environment | None = None) -> InstanceLayer:
        """The install layer of ``task``'s base commit over its environment (built on first use)."""
        env = env or self.environment(task)
        tree = self.repos.base_tree(task)
        fills = submodule_fill.plan(tree, task.repo, self.repos)
        key = self._layer_key(task, env.key, env.recipe, fills)
        final = env.path / "instances" / key
        build_env = self.build_env(task, tree)
        with locked(f"{env.key}-{key}"):
            if (not read_meta(final / "meta.json").get("complete")
                    and not fetched("instance", f"{env.key}/{key}", self.source)
                    and not derive_layer(self, task, env, tree, key, final)):
                self._build_instance(task, env, tree, key, final, build_env, fills)
        announce("instance", f"{env.key}/{key}", self.source)
        stand_ins = {name: self.service(name) for name in env.recipe.services}
        return InstanceLayer(key, final, env, tree, task.base_commit, build_env, stand_ins)

    @staticmethod
    def _layer_key(task: Task, env_key: str, recipe: EnvRecipe, fills: list) -> str:
        committed = ":setup-committed" if recipe.commits_setup() else ""
        return instance_key(f"{env_key}:{LAYER_FORMAT}{committed}{submodule_fill.key_suffix(fills)}",
                            task.base_commit, recipe)

    def built_testbed(self, task: Task) -> Path | None:
        """The build artefacts of ``task``'s install layer over its base tree (``__pycache__``,
        ``*.egg-info``, compiled extensions) when that layer is already built; None otherwise.
        Nothing is built (the sim backend shows a workspace as a real episode would)."""
        recipe = self.recipe(task)
        env_path = envs_root() / self.key(task, recipe)
        meta = read_meta(env_path / "env.json")
        if not meta.get("complete"):
            return None
        fills = submodule_fill.plan(self.repos.base_tree(task), task.repo, self.repos)
        final = env_path / "instances" / self._layer_key(task, meta["key"], recipe, fills)
        return final / "testbed" if read_meta(final / "meta.json").get("complete") else None

    def build_env(self, task: Task, tree: Path) -> dict[str, str]:
        """Variables the install of ``task``'s base commit needs: the version of a project that
        takes it from git history (the mirror's tags, else the task's release line)."""
        if not uses_scm_version(tree):
            return {}
        try:
            mirror = self.repos.mirror(task.repo, task.repo_source, instance_id=task.instance_id,
                                       commit=task.base_commit)
        except RepoError:
            mirror = None
        return pretend_version_env(tree, mirror, task.base_commit, task.version)

    def service(self, name: str) -> Environment:
        """The built stand-in ``name`` (see services.py), built on first use (file-locked)."""
        spec = services.get(name)
        final = envs_root() / "services" / spec.key
        with locked(f"service-{spec.key}"):
            if not read_meta(final / "env.json").get("complete") and not fetched("service", spec.key, self.source):
                recipe = EnvRecipe(python=spec.python, packages=list(spec.packages), notes=[f"stand-in {name}"])
                final.parent.mkdir(parents=True, exist_ok=True)
                self._build_venv(recipe, spec.key, final, f"stand-in {name}", tree=None, base_commit=None,
                                 epilogue=f"VENV={VENV}\n" + spec.setup, meta={"service": name})
        announce("service", spec.key, self.source)
        meta = read_meta(final / "env.json")
        return Environment(spec.key, final, EnvRecipe.model_validate(meta["recipe"]), find_interpreter(meta["python"]))

    def _build_instance(self, task: Task, env: Environment, tree: Path, key: str, final: Path,
                        build_env: dict[str, str], fills: list[submodule_fill.Fill] | None = None) -> None:
        where = f"instance {task.instance_id} (env {env.key}, commit {task.base_commit[:12]})"
        filled = submodule_fill.prepare(fills or [], tree, self.repos, env.recipe.python)
        notes = [p.note for p in filled]
        for note in notes:
            log.info("%s: %s", where, note)
        staging = final.parent / f".{key}.building"
        build = StagedBuild(staging, final, env.path / "logs" / f"{key}.log", where)
        uv = uv_binary()
        mounts = {"/testbed": Layers([tree], upper=staging / "testbed"),
                  VENV: Layers([env.venv], upper=staging / "venv"), **tool_mounts(uv), **submodule_fill.mounts(filled)}
        script = (scripts.instance_stage_script(env.recipe, venv=VENV, uv=sandbox_uv(uv), extra_env=build_env,
                                                prepare=submodule_fill.script_lines(filled)) + "\n"
                  + instance_epilogue(env.recipe))
        build.run(mounts, script, "install", base_commit=task.base_commit,
                  ro_paths=_ro_paths(env.interpreter), timeout=self.timeout)
        build.publish("meta.json", {"key": key, "base_commit": task.base_commit, "env": env.key,
                                    **({"notes": notes} if notes else {})})


class StagedBuild:
    """Build into ``staging``, publish to ``final`` by one rename; on any failure leave nothing behind
    but the log (kept at ``log_path``, outside the staging directory, and named in the error)."""

    def __init__(self, staging: Path, final: Path, log_path: Path, where: str):
        self.staging, self.final, self.log_path, self.where = staging, final, log_path, where
        remove_tree(staging)
        remove_tree(final)
        staging.mkdir(parents=True)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.write_text("")
        self.started = time.monotonic()

    def run(self, mounts: dict, script: str, what: str, *, base_commit: str | None, ro_paths: list[str],
            timeout: float, workdir: str = "/testbed") -> None:
        caches = _caches()
        mounts = {**mounts, **{f"/sweworld/cache/{name}": Dir(path, writable=True) for name, path in caches.items()}}
        try:
            with Sandbox(mounts, config=build_config(timeout), base_commit=base_commit, ro_paths=ro_paths,
                         label=self.staging.name, workdir=workdir) as sandbox:
                _run_script(sandbox, script, self.log_path, what, self.where, timeout)
        except SandboxError as exc:
            remove_tree(self.staging)
            raise EnvBuildError(f"the {what} sandbox failed: {exc.message}", where=self.where,
                                log_path=str(self.log_path), hint=exc.hint) from exc
        except BaseException:
            remove_tree(self.staging)
            raise

    def publish(self, meta_name: str, meta: dict) -> None:
        for work in self.staging.glob(".*.work"):
            remove_tree(work)
        meta = {**meta, "complete": True, "log": str(self.log_path),
                "seconds": round(time.monotonic() - self.started, 2),
                "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        (self.staging / meta_name).write_text(json.dumps(meta, indent=2))
        os.replace(self.staging, self.final)
        for part in ("venv", "testbed"):  # the layer's trees; its metadata and logs stay its own
            if (self.final / part).is_dir():
                cas.share(self.final / part, self.where)
