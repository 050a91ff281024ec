"""Commands that are valid bash whatever their words are: the syntax check's fast path.

A command made of plain words (no expansion, no escape), quotes without expansions, pipes,
``&&``/``||``/``;``/``&`` and simple redirections is valid bash; :func:`plainly_valid` recognises exactly
such commands (never one ``bash -n`` refuses: the tests compare it with bash) from the lexer's tokens.
"""

from __future__ import annotations

import re

from sweworld.shell.lexer import OPERATOR, WORD, Token, tokens
from sweworld.shell.words import REDIRECTIONS, RESERVED, is_assignment

_WORD = re.compile(r"""(?:[A-Za-z0-9_./:=,+%@^~*?-]|'[^'\n]*'|"[^"\\$`!\n]*")+""")
_REDIRECTS = REDIRECTIONS - {">|", "<>"}


def _at(found: list[Token], k: int) -> Token | None:
    return found[k] if k < len(found) else None


def _plain_word(token: Token | None) -> bool:
    return token is not None and token.kind == WORD and _WORD.fullmatch(token.text) is not None


def plainly_valid(command: str) -> bool:
    """True when ``command`` is certainly valid bash (see the module docstring); False: ask bash."""
    if "\r" in command or "\\" in command:
        return False
    try:
        found = tokens(command)
    except ValueError:
        return False
    in_command = need_command = named = False  # words seen; after | && ||; the command word seen
    k = 0
    while k < len(found):
        token, after = found[k], _at(found, k + 1)
        text = token.text
        if token.kind != OPERATOR:
            if not _plain_word(token):
                return False  # a comment, or a word with an expansion or an odd character
            if (text.isdigit() and len(text) == 1 and after is not None and after.start == token.end
                    and after.text in _REDIRECTS and after.text[0] in "<>"):
                k += 1  # the descriptor of the redirection that follows (2>x)
                continue
            if not named and not is_assignment(text):
                if text in RESERVED:
                    return False
                named = True
            in_command, need_command = True, False
        elif text in ("&&", "||", "|"):
            if not in_command:
                return False
            in_command, need_command, named = False, True, False
        elif text in (";", "&"):
            if not in_command:
                return False
            in_command = named = False
        elif text == "\n":
            if not need_command:
                in_command = named = False
        elif text in _REDIRECTS:
            target, beyond = after, _at(found, k + 2)
            if not _plain_word(target):
                return False
            assert target is not None
            if target.text.isdigit() and beyond is not None and beyond.start == target.end and beyond.text[0] in "<>":
                return False  # digits just before < or > are bash's next redirection (2> 2>&1), not a word
            in_command, need_command = True, False
            k += 2
            continue
        else:
            return False  # ( ) ;; |& << <( ...
        k += 1
    return not need_command
