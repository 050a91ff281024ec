"""``sweworld.shell.check``: bash's own verdict (``bash -n``), and the lexer and words it stands on."""

from __future__ import annotations

import pytest

from sweworld.shell import is_assignment, program, segments, simple_commands, syntax_check, tokens, unquote
from sweworld.shell.check import closers
from sweworld.shell.lexer import COMMENT, HEREDOC, OPERATOR, WORD
from sweworld.shell.words import without_redirections


def test_a_valid_command_passes_bash_n():
    result = syntax_check("for f in *.py; do python -m pytest \"$f\" -k 'a and b' || exit 1; done")
    assert result.ok and result.exit_code == 0 and result.stderr == ""


def test_a_plainly_valid_command_is_valid_without_bash():
    assert syntax_check("ls -la | grep x > /tmp/o 2>&1").ok


def test_an_invalid_command_is_refused_with_bashs_message():
    result = syntax_check("if true; then echo a; fi fi")
    assert not result.ok and result.exit_code == 2
    assert "syntax error near unexpected token `fi'" in result.stderr


def test_an_unterminated_here_document_is_a_warning_and_its_closer():
    result = syntax_check("cat <<EOF\nx")
    assert result.ok and "here-document" in result.stderr
    assert closers(result.stderr) == "\nEOF"


@pytest.mark.parametrize(("word", "assignment"), [("X=1", True), ("X+=1", True), ("_a9=", True), ("PATH+=:/x", True),
                                                  ("9X=1", False), ("X-=1", False), ("=1", False), ("ls", False),
                                                  ("--x=1", False), ("X+1=2", False)])
def test_an_assignment_is_name_then_equals_or_plus_equals(word: str, assignment: bool):
    assert is_assignment(word) is assignment


def test_tokens_keep_offsets_quotes_comments_and_here_document_bodies():
    command = "cat <<'E' > f; echo \"a;b\" # note\nbody; x\nE\nls"
    found = tokens(command)
    assert all(command[t.start:t.end] == t.text for t in found)
    assert [(t.kind, t.text) for t in found] == [
        (WORD, "cat"), (OPERATOR, "<<"), (WORD, "'E'"), (OPERATOR, ">"), (WORD, "f"), (OPERATOR, ";"),
        (WORD, "echo"), (WORD, '"a;b"'), (COMMENT, "# note"), (OPERATOR, "\n"), (HEREDOC, "body; x\nE"),
        (WORD, "ls")]


def test_an_unclosed_quote_raises_or_runs_to_the_end():
    with pytest.raises(ValueError):
        tokens("echo 'open")
    assert segments("a; echo 'open; b") == ["a", "echo 'open; b"]
    assert simple_commands("echo 'open; b") == [("", ["echo", "'open;", "b"])]  # split at blanks


def test_simple_commands_keep_redirections_inside_their_words():
    assert simple_commands("pytest a 2>/dev/null >out 2>&1 && cat<<<x | tail") == [
        ("", ["pytest", "a", "2>/dev/null", ">out", "2>&1"]), ("&&", ["cat<<<x"]), ("|", ["tail"])]
    assert program(["X=1", "2>", "/dev/null", ">out", "ls", ">", "f"]) == ["ls", ">", "f"]
    assert without_redirections(["pytest", "a", "2>&1", ">", "out", "<<EOF", "-q"]) == ["pytest", "a", "-q"]


@pytest.mark.parametrize(("word", "plain"), [("'a b'", "a b"), ('"a\\"b"', 'a"b'), ('"\\n"', "\\n"), ("a\\ b", "a b"),
                                             ("\"$x\"'$y'", "$x$y"), ("a\\\nb", "ab")])
def test_unquote_is_bash_quote_removal(word: str, plain: str):
    assert unquote(word) == plain


def test_segments_cut_lists_but_never_quotes_escapes_comments_or_bodies():
    assert segments('a "b;c" ; d && e || true; f') == ['a "b;c"', "d", "e", "true", "f"]
    assert segments("echo a\\;b; c") == ["echo a\\;b", "c"]
    assert segments("pip install x | tee log & wait") == ["pip install x | tee log & wait"]
    assert segments("cat > f <<EOF\na;b\nEOF\nls; c") == ["cat > f <<EOF\na;b\nEOF\nls", "c"]
