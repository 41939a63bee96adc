"""A tolerant incremental reader of JSON values from a byte stream (fish-tsuro-notes F1, T1).

TCP delivers bytes, not messages: one ``recv`` may hold half a message or several. The reader
keeps a buffer and yields every complete JSON value in it, whether the values are separated by
newlines, by other whitespace, or not at all.

Input that would make a parser fail in a way that is not a JSON error (nesting thousands of
levels deep, integers of thousands of digits, ``NaN``) is refused as a :class:`StreamError` like
any other garbage (parlour.protocols.jsonlimits).
"""

from __future__ import annotations

import json
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


def _constant(name: str) -> NoReturn:
    raise StreamError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_int=_integer, parse_constant=_constant)


class JsonStream:
    def __init__(self, limit: int = 65_536) -> None:
        self.limit = limit
        self._bytes = b""
        self._text = ""
        self._depth = DepthTracker(MAX_DEPTH)

    def feed(self, data: bytes) -> list[Any]:
        """Every complete value now available, in order; raises StreamError on garbage."""
        self._bytes += data
        try:
            piece = self._bytes.decode()
            self._bytes = b""
        except UnicodeDecodeError as error:
            if error.start < len(self._bytes) - 3:  # not just a character cut in two
                raise StreamError("the stream is not UTF-8 text") from None
            piece = self._bytes[: error.start].decode()
            self._bytes = self._bytes[error.start :]
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
