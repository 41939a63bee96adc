"""The lease logic with a fake backend and a fake clock (no Redis): who holds it, when a holder
must stop acting, and that every acquisition has a new epoch."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from parlour.cluster.lease import Lease, parse_holder


@dataclass
class Clock:
    now: float = 100.0

    def __call__(self) -> float:
        return self.now


@dataclass
class FakeRedis:
    """Keys with expiry on the shared fake clock, and the epoch counters: the semantics of the
    Lua scripts of parlour.cluster.redisbus."""

    clock: Clock
    keys: dict[str, tuple[str, float]] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    #: Renewals fail while False (Redis unreachable).
    up: bool = True

    def _get(self, key: str) -> str | None:
        found = self.keys.get(key)
        if found is None or found[1] <= self.clock():
            self.keys.pop(key, None)
            return None
        return found[0]

    async def acquire(self, key: str, counter: str, node: int, ttl_ms: int) -> int | None:
        if not self.up:
            raise ConnectionError("down")
        if self._get(key) is not None:
            return None
        epoch = self.counters[counter] = self.counters.get(counter, 0) + 1
        self.keys[key] = (f"{node}:{epoch}", self.clock() + ttl_ms / 1000)
        return epoch

    async def renew(self, key: str, value: str, ttl_ms: int) -> bool:
        if not self.up:
            raise ConnectionError("down")
        if self._get(key) != value:
            return False
        self.keys[key] = (value, self.clock() + ttl_ms / 1000)
        return True

    async def release(self, key: str, value: str) -> None:
        if self._get(key) == value:
            del self.keys[key]

    async def holder(self, key: str) -> str | None:
        return self._get(key)


def leases() -> tuple[Clock, FakeRedis, Lease, Lease]:
    clock = Clock()
    redis = FakeRedis(clock)
    return clock, redis, Lease(redis, "async", 1, 3.0, clock), Lease(redis, "async", 2, 3.0, clock)


def test_one_holder_at_a_time_and_a_new_epoch_for_each() -> None:
    async def main() -> None:
        clock, _, one, two = leases()
        assert await one.acquire() and one.epoch == 1 and one.held()
        assert not await two.acquire() and not two.held()
        assert await one.holder() == (1, 1)
        # Renewed every ttl/3, the holder keeps it for as long as it likes.
        for _ in range(10):
            clock.now += one.period
            assert await one.renew() and one.held()
            assert not await two.acquire()
        await one.release()
        assert not one.held() and await one.holder() is None
        assert await two.acquire() and two.epoch == 2

    asyncio.run(main())


def test_a_holder_stops_acting_a_margin_before_anyone_else_may_take_over() -> None:
    async def main() -> None:
        clock, redis, one, two = leases()
        assert await one.acquire()
        redis.up = False  # renewals cannot reach Redis from here on
        # Valid for ttl - margin after the request that took it...
        clock.now += one.ttl - one.margin - 0.01
        assert one.held()
        clock.now += 0.02
        assert not one.held()
        # ...while Redis keeps it for the whole ttl: nobody else acts meanwhile.
        redis.up = True
        assert not await two.acquire()
        clock.now += one.margin
        assert await two.acquire() and two.epoch == 2
        # The old holder's renewal is refused: its value is gone.
        assert not await one.renew() and one.epoch == 0

    asyncio.run(main())


def test_a_renewal_too_late_is_not_attempted() -> None:
    async def main() -> None:
        clock, redis, one, _ = leases()
        assert await one.acquire()
        clock.now += one.ttl - one.margin  # validity over, though Redis would still renew
        assert not await one.renew()
        assert not one.held() and redis.keys  # dropped locally; Redis lets it expire

    asyncio.run(main())


def test_holder_values_parse() -> None:
    assert parse_holder("3:17") == (3, 17)
    assert parse_holder("garbage") is None
