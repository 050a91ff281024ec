"""Every ``sweworld ...`` command that a hint, a message or a docstring of ``src/`` names (in backticks)
is one the CLI knows, with the options it is given: a hint that sends the user to a command that does
not exist cannot come back."""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

import typer

from sweworld.cli.app import app

SRC = Path(__file__).resolve().parents[2] / "src"
NAMED = re.compile(r"`sweworld ([^`]+)`")


def _named() -> list[tuple[str, str]]:
    """(file:line, the words after ``sweworld``) for each command named in a string of src/."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found += [(f"{path.relative_to(SRC)}:{node.lineno}", m) for m in NAMED.findall(node.value)]
    return found


def _unknown(words: list[str], command) -> str | None:
    """What of ``words`` the command tree does not know (None: all of it is known)."""
    for word in words:
        if word == "--":
            return None  # what follows is the command's own arguments
        if word.startswith("-"):
            opts = {o for p in command.params for o in (*p.opts, *p.secondary_opts)} | {"--help"}
            if word.split("=", 1)[0] not in opts:
                return f"option {word} of `{command.name}`"
        elif (group := getattr(command, "commands", None)) is not None:  # a group: the word names one of its commands
            if word not in group:
                return f"command {word} of `{command.name}`"
            command = group[word]
    return None


def test_every_sweworld_command_named_in_src_exists():
    root = typer.main.get_command(app)
    named = _named()
    assert len(named) > 50  # the scan reads what it should
    wrong = []
    for where, text in named:
        words = text.split()
        if not re.fullmatch(r"[a-z][a-z-]*(\|[a-z][a-z-]*)*", words[0]):
            continue  # a placeholder (`sweworld <command> ...`) or no command at all
        for choice in itertools.product(*(w.split("|") if not w.startswith("-") else [w] for w in words)):
            if (what := _unknown(list(choice), root)) is not None:
                wrong.append(f"{where}: `sweworld {' '.join(choice)}`: no {what}")
    assert not wrong, "\n".join(wrong)
