"""The ``train`` extra, checked once before training: a missing package is one clear error."""

from __future__ import annotations

import importlib

from sweworld.core.errors import ConfigError

TRAIN = ("torch", "transformers", "trl", "accelerate", "datasets")
INSTALL = "pip install 'sweworld[train]'"


def require(*, lora: bool = False) -> None:
    """Raise ``ConfigError`` naming the first missing package of the extra (``peft`` with ``lora``)."""
    for name in (*TRAIN, "peft") if lora else TRAIN:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise ConfigError(f"training needs the 'train' extra, and {name} cannot be imported ({exc})",
                              where="sweworld train", hint=INSTALL) from None
