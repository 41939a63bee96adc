"""Identifiers drawn from the injected random source (never from the global one)."""

from __future__ import annotations

from hashlib import blake2b
from random import Random
from uuid import UUID

__all__ = ["new_id", "new_time_id", "turn_ids"]


def new_id(rng: Random) -> str:
    """A random UUID4 in canonical form, as player and game ids are written."""
    return str(UUID(int=rng.getrandbits(128), version=4))


def new_time_id(rng: Random, now: float) -> str:
    """A UUID version 7 (RFC 9562) in canonical form: the time in milliseconds, then random
    bits. Game ids are these: a store keeps a game's rows in id order, so games created close
    together sit together, and the few games in play share a few pages rather than one page
    each anywhere in the file (much less to write per commit)."""
    millis = int(now * 1000) & ((1 << 48) - 1)
    value = (millis << 80) | (0x7 << 76) | (rng.getrandbits(12) << 64) | (0b10 << 62) | rng.getrandbits(62)
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
    return [f"{(base + index) & top & _CLEAR | _SET:032x}" for index in range(count)]
