"""How skopeo is configured, the way the containers tools are: ``registries.conf`` for mirrors, insecure
(plain HTTP) registries and search, a credentials file for logins, a signature policy.

Each is passed to skopeo as a flag, so that the result does not depend on which variables a given
skopeo version reads (Debian 12's skopeo 1.9 ignores ``$CONTAINERS_REGISTRIES_CONF``):

- ``$CONTAINERS_REGISTRIES_CONF``: ``--registries-conf FILE`` (else skopeo's own default,
  ``/etc/containers/registries.conf`` and ``~/.config/containers/registries.conf``);
- ``$REGISTRY_AUTH_FILE``, else ``~/.docker/config.json`` when present: ``--authfile FILE``;
- the policy: ``/etc/containers/policy.json`` when present (skopeo's own), else one of the store that
  accepts any image (layers are still checked against their digests).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from sweworld.core.errors import ImageError

SYSTEM_POLICY = Path("/etc/containers/policy.json")


def _named_file(variable: str) -> Path | None:
    value = os.environ.get(variable)
    if not value:
        return None
    path = Path(value).expanduser()
    if not path.is_file():
        raise ImageError(f"${variable} names {value}, which is not a file", where=variable,
                         hint=f"point {variable} at an existing file, or unset it")
    return path


def registries_conf() -> Path | None:
    return _named_file("CONTAINERS_REGISTRIES_CONF")


def auth_file() -> Path | None:
    named = _named_file("REGISTRY_AUTH_FILE")
    if named is not None:
        return named
    docker = Path.home() / ".docker" / "config.json"
    return docker if docker.is_file() else None


def policy(store: Path) -> Path:
    if SYSTEM_POLICY.is_file():
        return SYSTEM_POLICY
    path = store / "policy.json"
    if not path.is_file():
        store.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps({"default": [{"type": "insecureAcceptAnything"}]}))
        os.replace(tmp, path)
    return path


def global_args(store: Path) -> list[str]:
    """skopeo's options before the command: the registries file and the policy."""
    conf = registries_conf()
    return [*(["--registries-conf", str(conf)] if conf else []), "--policy", str(policy(store))]


def auth_args() -> list[str]:
    found = auth_file()
    return ["--authfile", str(found)] if found else []
