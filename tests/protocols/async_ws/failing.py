"""An /async service behind a real runtime whose store fails a commit on demand: what a client
hears of a request held behind a commit that failed (docs/durability.md, "When the store fails").

The harness holds no outbox: every message the runtime releases reaches the harness's inboxes
as another node's would (``Runtime.remote``), and a note it relays is delivered by the harness.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from parlour.core.effects import Effect
from parlour.protocols.async_ws.shards.shard import ShardService
from parlour.storage import AsyncGameRow
from parlour.transport.runtime import Runtime
from tests.protocols.async_ws.harness import Harness
from tests.transport.test_commit_outcome import Flaky, until


class ReadsBack(Flaky):
    """A store whose commits fail on demand, whose games read back as the harness stored them."""

    def __init__(self, path: Path, games: dict[int, AsyncGameRow]) -> None:
        super().__init__(path)
        self.games = games

    def load_async_game(self, game_id: int) -> AsyncGameRow | None:
        return self.games.get(game_id)


class FailingCommit:
    """A runtime, its clock the harness's, over a store that fails the commits it is told to."""

    def __init__(self, h: Harness, path: Path) -> None:
        self.h = h
        self.store = ReadsBack(path, h.games)
        self.runtime = Runtime(clock=lambda: h.now, store=self.store, store_writer="thread")
        self.runtime.resolve_backoff = (0.001, 0.004)
        self.runtime.remote = h.run

    def send(self, conn: int, **message: Any) -> None:
        """A frame from ``conn`` to the harness's service, through the runtime, as a listener
        hands it over (with its connection)."""
        service, text = self.h.service, msgspec.json.encode(message).decode()
        self.runtime.execute(service.received(conn, text, self.h.now), service, conn)

    def behind(self, shard: ShardService) -> None:
        """Notes to ``shard`` (routed requests, gathers) go through this runtime, its node's,
        rather than straight back to the harness."""
        noted = shard.noted

        def through(data: bytes, now: float) -> list[Effect]:
            self.runtime.execute(noted(data, now), shard)
            return []

        shard.noted = through  # type: ignore[method-assign]

    async def fail(self, commit: Callable[[], None]) -> None:
        """``commit`` makes records that the store refuses, and the store cannot be asked
        whether it stored them: commits pause, and every input since is held behind it."""
        store = self.store
        store.refuse = True
        store.reachable.clear()
        commit()
        await until(lambda: store.failed_reads >= 1, "the store was asked for the outcome")
        store.refuse = False

    async def recover(self) -> None:
        """The store answers: the failed commit, and all that was held behind it, is refused."""
        self.store.reachable.set()
        await self.runtime.drain_store(10)
        await self.runtime.close_store()
