"""A tolerant incremental reader of JSON values from a byte stream (the Fish and Tsuro transports:
docs/fish-protocol.md and docs/tsuro-protocol.md, "Transport").

TCP delivers bytes, not messages: one ``recv`` may hold half a message or several. The reader
keeps a buffer and yields every complete JSON value in it, whether the values are separated by
newlines, by other whitespace, or not at all.

Input that would make a parser fail in a way that is not a JSON error (nesting thousands of
levels deep, integers of thousands of digits, ``NaN``) is refused as a :class:`StreamError` like
any other garbage (parlour.protocols.jsonlimits).
"""

from __future__ import annotations

import codecs
import json
import math
from typing import Any, NoReturn

from parlour.protocols.jsonlimits import MAX_DEPTH, MAX_DIGITS, DepthTracker

__all__ = ["JsonStream", "StreamError"]

_WHITESPACE = " \t\r\n"


class StreamError(ValueError):
    """The stream holds something that can never become JSON, or too much of it."""


def _integer(text: str) -> int:
    if len(text) > MAX_DIGITS:
        raise StreamError(f"a number of more than {MAX_DIGITS} digits")
    return int(text)


def _float(text: str) -> float:
    # No message of these protocols holds a fraction; a literal this long is padding, and one
    # out of a double's range would become infinity, which no reply could carry back as JSON.
    if len(text) > MAX_DIGITS:
        raise StreamError(f"a number of more than {MAX_DIGITS} characters")
    value = float(text)
    if not math.isfinite(value):
        raise StreamError("a number out of range")
    return value


#: The second byte each UTF-8 lead byte allows (RFC 3629, section 4): narrower than 80-BF after
#: E0 and F0 (overlong forms), ED (surrogates) and F4 (past U+10FFFF).
_SECOND = {0xE0: (0xA0, 0xBF), 0xED: (0x80, 0x9F), 0xF0: (0x90, 0xBF), 0xF4: (0x80, 0x8F)}


def _could_continue(pending: bytes) -> bool:
    """Whether the bytes an incremental UTF-8 decoder holds back can still become a character.
    CPython's decoder waits after some second bytes that can never be valid (``ED A0``: a
    surrogate), so a client could leave them pending; they are refused as soon as they arrive."""
    if len(pending) < 2:
        return True  # a lone lead byte is held back only when it is a valid one
    low, high = _SECOND.get(pending[0], (0x80, 0xBF))
    return low <= pending[1] <= high


def _constant(name: str) -> NoReturn:
    raise StreamError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_int=_integer, parse_float=_float, parse_constant=_constant)


class JsonStream:
    def __init__(self, limit: int = 65_536) -> None:
        self.limit = limit
        # UTF-8 decoded incrementally: only a valid beginning of a multi-byte character at the
        # very end of what has arrived waits for its rest; any invalid byte is an error at once.
        self._utf8 = codecs.getincrementaldecoder("utf-8")("strict")
        self._text = ""
        self._depth = DepthTracker(MAX_DEPTH)

    def feed(self, data: bytes) -> list[Any]:
        """Every complete value now available, in order; raises StreamError on garbage."""
        try:
            piece = self._utf8.decode(data)
        except UnicodeDecodeError:
            raise StreamError("the stream is not UTF-8 text") from None
        if not _could_continue(self._utf8.getstate()[0]):
            raise StreamError("the stream is not UTF-8 text")
        # Checked before any parse, on the new text only (the parser re-reads the rest).
        if not self._depth.feed(piece):
            raise StreamError(f"JSON nested more than {MAX_DEPTH} levels deep")
        self._text += piece
        values = []
        text = self._text
        position = 0
        while True:
            while position < len(text) and text[position] in _WHITESPACE:
                position += 1
            if position == len(text):
                break
            try:
                value, position = _DECODER.raw_decode(text, position)
            except json.JSONDecodeError as error:
                # Running out of text (or inside a string) means the rest has not arrived yet.
                if error.pos >= len(text) or error.msg.startswith("Unterminated string"):
                    break
                raise StreamError(f"malformed JSON: {error.msg}") from None
            except RecursionError:  # the depth check makes this unreachable; kept as a guard
                raise StreamError(f"JSON nested more than {MAX_DEPTH} levels deep") from None
            values.append(value)
        self._text = text[position:]
        if len(self._text) > self.limit:
            raise StreamError(f"a message longer than {self.limit} bytes")
        return values
