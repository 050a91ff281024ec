"""Container image names of the datasets, built and parsed in one place.

SWE-bench publishes one image per instance, ``[registry/]swebench/sweb.eval.<arch>.<id>[:tag]``,
where the ``__`` of the id is written ``_1776_`` (Docker Hub's repository names refuse ``__``);
Epoch's registry writes ``swe-bench.eval``. SWE-rebench names its images the same way under
``swerebench/``, with the id in lower case. A row of another dataset names its image in
``docker_image`` or ``image_name``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sweworld.core.types import Task

SWEBENCH_PREFIX = "swebench/sweb.eval.x86_64."
REBENCH_PREFIX = "swerebench/sweb.eval.x86_64."
ROW_FIELDS = ("docker_image", "image_name")
"""The fields of a row that name its image."""

_IMAGE = re.compile(r"^(?:.*/)?(?:sweb|swe-bench)\.eval\.(?:x86_64|arm64|aarch64)\.(?P<id>[^:@/]+)(?:[:@].*)?$")


def swebench_image(instance_id: str, tag: str = "latest") -> str:
    """The image SWE-bench publishes for ``instance_id``."""
    return f"{SWEBENCH_PREFIX}{instance_id.replace('__', '_1776_')}:{tag}".lower()


def rebench_image(instance_id: str) -> str:
    """The image SWE-rebench names for an instance (``__`` written ``_1776_``, lower case)."""
    return REBENCH_PREFIX + instance_id.lower().replace("__", "_1776_")


def instance_of_image(image: str) -> str | None:
    """The instance id a SWE-bench-style image name stands for, or None when ``image`` is no such name
    (``swebench/sweb.eval.x86_64.django_1776_django-11099:latest`` -> ``django__django-11099``)."""
    match = _IMAGE.match(image.strip())
    if match is None:
        return None
    return match["id"].replace("_1776_", "__")


def image_key(image: str) -> str:
    """An image name without its registry host, tag or digest, lowercased: the last path component
    (``docker.io/swerebench/x:latest`` and ``swerebench/x`` have the same key)."""
    name = image.strip().split("@")[0]
    last = name.rsplit("/", 1)[-1]
    return last.split(":", 1)[0].lower()


def images_of_row(extra: dict[str, Any]) -> list[str]:
    """The image names a row gives (its ``docker_image`` / ``image_name``)."""
    return [extra[field] for field in ROW_FIELDS if isinstance(extra.get(field), str) and extra[field]]


def image_task(image: str) -> Task:
    """A task that is only an image (a Harbor task's ``FROM`` that no dataset row names): its id the
    image's key, its repository the image's directory, its base the tree's ``HEAD``; graded by its own
    tests (Harbor's ``tests/test.sh``), as it carries no listed tests."""
    from sweworld.core.types import Task
    key = image_key(image)
    return Task(instance_id=key, repo=key, base_commit="HEAD", problem_statement="", docker_image=image)
