"""Ownership by lease: one node at a time holds a service.

A lease is a Redis key ``parlour:{service}:lease`` holding ``"{node}:{epoch}"`` with a time to
live. Taking it is atomic (a Lua script: set it only if absent, and bump the service's epoch
counter in the same step), and so is renewing it (a compare-and-renew script: extend it only
while it still holds our value). Every acquisition gets a new epoch, the fencing token the new
owner writes into the store's meta.

The holder counts its lease as valid until ``ttl - margin`` after it *sent* the request that
took or renewed it: Redis cannot have let the key expire before ``ttl`` after receiving that
request, which came later. So the holder stops acting (feeding its service, committing) at
least ``margin`` before any other node can take the lease, whatever the network did. The
backend is a one-method-per-operation seam, so the logic is tested with a fake clock and a fake
backend (tests/cluster/test_lease.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Lease", "LeaseBackend", "lease_key"]


def lease_key(service: str) -> str:
    return f"parlour:{service}:lease"


def epoch_key(service: str) -> str:
    return f"parlour:{service}:epoch"


class LeaseBackend(Protocol):
    """The atomic operations a lease needs (Redis in parlour.cluster.redisbus)."""

    async def acquire(self, key: str, counter: str, node: int, ttl_ms: int) -> int | None:
        """Take ``key`` if nobody holds it: the new epoch (``counter`` incremented), else None."""
        ...

    async def renew(self, key: str, value: str, ttl_ms: int) -> bool:
        """Extend ``key`` by ``ttl_ms`` if it still holds ``value``."""
        ...

    async def release(self, key: str, value: str) -> None:
        """Delete ``key`` if it still holds ``value`` (a graceful stop hands over at once)."""
        ...

    async def holder(self, key: str) -> str | None:
        """The value of ``key`` (``"node:epoch"``), or None when nobody holds it."""
        ...


def renewal_period(ttl: float) -> float:
    """How often a lease of ``ttl`` is renewed: a sixth of it, so that a renewal that comes late
    (a node's loop or its machine busy for a moment) still has half the ttl before the holder's
    validity (``ttl - margin``) ends, where a third would leave a third."""
    return ttl / 6


@dataclass
class Lease:
    """One node's view of one service's lease. ``clock`` is monotonic seconds (injected)."""

    backend: LeaseBackend
    service: str
    node: int
    ttl: float = 3.0
    clock: Callable[[], float] = time.monotonic
    #: The epoch of our current tenure (0: we do not hold it).
    epoch: int = 0
    #: Until when (on ``clock``) we may act as the owner.
    valid_until: float = float("-inf")

    @property
    def margin(self) -> float:
        """Kept between the end of our validity and the earliest expiry in Redis."""
        return self.ttl / 3

    @property
    def period(self) -> float:
        """How often the holder renews (and a candidate tries to take it)."""
        return renewal_period(self.ttl)

    @property
    def value(self) -> str:
        return f"{self.node}:{self.epoch}"

    def held(self) -> bool:
        """True while we hold the lease and may act on it (by our own clock)."""
        return self.epoch != 0 and self.clock() < self.valid_until

    async def acquire(self) -> bool:
        """Try to take the lease; True when we now hold it (with a new epoch)."""
        sent = self.clock()
        epoch = await self.backend.acquire(
            lease_key(self.service), epoch_key(self.service), self.node, self.ttl_ms
        )
        if epoch is None:
            return False
        self.epoch = epoch
        self.valid_until = sent + self.ttl - self.margin
        return True

    async def renew(self) -> bool:
        """Extend our tenure; False (and the lease dropped) once it is lost or lapsed."""
        sent = self.start_renewal()
        if sent is None:
            return False
        return self.renewal_done(
            sent, await self.backend.renew(lease_key(self.service), self.value, self.ttl_ms)
        )

    def start_renewal(self) -> float | None:
        """When a renewal sent now is counted from (on ``clock``); None when there is nothing to
        renew, or it is too late (another node may be about to take it: the lease is dropped).
        With ``renewal_done``, for renewals sent together (Shares renews the shards so)."""
        if self.epoch == 0:
            return None
        sent = self.clock()
        if sent >= self.valid_until:
            self.drop()
            return None
        return sent

    def renewal_done(self, sent: float, renewed: bool) -> bool:
        """Redis answered the renewal sent at ``sent``: valid from then on, or dropped."""
        if renewed and self.epoch != 0:
            self.valid_until = sent + self.ttl - self.margin
            return True
        self.drop()
        return False

    async def release(self) -> None:
        if self.epoch != 0:
            value = self.value
            self.drop()
            await self.backend.release(lease_key(self.service), value)

    def drop(self) -> None:
        self.epoch = 0
        self.valid_until = float("-inf")

    async def holder(self) -> tuple[int, int] | None:
        """(node, epoch) of whoever holds the lease now, or None."""
        value = await self.backend.holder(lease_key(self.service))
        return None if value is None else parse_holder(value)

    @property
    def ttl_ms(self) -> int:
        return max(1, round(self.ttl * 1000))


def parse_holder(value: str) -> tuple[int, int] | None:
    node, _, epoch = value.partition(":")
    try:
        return int(node), int(epoch)
    except ValueError:
        return None
