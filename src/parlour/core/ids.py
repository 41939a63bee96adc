"""Identifiers drawn from the injected random source (never from the global one)."""

from __future__ import annotations

from random import Random
from uuid import UUID

__all__ = ["new_hex_id", "new_id"]


def new_id(rng: Random) -> str:
    """A random UUID4 in canonical form, as player and game ids are written."""
    return str(UUID(int=rng.getrandbits(128), version=4))


def new_hex_id(rng: Random) -> str:
    """A random UUID4 as 32 lowercase hex digits, as move ids are written."""
    return UUID(int=rng.getrandbits(128), version=4).hex
