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

``make_backend`` is the one road to a backend: it takes a ``Backend`` (returned as it is), a name
(built with its constructor's keywords), a mapping (``{"kind": NAME, ...}``, validated by that
backend's ``Config``) or a config (``sweworld.core.config.BackendConfig``, built by its class's
``from_config``). Every name is looked up in ``BACKENDS`` (``sweworld.core.config.BACKENDS``: dotted paths,
nothing heavy imported before it is asked for; entry point group ``sweworld.backends``), so a backend
a package registers is named, configured and built as the built-ins are. ``shared(config)`` is the one
process cache: one backend per distinct configuration, for seams whose samples must share a builder.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

from sweworld.core.config.backend import BACKENDS
from sweworld.core.protocols import Backend

if TYPE_CHECKING:
    from sweworld.core.config import Timeouts


def make_backend(config: Any, /, *, timeouts: Timeouts | None = None, builder: Any = None, **options: Any) -> Backend:
    """The backend ``config`` names (see the module docstring); ``timeouts``: its commands' and builds'
    limits; ``builder``: an ``EnvBuilder`` to share. A name with options the backend does not take, or
    a wrong config, is one ``ConfigError``; anything else is a ``TypeError``."""
    from pydantic import BaseModel, ValidationError

    from sweworld.core.config.backend import backend_config
    from sweworld.core.errors import ConfigError
    if isinstance(config, Backend):
        return config
    if isinstance(config, str):
        if builder is not None:
            options["builder"] = builder
        try:
            return BACKENDS.create(config, **options)
        except (TypeError, ValidationError) as exc:  # a keyword the backend does not take, a wrong world
            raise ConfigError(f"the {config} backend cannot be built from {sorted(options)}: {exc}",
                              where=f"backend {config!r}",
                              hint="pass its constructor's keywords (sweworld.backends.BACKENDS), or a "
                              "sweworld.core.config.BackendConfig") from None
    if isinstance(config, dict):
        config = backend_config(config)
    if isinstance(config, BaseModel) and isinstance(getattr(config, "kind", None), str):
        from sweworld.backends.build import from_config
        return from_config(config, timeouts=timeouts, builder=builder)
    raise TypeError(f"a backend must be a sweworld.backends.Backend (RealBackend(...), a sim backend...), a "
                    f"sweworld.core.config.BackendConfig, a mapping with a kind, or a backend name, got {type(config).__name__}")


_SHARED: dict[str, Backend] = {}
_SHARED_LOCK = threading.Lock()


def shared(config: Any) -> Backend:
    """The backend of ``config`` (a config or a mapping), built once per distinct configuration in this
    process: concurrent samples of a seam share one environment builder."""
    from pydantic import BaseModel
    if not isinstance(config, BaseModel):
        from sweworld.core.config.backend import backend_config
        config = backend_config(dict(config))
    key = json.dumps(config.model_dump(mode="json"), sort_keys=True)
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = make_backend(config)
        return _SHARED[key]


__all__ = ["BACKENDS", "Backend", "make_backend", "shared"]
