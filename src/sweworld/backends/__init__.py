"""Where episodes come from: the one seam between the entry points and execution.

A ``Backend`` prepares what tasks need, opens an episode of a task as an ``Executor`` and evaluates
a prediction into the harness's report type. Entry points (``sweworld eval``, ``rollout``, ``exec``,
``shell``, ``demo``, ``SWEEnv``, the mini-swe-agent adapter) receive a backend and never build
environments or open sandboxes themselves:

- ``real`` (``RealBackend``): built environments, isolated copy-on-write sandboxes, the harness;
- ``sim`` (``SimBackend``): the same copy-on-write workspace of the base tree, no environment;
  navigation and editing run for real, code execution is predicted by SWT and the tests by SWR;
- ``hybrid`` (``HybridBackend``): sim, with a fraction of steps and evaluations also run for real
  and the disagreements stored.

``make_backend(config)`` builds one from a ``sweworld.config.BackendConfig`` (``real``, ``sim`` or
``hybrid``, discriminated on ``kind``); ``make_backend(name, **options)`` builds one by name with its
constructor's keywords (``BACKENDS``, a ``sweworld.registry.Registry`` of dotted paths: nothing heavy
is imported before it is asked for).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sweworld.protocols import Backend
from sweworld.registry import Registry

if TYPE_CHECKING:
    from sweworld.config import BackendConfig, Timeouts

BACKENDS: Registry[Any] = Registry("backend", {
    "real": "sweworld.backends.real:RealBackend",
    "sim": "sweworld.backends.sim:SimBackend",
    "hybrid": "sweworld.backends.hybrid:HybridBackend",
}, group="sweworld.backends")


def make_backend(config: BackendConfig | Backend | str, /, *, timeouts: Timeouts | None = None,
                 builder: Any = None, **options: Any) -> Backend:
    """The backend ``config`` describes (``timeouts``: its commands' and builds' limits; ``builder``:
    an ``EnvBuilder`` to share), or the one registered as the name ``config``, built with ``options``
    (its constructor's keywords; ``ConfigError`` naming the known ones when there is none); a
    ``Backend`` itself is returned as it is, anything else is a ``TypeError``."""
    from sweworld.config import BACKEND_CONFIGS
    if isinstance(config, Backend):
        return config
    if not isinstance(config, (str, *BACKEND_CONFIGS.values())):
        raise TypeError(f"a backend must be a sweworld.backends.Backend (RealBackend(...), a sim backend...), a "
                        f"sweworld.config.BackendConfig or a backend name, got {type(config).__name__}")
    if isinstance(config, str):
        if builder is not None:
            options["builder"] = builder
        from pydantic import ValidationError

        from sweworld.errors import ConfigError
        try:
            return BACKENDS.create(config, **options)
        except (TypeError, ValidationError) as exc:  # a keyword the backend does not take, a wrong world
            raise ConfigError(f"the {config} backend cannot be built from {sorted(options)}: {exc}",
                              where=f"backend {config!r}",
                              hint="pass its constructor's keywords (sweworld.backends.BACKENDS), or a "
                              "sweworld.config.BackendConfig") from None
    from sweworld.backends.build import from_config
    return from_config(config, timeouts=timeouts, builder=builder)


__all__ = ["BACKENDS", "Backend", "make_backend"]
