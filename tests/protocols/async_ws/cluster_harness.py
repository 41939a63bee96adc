"""The /async service of a cluster without sockets or Redis: a hub, the owners of its game
shards and one node's directory and router, with every note delivered in order as the bus would
(after the commit that releases it), and every read of a game a shard asks for answered from
what the harness stored. The same scenarios as harness.Harness run through it."""

from __future__ import annotations

from collections import deque
from random import Random
from typing import Any

import msgspec

from parlour.accounts.tokens import SessionTokens
from parlour.core.effects import Effect, Relay
from parlour.protocols.async_ws.service import AsyncService
from parlour.protocols.async_ws.shards.placement import (
    EVERYONE,
    HUB,
    Directory,
    Router,
    decode_note,
    shard_name,
    unheard,
)
from parlour.protocols.async_ws.shards.shard import ShardService
from parlour.protocols.async_ws.state.hub import AsyncLimits
from tests.protocols.async_ws.harness import SECRET, Harness


class ClusterHarness(Harness):
    def __init__(
        self, limits: AsyncLimits | None = None, seed: int = 1, now: float = 1_000_000.0, shards: int = 3
    ) -> None:
        super().__init__(limits, seed, now)
        self.service = AsyncService(SessionTokens(SECRET, 86400.0), limits, Random(seed), shards=shards)
        hub_limits = self.service.hub.limits
        self.directory = Directory()
        self.shards = {
            shard_name(k): ShardService(k, shards, self.directory, hub_limits, Random(seed + k))
            for k in range(shards)
        }
        #: Shards without an owner for now (a failover): the router answers TRY_AGAIN.
        self.unowned: set[str] = set()
        self.router = Router(
            self.directory,
            shards,
            lambda name: name not in self.unowned,
            hub_limits.requests_per_second,
            hub_limits.max_frame_bytes,
        )
        #: Notes in flight, delivered in order once the effects that released them are done.
        self.notes: deque[Relay] = deque()
        #: Games a shard asked to read from the store (ShardService.fetch), answered from
        #: ``self.games`` (what the harness stored) after the notes in flight.
        self.reads: deque[tuple[ShardService, int]] = deque()
        for shard in self.shards.values():
            shard.fetch = lambda game_id, shard=shard: self.reads.append((shard, game_id))
        #: How many requests went straight to a shard, past the hub.
        self.routed = 0

    def run(self, effects: list[Effect]) -> None:
        super().run([effect for effect in effects if not isinstance(effect, Relay)])
        self.notes.extend(effect for effect in effects if isinstance(effect, Relay))
        if getattr(self, "_delivering", False):
            return
        self._delivering = True
        try:
            while self.notes or self.reads:
                while self.notes:
                    self._deliver(self.notes.popleft())
                if self.reads:
                    shard, game_id = self.reads.popleft()
                    self.run(shard.found(game_id, self.games.get(game_id), self.now))
        finally:
            self._delivering = False

    def _deliver(self, relay: Relay) -> None:
        if relay.to == EVERYONE:
            self.directory.apply(decode_note(relay.data))
            self.run(self.service.noted(relay.data, self.now))
            for shard in self.shards.values():
                self.run(shard.noted(relay.data, self.now))
        elif relay.to == HUB:
            self.run(self.service.noted(relay.data, self.now))
        elif relay.to in self.shards and relay.to not in self.unowned:
            self.run(self.shards[relay.to].noted(relay.data, self.now))
        elif relay.to in self.shards:  # nobody subscribed: the sender's node answers (notes.py)
            self.run(unheard(relay.data))

    def raw(self, conn: int, data: str | bytes) -> None:
        route = self.router.route(conn, data, self.now)
        if route is None:
            self.run(self.service.received(conn, data, self.now))
        elif isinstance(route, tuple):
            self.routed += 1
            self.run(self.shards[route[0]].noted(route[1], self.now))
        else:
            self.run(route)

    def send(self, conn: int, **message: Any) -> None:
        self.raw(conn, msgspec.json.encode(message).decode())

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.run(self.service.tick(self.now))
        for shard in self.shards.values():
            self.run(shard.tick(self.now))

    def shard_of(self, game_id: int) -> ShardService:
        return self.shards[shard_name(game_id % len(self.shards))]
