"""Every reader of a bash command, asked the same question about one command, gives the same answer.

The readers: the lexer (``sweworld.shell.lexer``), the install-command reader (``envs.shell``), the world's
code reader (``world.commands``), the router (its fast path ``_plain`` and its bashlex parse of the mask),
Harbor's and inspect's shell-state reader (``integrations.shell_state``) and swerex's syntax check
(``integrations.swerex_shell``). The questions: which program does each simple command run (after its
assignments, then after its wrappers), may the command change the shell, is it plainly valid bash, where
does a list split. Rows marked "was:" are commands on which two readers disagreed before ``sweworld.shell``.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field

import bashlex
import pytest

from sweworld.envs.shell import command_segments
from sweworld.integrations.shell_state import SHELL_WORDS as INTEGRATION_SHELL_WORDS
from sweworld.integrations.shell_state import stateless
from sweworld.integrations.swerex_shell import check_syntax, plainly_valid
from sweworld.shell import RESERVED, SHELL_WORDS, program, simple_commands, syntax_check
from sweworld.shell.mask import parse
from sweworld.world.commands import executed_code, strip_wrappers
from sweworld.world.router import _parse, _plain, route


@dataclass(frozen=True)
class Row:
    command: str
    programs: list[str]
    """The program word of each simple command, its assignments left out."""
    stateless: bool
    plain: bool
    """Plainly valid: valid bash whatever its words (every row is valid bash)."""
    runs: str = ""
    """The program the first command runs, its wrappers (env, timeout...) looked through."""
    files: list[str] = field(default_factory=list)
    """What ``executed_code`` reads."""


ROWS = [
    Row("ls -la", ["ls"], True, True, "ls"),
    Row("X=1 ls", ["ls"], False, True, "ls"),
    Row("X+=1 ls", ["ls"], False, True, "ls"),  # was: the router's fast path judged the program ``X+=1``
    Row("X+=1 pytest tests/a.py", ["pytest"], False, True, "pytest", ["tests/a.py"]),  # was: executed_code read nothing
    Row("PATH+=:/opt/bin python x.py", ["python"], False, True, "python", ["x.py"]),
    Row("cd src && pytest tests", ["cd", "pytest"], False, True, "cd", ["src/tests"]),
    Row("export A=1; python -c 'print(1)'", ["export", "python"], False, True, "export"),
    Row("grep -rn 'def f' . | head -5", ["grep", "head"], True, True, "grep"),
    Row("git diff > /tmp/p.txt 2>&1", ["git"], True, True),  # was: world.commands read a command ``1``
    Row("pytest tests/a.py > out.log", ["pytest"], True, True, "pytest", ["tests/a.py"]),  # was: also > and out.log
    Row("2>/dev/null python x.py", ["python"], True, True, "python", ["x.py"]),  # was: executed_code read nothing
    Row('echo "a;b" \'c && d\' ">"', ["echo"], True, True, "echo"),
    Row("echo $HOME && true", ["echo", "true"], True, False, "echo"),
    Row('"c"d /tmp', ["cd"], False, True, "cd"),  # was: the shell-state reader read the program ``c``
    Row("ls\npython x.py", ["ls", "python"], True, True, "ls", ["x.py"]),  # was: world.commands read one command
    Row("cat > t.py <<'EOF'\nimport os; print(1)\nEOF\npython t.py", ["cat", "python"], False, False, "cat", ["t.py"]),
    Row("python - <<EOF\npython other.py\nEOF", ["python"], False, False, "python"),
    Row("env X=1 pytest tests/a.py", ["env"], True, True, "pytest", ["tests/a.py"]),
    Row("timeout 10 python -m pytest -k x tests/b.py", ["timeout"], True, True, "python", ["tests/b.py"]),
    Row("python -m pytest tests/x.py -k 'a and b' -q 2>&1 | tail -15", ["python", "tail"], True, True, "python",
        ["tests/x.py"]),
    Row("pip install -e . # editable; quick", ["pip"], False, False),  # was: command_segments cut the comment
    Row("sleep 1 &", ["sleep"], False, True, "sleep"),
]


def _id(row: Row) -> str:
    return row.command.replace("\n", "\\n")[:40]


def _lexer_programs(command: str) -> list[str]:
    return [program(words)[0] for _, words in simple_commands(command) if program(words)]


def _router_programs(command: str) -> list[str]:
    """The router's reading: bashlex's command nodes (on the mask), each one's first word."""
    found: list[str] = []

    class Visitor(bashlex.ast.nodevisitor):
        def visitcommand(self, node, parts):
            words = [part.word for part in parts if part.kind == "word"]
            found.extend(words[:1])

    for tree in parse(command)[1]:
        Visitor().visit(tree)
    return found


@pytest.mark.parametrize("row", ROWS, ids=_id)
def test_the_readers_read_the_same_programs(row: Row):
    assert _lexer_programs(row.command) == row.programs
    assert _router_programs(row.command) == row.programs
    assert len(route(row.command).decisions) == len(row.programs)
    # the install-command reader's segments hold the same commands, none cut in two
    assert [p for segment in command_segments(row.command) for p in _lexer_programs(segment)] == row.programs


@pytest.mark.parametrize("row", ROWS, ids=_id)
def test_the_router_fast_path_and_its_parse_agree(row: Row):
    plain = _plain(row.command)
    assert plain is None or plain == _parse(row.command)


@pytest.mark.parametrize("row", [row for row in ROWS if row.runs], ids=_id)
def test_the_code_reader_and_the_router_see_the_same_wrapped_program(row: Row):
    words = simple_commands(row.command)[0][1]
    assert strip_wrappers(program(words))[0] == row.runs
    assert route(row.command).decisions[0].reason.rsplit(": ", 1)[-1] == row.runs
    assert executed_code(row.command).files == row.files


@pytest.mark.parametrize("row", ROWS, ids=_id)
def test_the_shell_state_reader_agrees_with_the_words(row: Row):
    assert stateless(row.command) is row.stateless
    if row.stateless:  # no command word that could change the shell, whoever reads it
        assert not SHELL_WORDS.intersection(_router_programs(row.command) + _lexer_programs(row.command))


@pytest.mark.parametrize("row", ROWS, ids=_id)
def test_plainly_valid_commands_are_valid_and_bash_agrees(row: Row):
    assert plainly_valid(row.command) is row.plain
    assert syntax_check(row.command).ok and check_syntax(row.command) == ""
    accepted = subprocess.run(["bash", "-n"], input=row.command.encode() + b"\n", capture_output=True)
    assert accepted.returncode == 0


RESERVED_ROWS = ["if true; then pytest a.py; fi", "for f in a b; do python $f; done", "while true; do ls; done",
                 "time pytest a.py", "coproc ls", "{ ls; }", "! ls", "[[ -f x ]] && ls"]


@pytest.mark.parametrize("command", RESERVED_ROWS)
def test_a_reserved_command_word_is_a_keyword_for_every_reader(command: str):
    """The first word is a reserved word: no reader takes it for a program."""
    words = program(simple_commands(command)[0][1])
    assert words[0] in RESERVED
    assert _plain(command) is None  # the router's fast path leaves it to bashlex (was: ``coproc`` a program)
    assert not stateless(command) and not plainly_valid(command)
    assert syntax_check(command).ok


def test_one_word_list_everywhere():
    assert INTEGRATION_SHELL_WORDS is SHELL_WORDS and RESERVED <= SHELL_WORDS
    assert {"cd", "export", "set", "exit", "source", ".", "eval", "read"} <= SHELL_WORDS
    assert not {"echo", "true", "false", "test", "[", "pwd", ":"} & SHELL_WORDS
