"""Identifiers drawn from the injected random source (never from the global one)."""

from __future__ import annotations

from random import Random
from uuid import UUID

__all__ = ["new_hex_id", "new_id"]


def new_id(rng: Random) -> str:
    """A random UUID4 in canonical form, as player and game ids are written."""
    return str(UUID(int=rng.getrandbits(128), version=4))


#: UUID4 layout: version nibble 4, variant bits 10 (RFC 4122).
_CLEAR = ~((0xF000 << 64) | (0xC000 << 48)) & ((1 << 128) - 1)
_SET = (0x4000 << 64) | (0x8000 << 48)


def new_hex_id(rng: Random) -> str:
    """A random UUID4 as 32 lowercase hex digits, as move ids are written (many per turn:
    formatted directly rather than through ``uuid.UUID``)."""
    return f"{rng.getrandbits(128) & _CLEAR | _SET:032x}"
