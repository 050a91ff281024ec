"""A container image as the environment of a task: which tasks run on one, and their episodes.

The environment source of a run (``--env-source``):

- ``recipe``: build the environment from a recipe (``envs.build``), as before images;
- ``image``: the image the row names (``docker_image``, ``image_name``), else SWE-bench's image of
  the instance id (``core.images.swebench_image``);
- ``auto`` (the default): a row of another language that names no image but says how its environment
  is installed (``install_config.install``, a mined row: ``envs.lang``) is built from its recipe; else
  the image when the row is not Python (its ``language``, or a swebench spec
  of another language: SWE-bench Multilingual's rows name no image, so SWE-bench's name is used),
  or when the row names an image and no recipe of its own applies (no install fields, no
  ``install_config``, no swebench or SWE-Gym spec: R2E-Gym's and SWE-smith's rows); else the recipe.

An image episode is the image's layers under a private upper layer at ``/`` (``sandbox.Sandbox``),
with the image's ``Env`` and the offline settings of every episode, in the repository's directory:
the row's ``workdir``, else ``/testbed`` where the image has one, else ``/<repository name>`` (SWE-
rebench V2's images), else the image's ``WorkingDir``. Nothing is installed: the recipe
(``recipes.image``) only says how the tests run. The image is pulled on first use (``oci.pull``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from sweworld.core import images
from sweworld.core.errors import SWEWorldError
from sweworld.envs.lang import builds
from sweworld.envs.recipes.image import CONDA_ACTIVATE, PYTHON_LANGUAGES, image_recipe
from sweworld.envs.scripts import OFFLINE_ENV

if TYPE_CHECKING:
    from sweworld.core.types import Task
    from sweworld.envs.recipes.model import EnvRecipe
    from sweworld.oci.store import ImageRecord
    from sweworld.sandbox import Sandbox, SandboxConfig

EnvSourceName = Literal["auto", "recipe", "image"]
ENV_SOURCES: tuple[str, ...] = ("auto", "recipe", "image")


def _has_recipe(task: Task) -> bool:
    """Whether a recipe source other than the default (read from the tree) answers for ``task``."""
    from sweworld.envs.recipes.resolve import SOURCES
    for name, source in SOURCES:
        if name == "default":
            continue
        try:
            if source(task, None) is not None:
                return True
        except SWEWorldError:
            continue
    return False


def _spec_language(task: Task) -> str | None:
    """"python" or "other" for a repository and version swebench's specs know, else None."""
    from swebench.harness.constants import MAP_REPO_VERSION_TO_SPECS
    spec = MAP_REPO_VERSION_TO_SPECS.get(task.repo, {}).get(str(task.version or ""))
    if spec is None:
        return None
    return "python" if "python" in spec else "other"


def image_name(task: Task, source: str = "auto") -> str | None:
    """The image ``task`` runs on under the environment source ``source``; None: a recipe."""
    if source == "recipe":
        return None
    named = images.images_of_row(task.model_extra or {})
    if source == "image":
        return named[0] if named else images.swebench_image(task.instance_id)
    if named and (task.model_extra or {}).get("env_source") == "image":  # the row's family ships only images
        return named[0]
    if not named and builds(task):  # a mined row of another language: its install_config says how to build it
        return None
    language = str((task.model_extra or {}).get("language") or "").strip().lower()
    if language not in PYTHON_LANGUAGES or _spec_language(task) == "other":
        return named[0] if named else images.swebench_image(task.instance_id)
    if named and not _has_recipe(task):
        return named[0]
    return None


def _exists(record: ImageRecord, path: str) -> bool:
    """Whether some layer holds ``path`` (a cheap look: a later layer's whiteout is not looked for)."""
    rel = path.strip("/")
    return any((layer / rel).exists() for layer in record.layer_dirs())


def workdir_of(task: Task, record: ImageRecord) -> str:
    """The repository's directory in the image (see the module docstring)."""
    given = (task.model_extra or {}).get("workdir")
    if isinstance(given, str) and given.startswith("/"):
        return given
    if _exists(record, "/testbed"):
        return "/testbed"
    named = "/" + task.repo.rsplit("/", 1)[-1] if task.repo else ""
    if named and _exists(record, named):
        return named
    return record.workdir or "/"


@dataclass(frozen=True)
class ImageEnv:
    """A pulled image as a task's environment: its record, how its tests run, where its repository is."""

    name: str
    record: ImageRecord
    recipe: EnvRecipe
    workdir: str

    @property
    def describe(self) -> str:
        layers = len(self.record.layers)
        return (f"image {self.record.name} ({self.record.digest[:19]}, {layers} layer{'s' * (layers != 1)}), "
                f"repository at {self.workdir}")

    def tree(self) -> Path:
        """The repository's directory of the image as one read-only tree (``oci.tree``; nothing runs)."""
        from sweworld.oci.tree import tree
        return tree(self.record, self.workdir)


def image_env(task: Task, name: str, *, refresh: bool = False) -> ImageEnv:
    """``name`` pulled (once) as ``task``'s environment; ``ImageError`` names the image and the instance."""
    from sweworld.oci.pull import pull
    record = pull(name, instance=task.instance_id, refresh=refresh)
    recipe = image_recipe(task, conda=_exists(record, CONDA_ACTIVATE))
    return ImageEnv(name=name, record=record, recipe=recipe, workdir=workdir_of(task, record))


def task_image(task: Task, source: str = "auto") -> ImageEnv | None:
    """``task``'s image as its environment under ``source`` (pulled once), None when a recipe builds it."""
    name = image_name(task, source)
    return None if name is None else image_env(task, name)


def image_sandbox(env: ImageEnv, task: Task, config: SandboxConfig | None = None, *, label: str = "") -> Sandbox:
    """A fresh episode on ``env``: its layers under a private upper layer, its ``Env``, offline installs."""
    from sweworld.sandbox import Layers, Sandbox, SandboxConfig
    config = config or SandboxConfig()
    config = config.model_copy(update={"env": {**env.record.env, **OFFLINE_ENV, **config.env}})
    sandbox = Sandbox({"/": Layers(env.record.layer_dirs())}, config=config, base_commit=task.base_commit or None,
                      workdir=env.workdir, label=label or task.instance_id)
    bug = (task.model_extra or {}).get("bug_patch")
    if isinstance(bug, str) and bug.strip():
        try:
            _commit_bug(sandbox, bug, task.instance_id)
        except BaseException:
            sandbox.close()
            raise
    return sandbox


BUG_COMMIT = ("GIT_AUTHOR_NAME=sweworld GIT_AUTHOR_EMAIL=bug@sweworld GIT_COMMITTER_NAME=sweworld "
              "GIT_COMMITTER_EMAIL=bug@sweworld GIT_AUTHOR_DATE=2000-01-01T00:00:00Z "
              "GIT_COMMITTER_DATE=2000-01-01T00:00:00Z")


def _commit_bug(sandbox: Sandbox, bug: str, instance_id: str) -> None:
    """A SWE-smith row's bug (``bug_patch``) applied on the image's tree and committed, so that the
    agent's diff and the test files' reset start from the buggy tree, as SWE-smith's branch does."""
    from sweworld.core.errors import ImageError
    sandbox.write_file("/tmp/.sweworld-bug.patch", bug if bug.endswith("\n") else bug + "\n")
    done = sandbox.exec(f"git apply /tmp/.sweworld-bug.patch && git add -A && {BUG_COMMIT} git commit -qm "
                        "'SWE-smith bug' && rm -f /tmp/.sweworld-bug.patch", cwd=sandbox.workdir, timeout=120)
    if not done.ok:
        raise ImageError(f"the row's bug patch does not apply to the image's tree: {done.output[-1500:]}",
                         where=instance_id, hint="check that the row's image_name is the image of its repository "
                         "and commit (SWE-smith: swesmith.x86_64.<owner>_1776_<repo>.<commit>)")
