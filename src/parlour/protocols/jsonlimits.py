"""Limits every JSON decoder of the server applies before (or while) parsing untrusted input.

JSON parsers recurse once per level of nesting: a frame of a few thousand ``[`` (well under any
size limit) makes them raise ``RecursionError``, and CPython refuses to turn more than 4,300
digits into an int (``ValueError``). Both are input errors, not internal ones, so every decoder
checks the nesting depth first with :func:`too_deep` and reports both with its protocol's own
error. No message of any protocol nests deeper than a handful of levels.

The depth check is cheap where it matters: a frame with fewer opening brackets than the limit
cannot be too deep (two ``count`` calls in C); only a frame with more is scanned, skipping
brackets inside strings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

__all__ = ["MAX_DEPTH", "MAX_DIGITS", "DepthTracker", "nesting_depth", "too_deep"]

#: Deepest nesting of arrays and objects any decoder accepts. An /async game state is the
#: deepest message of all (a client's own document), and 64 levels is far more than any needs.
MAX_DEPTH: Final = 64
#: Longest integer literal (in digits) the line protocols' decoder accepts: ids, ages and tile
#: numbers are small, and CPython itself refuses more than 4,300 digits.
MAX_DIGITS: Final = 100

# A string's characters up to its closing quote (or to the end of what has arrived), a bracket
# or an opening quote.
_IN_STRING: Final = re.compile(r'(?:[^"\\]|\\.)*', re.DOTALL)
_OUTSIDE: Final = re.compile(r'[\[\]{}"]')
# A string (closed, or running to the end of what has arrived so far) or a bracket.
_TOKENS_STR: Final = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\Z)|[\[\]{}]', re.DOTALL)
_TOKENS_BYTES: Final = re.compile(rb'"(?:[^"\\]|\\.)*(?:"|\Z)|[\[\]{}]', re.DOTALL)


def nesting_depth(data: str | bytes) -> int:
    """The deepest nesting of arrays and objects in ``data`` (brackets in strings do not
    count). Works on incomplete and malformed text: unmatched closers are ignored."""
    if isinstance(data, str):
        return _deepest(match.group() for match in _TOKENS_STR.finditer(data))
    return _deepest(match.group().decode("latin-1") for match in _TOKENS_BYTES.finditer(data))


def _deepest(tokens: Iterable[str]) -> int:
    depth = deepest = 0
    for token in tokens:
        if token == "[" or token == "{":
            depth += 1
            if depth > deepest:
                deepest = depth
        elif (token == "]" or token == "}") and depth:
            depth -= 1
    return deepest


def too_deep(data: str | bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether ``data`` nests arrays and objects more than ``limit`` levels deep."""
    if isinstance(data, str):
        if data.count("[") + data.count("{") <= limit:
            return False
    elif data.count(b"[") + data.count(b"{") <= limit:
        return False
    return nesting_depth(data) > limit


class DepthTracker:
    """The nesting depth of a stream of JSON text fed in pieces, each piece scanned once.

    A stream reader re-parses what it holds at every read until a value is complete; scanning
    all of it for depth each time too would let a client that dribbles a long message cost the
    server time quadratic in its size. This keeps the state (depth, inside a string, after a
    backslash) between pieces instead.
    """

    def __init__(self, limit: int = MAX_DEPTH) -> None:
        self.limit = limit
        self.depth = 0
        self._string = False
        self._escape = False

    def feed(self, text: str) -> bool:
        """Scan the next piece of the stream; False once the nesting went past the limit."""
        position, end = 0, len(text)
        while position < end:
            if self._string:
                if self._escape:  # the character after a backslash that ended the last piece
                    self._escape = False
                    position += 1
                    continue
                position = _IN_STRING.match(text, position).end()  # type: ignore[union-attr]
                if position == end:
                    break
                if text[position] == "\\":  # a lone backslash at the end of the piece
                    self._escape = True
                else:  # the closing quote
                    self._string = False
                position += 1
                continue
            found = _OUTSIDE.search(text, position)
            if found is None:
                break
            token = found.group()
            position = found.end()
            if token == '"':
                self._string = True
            elif token == "[" or token == "{":
                self.depth += 1
                if self.depth > self.limit:
                    return False
            elif self.depth:
                self.depth -= 1
        return True
