"""The language's own registry when it answers, Debian's sources otherwise (Go and Rust).

At inference (``envs.lang.go.infer``, ``envs.lang.rust.infer``) sweworld asks the registry the build
would use, from this machine (environment builds share its network: the sandbox keeps the host's
network namespace, so what answers here answers there):

- Go: the first ``http(s)`` entry of ``GOPROXY`` (default ``https://proxy.golang.org``), for the
  ``@v/list`` of the first module ``go.mod`` requires; ``GOPROXY=off`` or ``direct`` only: not asked.
  When it answers, the env stage runs ``go mod download`` and ``go list -deps -test ./...`` with the
  user's ``GOPROXY``, ``GOSUMDB`` (default ``sum.golang.org``), ``GONOSUMDB``, ``GOPRIVATE``,
  ``GOFLAGS`` (passed through the build, ``envs.build.PASSTHROUGH``) into ``<venv>/go/path/pkg/mod``;
  tests run with ``GOPROXY=off`` over that cache.
- Rust: crates.io's sparse index (``https://index.crates.io/config.json``), or the registry that
  replaces crates.io in the user's cargo configuration (``$CARGO_HOME/config.toml``, default
  ``~/.cargo``: ``[source.crates-io] replace-with = "NAME"`` and ``[source.NAME] registry = "URL"``,
  the set-up a private mirror needs for cargo itself). When it answers, the env stage writes the same
  replacement into the environment's ``CARGO_HOME`` and runs ``cargo fetch``; tests build ``--offline``.

Any HTTP answer counts (a 404 is a registry that answers); a refused connection, an unknown host or
no answer in :data:`PROBE_TIMEOUT` seconds is Debian's sources, as before. ``SWEWORLD_DEPENDENCIES``
(``auto``, ``registry``, ``debian``) forces one. The choice is in the row's notes, its
``install_config.dependencies``, the build log (an ``echo`` of the env stage) and env.json.
"""

from __future__ import annotations

import os
import re
import shlex
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from sweworld.core.errors import EnvBuildError

GO_PROXY = "https://proxy.golang.org"
CRATES_IO = "sparse+https://index.crates.io/"
PROBE_TIMEOUT = 10.0
CHOICES = ("auto", "registry", "debian")


@dataclass(frozen=True)
class Probe:
    """A registry asked: ``url`` (credentials left out), whether it ``answered``, and ``why`` not."""

    url: str
    answered: bool
    why: str = ""

    def note(self, what: str) -> str:
        return (f"dependencies: {what} from {self.url} (it answered at inference)" if self.answered else
                f"dependencies: {self.url} did not answer ({self.why}): Debian's sources")


def choice(environ: Mapping[str, str] | None = None) -> str:
    chosen = (environ if environ is not None else os.environ).get("SWEWORLD_DEPENDENCIES") or "auto"
    if chosen not in CHOICES:
        raise EnvBuildError(f"SWEWORLD_DEPENDENCIES={chosen}: not one of {', '.join(CHOICES)}",
                            hint="unset it (the registry when it answers, else Debian's sources) or pick one")
    return chosen


def shown(url: str) -> str:
    """``url`` without its user and password."""
    parts = urllib.parse.urlsplit(url)
    return parts._replace(netloc=parts.hostname + (f":{parts.port}" if parts.port else "")).geturl() \
        if parts.hostname else url


def ask(url: str, timeout: float = PROBE_TIMEOUT) -> Probe:
    """Whether ``url`` answers over HTTP (any status)."""
    request = urllib.request.Request(url, headers={"User-Agent": "sweworld (registry probe)"})
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            return Probe(shown(url), True)
    except urllib.error.HTTPError:
        return Probe(shown(url), True)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return Probe(shown(url), False, str(reason) or type(exc).__name__)


def _decide(url: str | None, name: str, environ: Mapping[str, str] | None) -> Probe | None:
    """The registry ``name`` asked at ``url``, as ``SWEWORLD_DEPENDENCIES`` has it (None: Debian's
    sources, not asked)."""
    chosen = choice(environ)
    if chosen == "debian" or url is None:
        return None
    if chosen == "registry":
        return Probe(shown(name), True)
    got = ask(url)
    return Probe(shown(name), got.answered, got.why)


# Go ---------------------------------------------------------------------------------------------

def go_proxy(environ: Mapping[str, str] | None = None) -> str | None:
    """The first ``http(s)`` proxy of ``GOPROXY`` (None: ``off``, or ``direct`` only)."""
    value = (environ if environ is not None else os.environ).get("GOPROXY") or GO_PROXY
    for entry in re.split(r"[,|]", value):
        entry = entry.strip()
        if entry in ("off", "direct"):
            return None
        if entry.startswith(("http://", "https://")):
            return entry.rstrip("/")
    return None


def escape_module(module: str) -> str:
    """A module path as proxies spell it (``github.com/BurntSushi/toml`` -> ``github.com/!burnt!sushi/toml``)."""
    return re.sub(r"[A-Z]", lambda m: "!" + m.group(0).lower(), module)


def go_probe(module: str, environ: Mapping[str, str] | None = None) -> Probe | None:
    """The Go proxy asked for ``module``'s versions (None: Debian's sources, the proxy not asked)."""
    proxy = go_proxy(environ)
    return _decide(f"{proxy}/{escape_module(module)}/@v/list" if proxy else None, proxy or "", environ)


GO_DOWNLOAD = [
    f'export GOPROXY="${{GOPROXY:-{GO_PROXY}}}" GOSUMDB="${{GOSUMDB:-sum.golang.org}}"',
    'GOFLAGS="-mod=mod -modcacherw ${GOFLAGS:-}" go mod download',
    'GOFLAGS="-mod=mod -modcacherw ${GOFLAGS:-}" go list -deps -test ./... >/dev/null',
    "unset GOPROXY GOSUMDB",
]
"""Env-stage lines (after the ``go`` wrapper): the modules into ``GOMODCACHE`` (``<venv>/go/path/pkg/mod``),
writable (``-modcacherw``: a rebuild removes them), with the user's proxy and checksum settings."""


def go_lines(probe: Probe) -> list[str]:
    return [echo(f"sweworld: Go modules from the proxy {probe.url} (it answered at inference)"), *GO_DOWNLOAD]


# Rust -------------------------------------------------------------------------------------------

def _cargo_config(environ: Mapping[str, str]) -> dict:
    import tomllib

    home = Path(environ.get("CARGO_HOME") or Path.home() / ".cargo")
    for name in ("config.toml", "config"):
        if (home / name).is_file():
            try:
                return tomllib.loads((home / name).read_text(encoding="utf-8", errors="replace"))
            except tomllib.TOMLDecodeError:
                return {}
    return {}


def cargo_registry(environ: Mapping[str, str] | None = None) -> tuple[str | None, str]:
    """(the name of the source replacing crates.io in the user's cargo configuration or None, its
    registry URL: crates.io's sparse index when none)."""
    sources = _cargo_config(environ if environ is not None else os.environ).get("source") or {}
    name = (sources.get("crates-io") or {}).get("replace-with")
    registry = (sources.get(name) or {}).get("registry") if isinstance(name, str) else None
    return (name, registry) if isinstance(registry, str) else (None, CRATES_IO)


def index_url(registry: str) -> str:
    """What to ask of a registry: a sparse index's ``config.json``, a git index's URL."""
    return registry.removeprefix("sparse+").rstrip("/") + "/config.json" if registry.startswith("sparse+") \
        else registry


def cargo_probe(environ: Mapping[str, str] | None = None) -> Probe | None:
    _name, registry = cargo_registry(environ)
    return _decide(index_url(registry), registry, environ)


def cargo_config(environ: Mapping[str, str] | None = None) -> str:
    """The environment's ``config.toml``: the user's replacement of crates.io, or crates.io sparse."""
    name, registry = cargo_registry(environ)
    if name is None:
        return '[registries.crates-io]\nprotocol = "sparse"\n'
    return f'[source.crates-io]\nreplace-with = "{name}"\n\n[source.{name}]\nregistry = "{registry}"\n'


def echo(text: str) -> str:
    return f"echo {shlex.quote(text)}"
