"""Help texts keep their square brackets (issue 20): typer renders help as rich markup, where a bare
``[train]`` is a style tag and vanishes from ``pip install 'sweworld[train]'``. Every command's
``--help`` is rendered and each bracketed literal of its source help (``\\[`` written for ``[``) must
be there as written."""

from __future__ import annotations

import re

import typer.main
from typer.testing import CliRunner

from sweworld.cli.app import app

BRACKETED = re.compile(r"\\?\[[^\[\]]*\]")
WIDE = {"COLUMNS": "1000", "TERMINAL_WIDTH": "1000"}


def commands(command, path=()):
    """(path, command) for ``command`` and every command under it."""
    yield list(path), command
    for name, sub in getattr(command, "commands", {}).items():
        yield from commands(sub, (*path, name))


def source_help(command) -> list[str]:
    """The help texts ``command --help`` shows: its own, its options', and its commands' first paragraphs."""
    texts = [command.help, command.short_help, command.epilog]
    texts += [getattr(param, "help", None) for param in command.params]
    texts += [sub.short_help or (sub.help or "").split("\n\n")[0]
              for sub in getattr(command, "commands", {}).values()]
    return [text for text in texts if text]


def flat(text: str) -> str:
    """One line of single spaces, without rich's box borders (where the help wraps varies)."""
    return " ".join(text.replace("│", " ").split())


def test_every_bracketed_literal_of_the_help_texts_is_rendered():
    runner = CliRunner()
    checked, lost = [], []
    for path, command in commands(typer.main.get_command(app)):
        literals = {m for text in source_help(command) for m in BRACKETED.findall(text)}
        if not literals:
            continue
        result = runner.invoke(app, [*path, "--help"], env=WIDE)
        assert result.exit_code == 0, result.output
        rendered = flat(result.output)
        for literal in sorted(literals):
            shown = flat(literal.replace("\\[", "["))
            checked.append(shown)
            if shown not in rendered:
                lost.append(f"{' '.join(['sweworld', *path, '--help'])}: {shown!r}")
    assert checked.count("[train]") == 2  # the train group's help and the root's listing of it
    assert not lost, "\n".join(lost)
