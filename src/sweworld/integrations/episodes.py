"""What every framework seam shares: the task a framework names, the backend its config asks for.

A framework names the task in its own place (inspect's sample metadata or sandbox config, a SWE-ReX
path prefix, an OpenHands or Harbor task's image name); each seam turns that into an
``EpisodeSpec`` and asks this module for the task and the backend:

- ``load_task(instance_id, dataset)``: one instance of a shipped dataset, a file, a ``save_to_disk``
  directory or a hub name (``DatasetError`` naming the dataset and what to do when it is not there);
Where a framework's config has no room for them, ``$SWEWORLD_DATASET``, ``$SWEWORLD_REPOS_DIR`` and
``$SWEWORLD_BACKEND`` give the dataset, the clones and the backend.

- ``backend_for(spec)``: the backend of ``spec.backend`` (``real`` by default, ``sim`` or ``hybrid``
  with the embedded world when no world is configured), one per distinct configuration in the
  process, so that concurrent samples share one environment builder;
- ``instance_of_image(name)``: the instance id a SWE-bench-style image name stands for
  (``swebench/sweb.eval.x86_64.django_1776_django-11099:latest`` -> ``django__django-11099``), and
  SWE-rebench's (``swerebench/sweb.eval.x86_64.<owner>_1776_<repo>-<n>[:tag]``, the row's
  ``docker_image`` / ``image_name``; SWE-rebench lowercases the id, so ``task_of`` matches it against
  the dataset's rows: their ``docker_image`` / ``image_name``, else their id in any case).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sweworld.core.errors import ConfigError, DatasetError
from sweworld.core.images import instance_of_image
from sweworld.seam.tasks import TaskIndex, index_of, source_of

if TYPE_CHECKING:
    from sweworld.core.protocols import Backend
    from sweworld.core.types import Task


class EpisodeSpec(BaseModel):
    """Which episode a framework asks for: the instance, where it comes from, the backend."""

    model_config = ConfigDict(extra="forbid")

    instance_id: str = Field(default="", description="The task to open an episode of.")
    dataset: str = Field(default_factory=lambda: os.environ.get("SWEWORLD_DATASET") or "default", description=(
        "A shipped dataset's name, a file, a save_to_disk directory or a hub name (default: $SWEWORLD_DATASET, "
        "else the default dataset)."))
    split: str | None = Field(default=None, description="Split of a hub or save_to_disk dataset.")
    repos_dir: str | None = Field(default_factory=lambda: os.environ.get("SWEWORLD_REPOS_DIR") or None, description=(
        "Directory of existing clones (DIR/owner__name; default: $SWEWORLD_REPOS_DIR)."))
    backend: str = Field(
        default_factory=lambda: os.environ.get("SWEWORLD_BACKEND") or "real",
        description="Where commands run: real, sim (predicted), hybrid, or any backend registered in "
        "sweworld.core.config.BACKENDS (default: $SWEWORLD_BACKEND, else real).")
    backend_options: dict[str, Any] = Field(default_factory=dict, description=(
        "Further fields of the backend's config (sweworld.core.config.BackendConfig): world (kind, urls, model, "
        "traces...), audit_rate, route_below, network..."))
    image: str | None = Field(default=None, description="A SWE-bench-style image name standing for the "
                              "instance (used when instance_id is empty).")

    @field_validator("backend")
    @classmethod
    def _registered(cls, value: str) -> str:
        from sweworld.core.config import BACKENDS
        if value not in BACKENDS:
            raise ValueError(f"unknown backend {value!r}: one of {', '.join(BACKENDS.names())}")
        return value


def spec_of(data: dict[str, Any], *, where: str) -> EpisodeSpec:
    """``EpisodeSpec`` of a framework's raw config ``data`` (unknown or wrong keys: one ``ConfigError``
    naming ``where`` and the fields)."""
    try:
        return EpisodeSpec.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_wrong(exc), where=where, hint="fields: " + ", ".join(EpisodeSpec.model_fields)) from None


def _wrong(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'config'}: {e['msg']}" for e in exc.errors())


def instance_id_of(spec: EpisodeSpec, *, where: str) -> str:
    """``spec.instance_id``, else the instance ``spec.image`` names; ``DatasetError`` naming ``where``
    when neither says which task."""
    if spec.instance_id:
        return spec.instance_id
    if spec.image:
        found = instance_of_image(spec.image)
        if found:
            return found
        raise DatasetError(f"the image {spec.image!r} names no SWE-bench instance", where=where,
                           hint="name the instance (instance_id), or use an image named like "
                           "swebench/sweb.eval.x86_64.<owner>_1776_<repo>-<number>")
    raise DatasetError("no instance named", where=where,
                       hint="give an instance_id (and a dataset) for the episode")


def load_tasks_of(dataset: str, split: str | None = None, instance_ids: list[str] | None = None) -> list[Task]:
    """The tasks of ``dataset`` (a shipped name, a file, a directory or a hub name), or those named."""
    from sweworld.tasks import load_tasks
    return list(load_tasks(source_of(dataset), split=split, instance_ids=instance_ids))


def load_task(instance_id: str, dataset: str = "default", split: str | None = None) -> Task:
    """The task ``instance_id`` of ``dataset`` (from the process's index of it: ``seam.index_of``)."""
    if not instance_id:
        raise DatasetError("no instance_id given", where=f"dataset {dataset}",
                           hint="name the instance to open an episode of")
    return index_of(dataset, split).find(instance_id, hint="check the id (ids are case-sensitive)")


def task_of_image(image: str, tasks: list[Task]) -> Task | None:
    """The task of ``tasks`` that ``image`` stands for (``seam.TaskIndex.of_image``); None when none is."""
    return TaskIndex(tasks).of_image(image)


def task_of(spec: EpisodeSpec, *, where: str) -> Task:
    """The task ``spec`` names (by id or image) in its dataset; an image whose id is not in the
    dataset as it is written (SWE-rebench's lowercased ids) is looked up among its rows. An image
    named like no SWE-bench instance is looked up among the rows' images, else it is a task of its own
    (``core.images.image_task``: the image is the environment, its ``tests/test.sh`` grades)."""
    if not spec.instance_id and spec.image and not instance_of_image(spec.image):
        from sweworld.core.images import image_task
        try:
            return index_of(spec.dataset, spec.split).find(None, image=spec.image)
        except DatasetError:
            return image_task(spec.image)
    instance_id = instance_id_of(spec, where=where)
    return index_of(spec.dataset, spec.split).find(instance_id, image=None if spec.instance_id else spec.image,
                                                   hint="check the id (ids are case-sensitive)")


def backend_config(spec: EpisodeSpec) -> Any:
    """The config of ``spec``'s backend (its registered class's ``Config``; a world knows the spec's
    dataset); a wrong option is one ``ConfigError`` naming it."""
    from sweworld.core.config import config_class
    model = config_class(spec.backend)
    data: dict[str, Any] = {**spec.backend_options, "kind": spec.backend}
    if spec.repos_dir is not None and "repos_dir" in model.model_fields:
        data.setdefault("repos_dir", spec.repos_dir)
    if "world" in model.model_fields:
        world = dict(data.get("world") or {})
        world.setdefault("dataset", spec.dataset)
        data["world"] = world
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"the {spec.backend} backend's options are wrong: {_wrong(exc)}", where="backend_options",
                          hint=f"see {model.__module__}.{model.__name__} for its fields") from None


#: The writable directories every episode has by default (``SandboxConfig.scratch_dirs``).
DEFAULT_SCRATCH_DIRS = ("/var/tmp",)


def with_scratch_dirs(options: dict[str, Any], dirs: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """``backend_options`` asking the sandbox for ``dirs`` as empty writable directories of each episode
    (beside the default ones), unless the options choose their own ``sandbox.scratch_dirs``: what a
    framework writes outside ``/testbed`` and ``/tmp`` (Harbor's ``/logs``, SWE-agent's ``/root``)."""
    sandbox = dict(options.get("sandbox") or {})
    if "scratch_dirs" in sandbox:
        return options
    return {**options, "sandbox": {**sandbox, "scratch_dirs": [*DEFAULT_SCRATCH_DIRS, *dirs]}}


def backend_for(spec: EpisodeSpec) -> Backend:
    """The backend ``spec`` asks for, built once per distinct configuration in this process
    (``backends.shared``)."""
    from sweworld.backends import shared
    return shared(backend_config(spec))


def plain_config(value: Any) -> Any:
    """A trainer's config value as plain Python: OmegaConf's ``DictConfig``/``ListConfig`` (SkyRL's
    ``env_config``, verl's hydra options) become dicts and lists; anything else is returned as it is."""
    try:
        from omegaconf import DictConfig, ListConfig, OmegaConf
    except ImportError:  # no OmegaConf installed: nothing can be one
        return value
    if isinstance(value, (DictConfig, ListConfig)):
        return OmegaConf.to_container(value, resolve=True)
    return value


def backend_spec(backend: str, *, backend_options: dict[str, Any] | None = None, repos_dir: str | None = None,
                 dataset: str | None = None, where: str = "backend") -> EpisodeSpec:
    """The ``EpisodeSpec`` of a trainer's backend name and options (``dataset``: the tasks a sim or hybrid
    world reads its baselines from); wrong keys are one ``ConfigError`` naming ``where``."""
    data: dict[str, Any] = {"backend": backend, "backend_options": dict(plain_config(backend_options) or {})}
    data.update({k: v for k, v in (("repos_dir", repos_dir), ("dataset", dataset)) if v})
    return spec_of(data, where=where)


def resolve_backend(backend: Any = "real", *, backend_options: dict[str, Any] | None = None,
                    repos_dir: str | None = None, dataset: str | None = None, where: str = "backend") -> Backend:
    """A trainer's ``backend``: a ``Backend`` or a ``BackendConfig`` as it is (through ``make_backend``), a
    name (``real``, ``sim``, ``hybrid``) with ``backend_options`` through ``backend_for`` (one per
    configuration in the process; sim and hybrid embedded unless told otherwise, their world reading
    ``dataset``'s tasks); wrong options are one ``ConfigError`` naming ``where``."""
    from sweworld.backends import make_backend
    if not isinstance(backend, str):
        return make_backend(backend)
    return backend_for(backend_spec(backend, backend_options=backend_options, repos_dir=repos_dir, dataset=dataset,
                                    where=where))


__all__ = [
    "EpisodeSpec",
    "backend_config",
    "backend_for",
    "backend_spec",
    "instance_id_of",
    "instance_of_image",
    "load_task",
    "load_tasks_of",
    "plain_config",
    "resolve_backend",
    "source_of",
    "spec_of",
    "task_of",
    "task_of_image",
    "with_scratch_dirs",
]
