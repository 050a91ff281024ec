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

from sweworld.shell.lexer import OPERATOR, tokens
from sweworld.shell.words import REDIRECTIONS, SEPARATORS, SHELL_WORDS, is_assignment

#: here-documents, arithmetic, assigning expansions (``${x:=v}``), comments, and every backslash (kept
#: out, so that the lexer's reading of a word is bash's whatever its escapes)
_REFUSED = re.compile(r"<<|\(\(|\$\{[^}]*=|#|\\")


@functools.lru_cache(maxsize=4096)  # the same commands come back (Harbor's own, an agent's)
def stateless(command: str) -> bool:
    """True when ``command`` is a list of simple commands (``;``, ``&&``, ``||``, pipes, redirections,
    quotes) whose command words are programs or the harmless builtins, with no variable assignment,
    background job, group or subshell syntax, here-document, arithmetic or assigning expansion.

    The tokens are :func:`sweworld.shell.lexer.tokens`: a quoted ``">"`` or ``";"`` is a word and never a
    redirection or a separator; a command word is judged without its quotes (``"cd"`` and ``c"d"`` are
    ``cd``)."""
    if _REFUSED.search(command):
        return False
    try:
        found = tokens(command)
    except ValueError:  # an unclosed quote
        return False
    at_command, seen, need = True, False, False  # the command word to come; a word since the separator; after |
    skip = 0
    for n, token in enumerate(found):
        if skip:
            skip -= 1
            continue
        if token.kind == OPERATOR:
            if token.text in REDIRECTIONS:
                if n + 1 == len(found) or found[n + 1].kind == OPERATOR:
                    return False  # a redirection without its target
                skip, seen, need = 1, True, False  # its target; the command word may still come
            elif token.text == "\n" or (token.text in SEPARATORS and seen):
                at_command, seen, need = True, False, need or token.text not in (";", "\n")
            else:
                return False  # a background job, a group, a subshell, a case clause, a separator after nothing...
            continue
        if at_command:
            if n + 1 < len(found) and token.text.isdigit() and found[n + 1].text in REDIRECTIONS:
                continue  # a file descriptor (``2>/dev/null cmd``)
            word = token.word
            if word in SHELL_WORDS or is_assignment(word) or not word:
                return False
            at_command = False
        seen, need = True, False
    return not need  # not a list that ends in a pipe, && or ||


__all__ = ["SHELL_WORDS", "stateless"]
