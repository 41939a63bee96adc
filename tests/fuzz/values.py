"""Hostile JSON values and how to put them in a frame.

Some of them cannot be produced by ``json.dumps`` at all (nesting thousands of levels deep,
integers past Python's 4,300-digit conversion limit, lone surrogates, ``NaN``), so a frame is
built from ordinary values with :class:`Raw` pieces spliced into the encoded text.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

__all__ = ["JSON_TYPES", "Raw", "deep", "dumps", "hostile_string", "huge_number", "json_type", "wrong_value"]


@dataclass(frozen=True)
class Raw:
    """JSON text put into a frame verbatim, in place of a value."""

    text: str


def dumps(value: Any) -> str:
    """Compact JSON of ``value``, with every :class:`Raw` replaced by its text."""
    pieces: list[str] = []

    def mark(obj: Any) -> str:
        if isinstance(obj, Raw):
            pieces.append(obj.text)
            return f"@@raw{len(pieces) - 1}@@"
        raise TypeError(f"not JSON: {obj!r}")

    text = json.dumps(value, separators=(",", ":"), default=mark, ensure_ascii=False)
    for index, piece in enumerate(pieces):
        text = text.replace(f'"@@raw{index}@@"', piece, 1)
    return text


def deep(rng: random.Random, low: int = 1_000, high: int = 20_000) -> Raw:
    """Arrays or objects nested ``low``..``high`` levels deep (2-6 bytes a level, under 64 KiB at
    most levels: the depth, not the size, is the attack)."""
    levels = rng.randint(low, high)
    if rng.random() < 0.5:
        return Raw("[" * levels + "]" * levels)
    levels //= 3
    return Raw('{"a":' * levels + "1" + "}" * levels)


def huge_number(rng: random.Random) -> Raw:
    """Integers past CPython's int/str digit limit (4,300), floats out of range, non-JSON tokens
    that Python's own decoder accepts (``NaN``, ``Infinity``)."""
    roll = rng.random()
    if roll < 0.6:
        digits = rng.randint(4_301, 20_000)
        sign = rng.choice(["", "-"])
        return Raw(sign + rng.choice("123456789") + "".join(rng.choices("0123456789", k=digits - 1)))
    if roll < 0.8:
        return Raw(rng.choice(["1e99999", "-1e400", "1.5e308000", "0." + "0" * 5000 + "1"]))
    return Raw(rng.choice(["NaN", "Infinity", "-Infinity"]))


def hostile_string(rng: random.Random) -> Raw:
    """Strings with lone surrogates, NULs and other control characters, as JSON escapes."""
    return Raw(
        rng.choice(
            [
                '"\\ud800"',
                '"x\\udfffy"',
                '"\\udc00\\ud800"',
                '"a\\u0000b"',
                '"\\u0000"',
                '"\\u001b[31mred"',
                '"\\ufeff\\u202etxt"',
                '"' + "\\ud83d" * rng.randint(1, 50) + '"',
            ]
        )
    )


#: The JSON types, as JSON Schema names them.
JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")

_SAMPLES: dict[str, list[Any]] = {
    "null": [None],
    "boolean": [True, False],
    "integer": [0, -1, 7, 2**63, -(2**63) - 1, 10**30],
    "number": [1.5, -0.25, 1e300],
    "string": ["", "x", "0", "null", "true", "\u00e9\u4e2d"],
    "array": [[], [1], ["x"], [[]], [None]],
    "object": [{}, {"a": 1}, {"type": None}],
}


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def wrong_value(rng: random.Random, allowed: set[str]) -> Any:
    """A value of none of the ``allowed`` JSON types (``number`` admits integers)."""
    if "number" in allowed:
        allowed = allowed | {"integer"}
    kinds = [kind for kind in JSON_TYPES if kind not in allowed]
    return rng.choice(_SAMPLES[rng.choice(kinds)])
