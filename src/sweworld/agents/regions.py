"""What reactive scripted policies (``perturb``, ``explorer``) share: a script that sees each
observation, one random stream per sample, and reading and editing a region of a file through the
agent's own tools.

- :class:`PlanPolicy`: ``plan(task)`` is a generator that yields ``(tool, arguments, thought)`` and is
  sent the observation of each action. Its randomness is ``rng(purpose)``, a function of
  ``(seed, instance_id, sample, purpose)`` only, so a sample makes the same choices on a rerun.
- The sample index: the rollout runner binds each policy it makes to its ``(instance_id, sample)``
  (``bind``) before the episode, so a resumed run gives the missing samples the choices a full run
  gives them, whatever the order; ``reset`` refuses a task the binding does not name. An unbound
  policy counts the episodes of each instance it has seen (sample 0, 1, ...).
- :class:`Region`: consecutive lines of a file read with ``str_replace_editor view`` (a window
  around a hunk); :func:`view_region` reads one, :func:`edit_actions` turns new lines for it into
  ``str_replace`` calls (each anchored by enough context to be unique, widened when the tool says
  the text occurs more than once), :func:`enclosing_function` finds the function around a line.
"""

from __future__ import annotations

import ast
import difflib
import random
import re
from collections.abc import Generator
from dataclasses import dataclass

from sweworld import pyast
from sweworld.agents.policies import ScriptedPolicy, reply
from sweworld.core.errors import ModelError
from sweworld.core.types import Task
from sweworld.models.base import ModelReply

Action = tuple[str, dict, str]
Plan = Generator[Action, str, None]
BEFORE, AFTER, UP = 60, 20, 150
"""Lines viewed above the first and below the last changed line of a hunk; lines of a scroll up."""
_NUMBERED = re.compile(r"^ *(\d+)\t(.*)$")
_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)")
_CLASS = re.compile(r"^([ \t]*)class[ \t]+(\w+)")
_FAILED = "No replacement was performed"


class PlanPolicy(ScriptedPolicy):
    """A scripted policy whose script reacts to observations (see the module docstring)."""

    name = "plan"

    def __init__(self, seed: int = 0, workdir: str = "/testbed"):
        super().__init__()
        self.seed, self.workdir = seed, workdir
        self.binding: tuple[str, int] | None = None
        self.sample = 0
        self._episodes: dict[str, int] = {}
        self._plan: Plan | None = None
        self._task_id = ""

    def bind(self, instance_id: str, sample: int) -> PlanPolicy:
        self.binding = (instance_id, sample)
        return self

    def rng(self, purpose: str) -> random.Random:
        """The random stream of this sample for ``purpose`` (a string seed: stable across processes)."""
        return random.Random(f"{self.seed}:{self._task_id}:{self.sample}:{purpose}")

    def plan(self, task: Task) -> Plan:
        yield from self.actions(task)

    def reset(self, task: Task) -> None:
        if self.binding is not None:
            if self.binding[0] != task.instance_id:
                raise ModelError(f"policy {self.name} bound to {self.binding} was given {task.instance_id}",
                                 hint="bind each policy to the (instance, sample) it runs (run_rollouts does)")
            self.sample = self.binding[1]
        else:
            self.sample = self._episodes.get(task.instance_id, 0)
            self._episodes[task.instance_id] = self.sample + 1
        self._task_id = task.instance_id
        self._plan = self.plan(task)
        self._started = False

    def act(self, messages: list[dict], tools: list[dict] | None) -> ModelReply:
        last = messages[-1] if messages else {}
        observation = str(last.get("content") or "") if last.get("role") in ("tool", "user") else ""
        started, self._started = self._started, True
        try:
            action = (self._plan.send(observation if started else None) if self._plan is not None
                      else ("submit", {}, "done"))
        except StopIteration:
            action = ("submit", {}, "done")
        return reply(*action)


@dataclass
class Region:
    """Lines ``start``.. of ``path`` (absolute), without their newlines, as read."""

    path: str
    start: int
    lines: list[str]

    def index(self, lineno: int) -> int:
        return lineno - self.start


def parse_view(observation: str) -> dict[int, str]:
    """Line number -> text from a ``cat -n`` observation; lines next to a cut marker are dropped."""
    rows = observation.split("\n")
    found: dict[int, str] = {}
    for i, row in enumerate(rows):
        match = _NUMBERED.match(row)
        near = rows[max(0, i - 1):i] + rows[i + 1:i + 2]
        if match and not any(r.startswith("[... ") for r in near):
            found[int(match[1])] = match[2]
    return found


def _run(seen: dict[int, str], first: int, last: int) -> tuple[int, int] | None:
    """The consecutive line numbers in ``seen`` around ``first..last`` (None if any is missing)."""
    if any(n not in seen for n in range(first, last + 1)):
        return None
    while first - 1 in seen:
        first -= 1
    while last + 1 in seen:
        last += 1
    return first, last


def view_region(path: str, first: int, last: int, thought: str = "") -> Generator[Action, str, Region | None]:
    """View lines ``first - BEFORE .. last + AFTER`` of ``path``; the consecutive lines read around
    ``first..last`` (None when those are not all there: a cut observation, a shorter file)."""
    observation = yield ("str_replace_editor", {"command": "view", "path": path,
                                                "view_range": [max(1, first - BEFORE), last + AFTER]},
                         thought or f"look at {path} around line {first}")
    seen = parse_view(observation)
    span = _run(seen, first, last)
    return None if span is None else Region(path, span[0], [seen[n] for n in range(span[0], span[1] + 1)])


def view_above(region: Region, lines: int = UP) -> Generator[Action, str, Region]:
    """View the ``lines`` above ``region`` (scrolling up to the start of a long function); the region
    grown by the consecutive lines read."""
    if region.start <= 1:
        return region
    observation = yield ("str_replace_editor", {"command": "view", "path": region.path,
                                                "view_range": [max(1, region.start - lines), region.start - 1]},
                         "scroll up to the start of the function")
    seen = parse_view(observation)
    span = _run(seen, region.start - 1, region.start - 1)
    if span is None:
        return region
    return Region(region.path, span[0], [seen[n] for n in range(span[0], region.start)] + region.lines)


def _text(lines: list[str]) -> str:
    return "\n".join(lines)


def _anchored(cur: list[str], a: int, b: int, new: list[str], context: int) -> tuple[str, str]:
    lo, hi = max(0, a - context), min(len(cur), b + context)
    if lo == a and hi == b and a == b:  # a pure insertion needs one line to anchor it
        lo, hi = (a - 1, b) if a > 0 else (a, b + 1)
    return _text(cur[lo:hi]), _text(cur[lo:a] + new + cur[b:hi])


def edit_actions(region: Region, new_lines: list[str], thought: str = "") -> Generator[Action, str, None]:
    """``str_replace`` calls turning the region's lines into ``new_lines`` (bottom-up, each with the
    least context unique in the region; on refusal, wider context, at last the whole region)."""
    cur = list(region.lines)
    blocks = [op for op in difflib.SequenceMatcher(a=cur, b=new_lines, autojunk=False).get_opcodes()
              if op[0] != "equal"]
    for _, a, b, c, d in reversed(blocks):
        text = _text(cur)
        unique = next((n for n in range(1, 5) if text.count(_anchored(cur, a, b, new_lines[c:d], n)[0]) == 1), 4)
        for context in (unique, unique + 3, len(cur)):
            old, new = _anchored(cur, a, b, new_lines[c:d], context)
            observation = yield ("str_replace_editor", {"command": "str_replace", "path": region.path,
                                                        "old_str": old, "new_str": new}, thought)
            thought = ""
            if not observation.startswith(_FAILED):
                break
        cur[a:b] = new_lines[c:d]


@dataclass
class Function:
    """A function found in a region: its name, class (when seen), and region indices ``first..last``."""

    name: str
    qualname: str
    first: int
    last: int
    prefix: str


def dedent(lines: list[str], prefix: str) -> list[str]:
    return [line[len(prefix):] if line.startswith(prefix) else line for line in lines]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def enclosing_function(lines: list[str], index: int, indent: int) -> Function | None:
    """The innermost ``def`` above ``lines[index]`` (indented ``indent``) that contains it (no code
    line between them is indented as little as the ``def``), when the part of it in ``lines`` parses."""
    at, match, limit = None, None, indent
    for i in range(index, -1, -1):
        line = lines[i]
        if not line.strip() or line.lstrip().startswith(("#", ")", "]", "}")) or _indent(line) >= limit:
            continue
        limit = _indent(line)
        if (match := _DEF.match(line)) is not None:
            at = i
            break
    if at is None or match is None:
        return None
    prefix, body = match[1], dedent(lines[at:], match[1])
    for cut in range(len(body), index - at, -1):
        try:
            tree = pyast.parse(_text(body[:cut]) + "\n")
        except (SyntaxError, ValueError):
            continue
        node = tree.body[0] if tree.body else None
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or at + (node.end_lineno or 0) <= index:
            return None
        outer = next((line for line in reversed(lines[:at]) if line.strip() and not line.lstrip().startswith(("#", "@"))
                      and _indent(line) < len(prefix)), "")
        owner = _CLASS.match(outer)
        qualname = f"{owner[2]}.{match[2]}" if owner else match[2]
        return Function(match[2], qualname, at, at + (node.end_lineno or 1) - 1, prefix)
    return None


def function_tree(lines: list[str], func: Function) -> ast.Module | None:
    """The parsed (dedented) text of ``func`` in ``lines``, None if it does not parse."""
    try:
        return pyast.parse(_text(dedent(lines[func.first:func.last + 1], func.prefix)) + "\n")
    except (SyntaxError, ValueError):
        return None
