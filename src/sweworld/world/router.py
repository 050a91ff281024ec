"""The command router of the sim backend: which parts of a bash command SWT must predict.

:func:`route` parses a command with bashlex (after :func:`sweworld.shell.mask.mask`) into
lists, pipelines, compound commands and simple commands, and judges each simple command with the
rules of :mod:`sweworld.world.route_rules`. The plan lists the byte spans that must be simulated.
The sim executor asks SWT for each span's ``{stdout, stderr, exit_code}``, then runs
:func:`rewrite` (each span replaced by ``__sweworld_sim <index>``, a stub that prints the
prediction and returns its exit code) for real, so that ``python x.py | grep y`` pipes the
predicted output through the real grep, ``python x.py > out`` writes a real file and
``cd src && python x.py`` really changes directory.

Spans:

- a simulated simple command's span runs from its first word (assignments included) to its last
  word; its redirections and here-documents stay OUTSIDE the span, so they apply to the stub. A
  redirection that lies between two words is kept: :attr:`SimSpan.kept` follows the stub;
- a command whose command or process substitution (``$(...)``, backticks, ``<(...)``) contains a
  simulated command is simulated as a whole (the substitution is inside its span);
- a loop (for, while, until) that contains a simulated command is one span, the loop without its
  redirections: a per-iteration stub would print the same prediction each time;
- a simulated command inside a redirection target or an unquoted here-document body, and a
  command that bashlex cannot parse even after masking (``case``, arrays, ``for ((;;))``, ...), make
  the whole command one span: SWT predicts it whole (``parsed`` is False when bashlex failed).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

import bashlex

from sweworld.shell.mask import parse
from sweworld.shell.words import RESERVED, program
from sweworld.world.route_rules import classify

STUB = "__sweworld_sim"
_LOOPS = frozenset({"for", "while", "until"})
_SUBSTITUTIONS = frozenset({"commandsubstitution", "processsubstitution"})
_PLAIN = re.compile(r"[\w./=:,@%+\- \t]+")


@dataclass(frozen=True)
class SimSpan:
    """A part of the command that SWT predicts: ``command[start:end] == text``. ``context`` is the
    simple command as SWT should see it (its redirections and here-document bodies included)."""

    start: int
    end: int
    text: str
    reason: str
    context: str
    kept: str = ""


@dataclass(frozen=True)
class Decision:
    """How one simple command was judged (real ones too): for traces and tests."""

    start: int
    end: int
    text: str
    simulate: bool
    reason: str


@dataclass(frozen=True)
class RoutePlan:
    command: str
    spans: tuple[SimSpan, ...]
    parsed: bool
    decisions: tuple[Decision, ...] = field(default=())

    @property
    def all_real(self) -> bool:
        return not self.spans

    @property
    def all_sim(self) -> bool:
        return bool(self.spans) and not any(not d.simulate for d in self.decisions)


class _Whole(Exception):
    """The command must be simulated whole (see the module docstring)."""


class _Walker:
    def __init__(self, command: str, masked: str, functions: frozenset[str]) -> None:
        self.command = command
        self.masked = masked
        self.functions = functions
        self.decisions: list[Decision] = []

    def walk(self, node) -> list[SimSpan]:
        kind = node.kind
        if kind == "command":
            return self.simple(node)
        if kind in _LOOPS:
            return self.loop(node)
        if kind in ("word", "assignment"):
            return [s for sub in _substitutions(node) for s in self.walk(sub.command)]
        if kind == "redirect":
            self.redirect(node)
            return []
        children = list(getattr(node, "parts", None) or getattr(node, "list", None) or [])
        children += getattr(node, "redirects", None) or []
        return [s for child in children for s in self.walk(child)]

    def loop(self, node) -> list[SimSpan]:
        inner = [s for part in node.parts for s in self.walk(part)]
        if not inner:
            return []
        start, end = node.pos
        return [self.span(start, end, f"{node.kind} loop > {inner[0].reason}", [])]

    def redirect(self, node) -> None:
        target = node.output if not isinstance(node.output, int) else None
        if target is not None and self.walk(target):
            raise _Whole("simulated command in a redirection")
        heredoc = getattr(node, "heredoc", None)
        if heredoc is not None and re.search(r"\$\(|`", heredoc.value):
            body = '"' + heredoc.value.replace('"', " ") + '"'
            try:
                if not route(body).all_real:
                    raise _Whole("simulated command in a here-document")
            except RecursionError as exc:  # pragma: no cover - absurd nesting
                raise _Whole("here-document") from exc

    def simple(self, node) -> list[SimSpan]:
        words = [p for p in node.parts if p.kind in ("word", "assignment")]
        redirects = [p for p in node.parts if p.kind == "redirect"]
        inner = [s for w in words for s in self.walk(w)]
        for r in redirects:
            self.redirect(r)
        program = [p.word for p in node.parts if p.kind == "word"]
        simulate, reason = classify(program, self.functions, self.judge_shell)
        if inner and not simulate:
            simulate, reason = True, f"substitution > {inner[0].reason}"
        start, end = (words[0].pos[0], words[-1].pos[1]) if words else node.pos
        self.decisions.append(Decision(start, end, self.command[start:end], simulate, reason))
        if not simulate:
            return []
        kept = [r for r in redirects if start <= r.pos[0] < end]
        context = self.text(*node.pos) + "".join(
            "\n" + self.text(*r.heredoc.pos) for r in redirects if getattr(r, "heredoc", None)
        )
        return [self.span(start, end, reason, kept, context)]

    def text(self, start: int, end: int) -> str:
        """The original text of a node, with the padding of a masked word (``'EOF'``) after it."""
        while end < len(self.command) and self.masked[end] != self.command[end]:
            end += 1
        return self.command[start:end]

    def span(self, start: int, end: int, reason: str, kept: list, context: str = "") -> SimSpan:
        text = self.command[start:end]
        keep = " ".join(self.text(*r.pos) for r in kept)
        return SimSpan(start, end, text, reason, context or text, keep)

    @staticmethod
    def judge_shell(inner: str) -> tuple[bool, str]:
        plan = route(inner)
        return (bool(plan.spans), plan.spans[0].reason if plan.spans else "all real")


def _substitutions(node):
    for part in getattr(node, "parts", None) or []:
        if part.kind in _SUBSTITUTIONS:
            yield part
        else:
            yield from _substitutions(part)


def _functions(trees) -> frozenset[str]:
    names: set[str] = set()

    class Visitor(bashlex.ast.nodevisitor):
        def visitfunction(self, node, name, body, parts):
            names.add(name.word)

    for tree in trees:
        Visitor().visit(tree)
    return frozenset(names)


@functools.lru_cache(maxsize=4096)
def route(command: str) -> RoutePlan:
    """Decide which parts of ``command`` SWT predicts (see the module docstring). Plans are
    immutable and cached; a command of plain words skips bashlex (same plan, ~50x faster)."""
    return _plain(command) or _parse(command)


def _plain(command: str) -> RoutePlan | None:
    """The plan of one simple command without quotes, expansions or operators, or None."""
    if not (_PLAIN.fullmatch(command) and command.strip()):
        return None
    words = program(command.split())
    if words and words[0] in RESERVED:
        return None
    simulate, reason = classify(words, frozenset(), _Walker.judge_shell)
    start = len(command) - len(command.lstrip())
    end = len(command.rstrip())
    text = command[start:end]
    spans = (SimSpan(start, end, text, reason, text),) if simulate else ()
    return RoutePlan(command, spans, True, (Decision(start, end, text, simulate, reason),))


def _parse(command: str) -> RoutePlan:
    try:
        masked, trees = parse(command)
    except Exception as exc:  # bashlex raises several types; none may escape
        return _whole(command, False, f"unparseable: {type(exc).__name__}: {exc}")
    if not trees:
        return RoutePlan(command, (), True)
    walker = _Walker(command, masked, _functions(trees))
    try:
        spans = [s for tree in trees for s in walker.walk(tree)]
    except _Whole as exc:
        return _whole(command, True, str(exc))
    return RoutePlan(command, tuple(spans), True, tuple(walker.decisions))


def _whole(command: str, parsed: bool, reason: str) -> RoutePlan:
    span = SimSpan(0, len(command), command, reason, command)
    return RoutePlan(command, (span,), parsed, (Decision(0, len(command), command, True, reason),))


def rewrite(command: str, plan: RoutePlan, stub: str = STUB) -> str:
    """``command`` with span i replaced by ``f"{stub} {i}"`` (and the redirections it kept)."""
    if plan.command != command:
        raise ValueError("the plan was made for another command")
    out = command
    for index, span in reversed(list(enumerate(plan.spans))):
        call = f"{stub} {index}" + (f" {span.kept}" if span.kept else "")
        out = out[: span.start] + call + out[span.end :]
    return out
