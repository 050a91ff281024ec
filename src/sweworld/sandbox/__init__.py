"""Real execution: isolated copy-on-write sandboxes (bubblewrap + overlayfs), no Docker."""

from sweworld.sandbox.config import SandboxConfig
from sweworld.sandbox.sandbox import Dir, Layers, Sandbox

__all__ = ["Dir", "Layers", "Sandbox", "SandboxConfig"]
