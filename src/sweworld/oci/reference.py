"""An image's name as a user gives it, read once: which transport, what the registry is asked for, and
the key the store files it under.

- ``NAME[:TAG|@DIGEST]``: a registry image, Docker's naming (``python:3.11`` is
  ``docker.io/library/python:3.11``, no tag is ``latest``); ``docker://NAME`` says it explicitly;
- ``oci:DIR[:TAG]``: a local OCI image layout;
- ``docker-archive:FILE``: a ``docker save`` tarball.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from sweworld.core.errors import ImageError

DEFAULT_REGISTRY = "docker.io"
_COMPONENT = re.compile(r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$")
_TAG = re.compile(r"^[\w][\w.-]{0,127}$")
_DIGEST = re.compile(r"^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-fA-F0-9]{32,}$")
_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class ImageRef:
    """``transport`` is ``docker``, ``oci`` or ``docker-archive``; ``name`` the full registry name
    (``docker.io/library/python:3.11``) or the local path with its tag."""

    transport: str
    name: str
    given: str

    @property
    def source(self) -> str:
        """What skopeo is given as the source."""
        return f"{self.transport}:{'//' if self.transport == 'docker' else ''}{self.name}"

    @property
    def registry(self) -> str | None:
        return self.name.split("/", 1)[0] if self.transport == "docker" else None

    @property
    def key(self) -> str:
        """A directory name for this image: readable, and unique by a digest of the full name."""
        readable = _KEY_UNSAFE.sub("_", self.name.rsplit("/", 1)[-1])[:80]
        return f"{readable}-{hashlib.sha256(self.source.encode()).hexdigest()[:12]}"


def _registry_name(text: str, given: str) -> str:
    name, _, digest = text.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = ""
    if ":" in last:
        name, tag = name.rsplit(":", 1)
    parts = name.split("/")
    if len(parts) == 1 or not ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = [DEFAULT_REGISTRY, *(["library"] if len(parts) == 1 else []), *parts]
    bad = [p for p in parts[1:] if not _COMPONENT.match(p)]
    if not parts[1:] or bad or (tag and not _TAG.match(tag)) or (digest and not _DIGEST.match(digest)):
        raise ImageError(f"{given!r} is not an image name", where=given,
                         hint="write it as Docker does: [REGISTRY/]REPOSITORY[:TAG][@sha256:DIGEST], lower case "
                         "(e.g. swebench/sweb.eval.x86_64.psf_1776_requests-863:latest), or oci:DIR:TAG, "
                         "docker-archive:FILE")
    full = "/".join(parts)
    if digest:
        return f"{full}{':' + tag if tag else ''}@{digest}"
    return f"{full}:{tag or 'latest'}"


def parse(text: str) -> ImageRef:
    """Read an image name (``ImageError`` naming it when it is none)."""
    given = text.strip()
    if given.startswith("oci:") or given.startswith("oci-archive:"):
        transport, rest = given.split(":", 1)
        if not rest:
            raise ImageError(f"{given!r} names no directory", where=given, hint="write oci:DIR[:TAG]")
        return ImageRef(transport, rest, given)
    if given.startswith("docker-archive:"):
        rest = given.split(":", 1)[1]
        if not rest:
            raise ImageError(f"{given!r} names no file", where=given, hint="write docker-archive:FILE")
        return ImageRef("docker-archive", rest, given)
    rest = given[len("docker://"):] if given.startswith("docker://") else given
    if not rest:
        raise ImageError("an empty image name", where="image", hint="give the image's name")
    return ImageRef("docker", _registry_name(rest, given), given)
