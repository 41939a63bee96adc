"""Secret identifiers, from an injected :class:`IdSource` (the ``secrets`` module by default).

Player ids, game ids, the keys of move ids and the seeds of games are secrets: whoever could
guess them could act as another player or foresee a deal. They never come from the game's
``random.Random`` (kept for game rules and robots): a Mersenne Twister's state can be rebuilt
from its outputs, and robots' choices and shuffles show some of those to every client. Tests
inject a seeded source (``IdSource(seed)``) to keep their ids reproducible.
"""

from __future__ import annotations

import secrets
from hashlib import blake2b
from random import Random
from uuid import UUID

__all__ = ["IdSource", "new_id", "new_time_id", "turn_ids"]


class IdSource:
    """Where secret values come from: the operating system's CSPRNG (``secrets``), or, given a
    ``seed``, a reproducible generator for tests (never for a server)."""

    def __init__(self, seed: int | None = None) -> None:
        self._seeded: Random | None = None if seed is None else Random(seed)

    @property
    def seeded(self) -> bool:
        return self._seeded is not None

    def bits(self, count: int) -> int:
        """A random non-negative integer of ``count`` bits."""
        seeded = self._seeded
        return secrets.randbits(count) if seeded is None else seeded.getrandbits(count)

    def token(self, size: int) -> bytes:
        """``size`` random bytes."""
        return self.bits(size * 8).to_bytes(size, "big")


def new_id(source: IdSource) -> str:
    """A random UUID4 in canonical form, as player and game ids are written."""
    return str(UUID(int=source.bits(128), version=4))


def new_time_id(source: IdSource, now: float) -> str:
    """A UUID version 7 (RFC 9562) in canonical form: the time in milliseconds, then random
    bits. Game ids are these: a store keeps a game's rows in id order, so games created close
    together sit together, and the few games in play share a few pages rather than one page
    each anywhere in the file (much less to write per commit)."""
    millis = int(now * 1000) & ((1 << 48) - 1)
    value = (millis << 80) | (0x7 << 76) | (source.bits(12) << 64) | (0b10 << 62) | source.bits(62)
    return str(UUID(int=value))


#: UUID4 layout: version nibble 4, variant bits 10 (RFC 4122).
_CLEAR = ~((0xF000 << 64) | (0xC000 << 48)) & ((1 << 128) - 1)
_SET = (0x4000 << 64) | (0x8000 << 48)


def turn_ids(secret: bytes, turn: int, count: int) -> list[str]:
    """The move ids of a game's ``turn``-th turn (UUID4s as 32 hex digits), derived from
    the game's secret: the same turn always gets the same ids, so ids a player was sent stay
    valid after a restart or a refused commit without storing them, and nobody without the
    secret can tell the ids of a turn before it is offered. Ids within a turn are consecutive
    (the player is sent all of them anyway)."""
    base = int.from_bytes(blake2b(turn.to_bytes(8, "big"), key=secret, digest_size=16).digest(), "big")
    top = (1 << 128) - 1
    # to_bytes().hex() writes the same 32 digits as format(..., "032x") in half the time.
    return [((base + index) & top & _CLEAR | _SET).to_bytes(16, "big").hex() for index in range(count)]
