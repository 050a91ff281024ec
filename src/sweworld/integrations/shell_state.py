"""Which commands cannot change the shell they run in, so that a seam may skip the subshell.

Harbor's and inspect's ``exec`` are one command each with its own ``cwd`` and ``env``, as a fresh ``docker exec`` is:
the environment runs it in a subshell of the episode's persistent shell, so that a ``cd``, an
``export``, a ``set -e`` or an ``exit`` ends with it. The subshell is a fork, most of the cost of a
short command. A command that certainly leaves the shell as it found it runs in the shell itself:
``stateless`` says which, conservatively (anything it cannot read is not stateless).
"""

from __future__ import annotations

import functools
import re
import shlex

#: bash's builtins and reserved words that can change the shell or run code in it (``cd``, ``export``,
#: ``set``, ``exit``, ``source``, ``eval``, ``read``, a loop's variable...); ``echo``, ``true``,
#: ``false``, ``test``, ``[``, ``pwd`` and ``:`` are the builtins left out: they cannot.
_WORDS = (
    "alias bg bind break builtin caller cd command compgen complete compopt continue coproc declare dirs "
    "disown enable eval exec exit export fc fg getopts hash help history jobs kill let local logout mapfile "
    "popd printf pushd read readarray readonly return select set shift shopt source suspend time times trap "
    "type typeset ulimit umask unalias unset wait if then else elif fi case esac for while until do done in "
    "function . [[ ]] { } !")
SHELL_WORDS = frozenset(_WORDS.split())
_SEPARATORS = frozenset({";", "&&", "||", "|", "|&", "\n"})
_REDIRECTS = frozenset({">", ">>", "<", ">&", "<&", "&>", "&>>", ">|", "<>"})
#: here-documents, arithmetic, assigning expansions (``${x:=v}``), comments, and every backslash (an
#: escaped quote or separator is read differently by ``shlex`` and bash)
_REFUSED = re.compile(r"<<|\(\(|\$\{[^}]*=|#|\\")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")


@functools.lru_cache(maxsize=4096)  # the same commands come back (Harbor's own, an agent's)
def stateless(command: str) -> bool:
    """True when ``command`` is a list of simple commands (``;``, ``&&``, ``||``, pipes, redirections,
    quotes) whose command words are programs or the harmless builtins, with no variable assignment,
    background job, group or subshell syntax, here-document, arithmetic or assigning expansion.

    The tokens keep their quotes (``shlex`` in its non-POSIX mode), so a quoted ``">"`` or ``";"`` is a
    word and never a redirection or a separator; a command word is judged without its quotes
    (``"cd"`` is ``cd``)."""
    if _REFUSED.search(command):
        return False
    lexer = shlex.shlex(command, posix=False, punctuation_chars=";&|()<>\n")
    lexer.whitespace = " \t\r"
    lexer.commenters = ""
    lexer.whitespace_split = True  # words end at blanks and at ;&|()<> only (``X+=1`` is one word)
    try:
        tokens = list(lexer)
    except ValueError:  # an unclosed quote
        return False
    at_command = True
    skip = 0
    for n, token in enumerate(tokens):
        if skip:
            skip -= 1
            continue
        if token in _SEPARATORS:
            at_command = True
        elif token in _REDIRECTS:
            skip = 1  # its target; a redirection before the command word leaves it to come
        elif token[0] in ";&|()<>":
            return False  # a background job, a group, a subshell, a case clause...
        elif at_command:
            if n + 1 < len(tokens) and token.isdigit() and tokens[n + 1] in _REDIRECTS:
                continue  # a file descriptor (``2>/dev/null cmd``)
            word = token.replace('"', "").replace("'", "")
            if word in SHELL_WORDS or _ASSIGNMENT.match(word) or not word:
                return False
            at_command = False
    return True


__all__ = ["SHELL_WORDS", "stateless"]
