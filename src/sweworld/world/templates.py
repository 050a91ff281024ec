"""Prompt templates of the world models: one jinja2 file per (style, kind), shipped with the package.

``prompts/<style>/<kind>.j2`` (kind ``swt`` or ``swr``) defines two blocks, ``system`` and ``user``;
``render`` fills them from a context (a ``SWTContext``/``SWRContext`` or its ``model_dump()``) with
``StrictUndefined`` (a missing variable is an error, never an empty string) and returns the chat
messages. Inference and training rows both call ``render``: the same text by construction.

Filters available to templates: ``fence(text, lang)`` wraps text in a code fence longer than any
backtick run inside it; ``json`` dumps a value as indented JSON (no HTML escaping).
"""

from __future__ import annotations

import json
import re
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import jinja2
from pydantic import BaseModel

from sweworld.core.errors import WorldError

PROMPTS = Path(__file__).parent / "prompts"
KINDS = ("swt", "swr")
ROLES = ("system", "user")
_TICKS = re.compile(r"`{3,}")


def _fence(text: str, lang: str = "") -> str:
    longest = max((len(m.group(0)) for m in _TICKS.finditer(text)), default=2)
    ticks = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{ticks}{lang}\n{body}{ticks}"


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(PROMPTS)), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, autoescape=False)
    env.filters["fence"] = _fence
    env.filters["json"] = _json
    return env


def styles() -> list[str]:
    """The prompt styles shipped (directories of ``prompts/`` holding every kind)."""
    return sorted(d.name for d in PROMPTS.iterdir()
                  if d.is_dir() and all((d / f"{kind}.j2").is_file() for kind in KINDS))


@cache
def _template(style: str, kind: str) -> jinja2.Template:
    if kind not in KINDS:
        raise WorldError(f"unknown world-model kind {kind!r}", hint=f"use one of {', '.join(KINDS)}")
    if style not in styles():
        raise WorldError(f"unknown prompt style {style!r}", hint=f"use one of {', '.join(styles())}")
    template = _environment().get_template(f"{style}/{kind}.j2")
    missing = [role for role in ROLES if role not in template.blocks]
    if missing:
        raise WorldError(f"prompts/{style}/{kind}.j2 defines no block {', '.join(missing)}")
    return template


def render(style: str, kind: str, context: BaseModel | dict[str, Any]) -> list[dict[str, str]]:
    """The chat messages (system, then user) of ``kind`` in ``style`` for ``context``."""
    template = _template(style, kind)
    values = context.model_dump() if isinstance(context, BaseModel) else dict(context)
    try:
        ctx = template.new_context(values)
        return [{"role": role, "content": "".join(template.blocks[role](ctx)).strip()} for role in ROLES]
    except jinja2.UndefinedError as exc:
        raise WorldError(f"prompts/{style}/{kind}.j2: {exc.message}",
                         hint="the context lacks a field the template uses; build it with sweworld.world.context") from exc
