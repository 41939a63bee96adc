"""A node recovering from what happened to it, with a real Redis and a runtime that stands for
the store: a takeover whose restore finds the store away (a database restarting between the
claim and the read) lets the lease go, logs no traceback, and owns the shard once a later
balance finds the store back; a node whose liveness lapsed (frozen, cut off from Redis, for a
lease) has its connections to other nodes reconnect, since the owners may have forgotten them;
a node that cannot reach Redis or read its store as it joins says why in one line."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from parlour.cluster.node import ClusterNode
from parlour.cluster.ownership import Owned
from parlour.core.effects import Effect
from parlour.storage import StoreFailure, open_store
from tests.processes import clean_env, free_port, serve_command


class Runtime:
    """What the node asks of the runtime here: claims that succeed, effects recorded."""

    def __init__(self) -> None:
        self.fences: dict[Any, Any] = {}
        self.remote: Any = None
        self.on_fenced: Any = None

    def number_connections(self, first: int) -> None:
        pass

    def execute(self, effects: list[Effect], service: Any = None, origin: Any = None) -> None:
        pass

    async def stored(self, effects: list[Effect], service: Any = None, origin: Any = None) -> None:
        pass

    def show(self, effects: list[Effect]) -> None:
        pass

    def clock(self) -> float:
        return 0.0


class Shard:
    def tick(self, now: float) -> list[Effect]:
        return []


def test_a_restore_that_finds_the_store_away_lets_the_lease_go_and_is_tried_again(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    restores: list[str] = []

    async def restore(heartbeat: float | None) -> Owned:
        if not restores:
            restores.append("failed")
            raise StoreFailure("postgresql://db: server closed the connection unexpectedly")
        restores.append("restored")
        return Owned(Shard())  # type: ignore[arg-type]

    async def scenario() -> None:
        node = ClusterNode(redis_url, Runtime(), {"async/0": restore}, ttl=2.0, shards=["async/0"])  # type: ignore[arg-type]
        await node.start()
        try:
            # The first restore failed: no owner, the lease free again at once.
            assert restores == ["failed"] and "async/0" not in node.ownership.owned
            assert await node.leases["async/0"].holder() is None
            await node.shares.balance()
            assert restores == ["failed", "restored"] and "async/0" in node.ownership.owned
        finally:
            await node.stop()

    with caplog.at_level(logging.WARNING, logger="parlour.cluster"):
        asyncio.run(scenario())
    assert "cannot restore async/0 from the store" in caplog.text
    assert "Traceback" not in caplog.text and not any(record.exc_info for record in caplog.records)


class Service:
    """Stands for a ClusterService: counts the times its connections were made to reconnect."""

    def __init__(self) -> None:
        self.lost = 0

    def messages_lost(self) -> None:
        self.lost += 1


def test_a_node_whose_liveness_lapsed_has_its_connections_reconnect(redis_url: str) -> None:
    async def scenario() -> None:
        node = ClusterNode(redis_url, Runtime(), {}, ttl=2.0)  # type: ignore[arg-type]
        await node.start()
        service = Service()
        node.services["async"] = service  # type: ignore[assignment]
        try:
            await node.liveness.keep_alive()
            assert service.lost == 0  # refreshed in time: nothing to do
            # Frozen for longer than a lease: the key is gone when the node next refreshes it.
            await node.client.delete(f"parlour:node:{node.node}:alive")
            await node.liveness.keep_alive()
            assert service.lost == 1
            await node.liveness.keep_alive()
            assert service.lost == 1
        finally:
            node.services.clear()
            await node.stop()

    asyncio.run(scenario())


def test_a_node_that_cannot_reach_redis_as_it_joins_says_why_in_one_line(tmp_path: Path) -> None:
    """Redis away as a node starts (a restart under way): the node exits with status 1 and its
    reason on one line, no traceback, for its supervisor to start it again."""
    command = serve_command(
        free_port(), "--cluster", f"redis://127.0.0.1:{free_port()}/0", store=str(tmp_path / "p.db")
    )
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=clean_env())
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert "parlour: cannot join the cluster: Redis does not answer" in done.stderr, done.stderr


def test_a_node_that_cannot_read_its_store_as_it_joins_says_why_in_one_line(
    tmp_path: Path, redis_url: str
) -> None:
    """The store opens but fails the first read of a joining node (PostgreSQL stopping under
    it; here a table gone): the node exits with status 1 and its reason on one line."""
    store = tmp_path / "p.db"
    open_store(str(store)).close()
    with sqlite3.connect(store) as db:
        db.execute("ALTER TABLE accounts RENAME TO accounts_elsewhere")
    command = serve_command(free_port(), "--cluster", redis_url, store=str(store))
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=clean_env())
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert "parlour: cannot join the cluster: the store does not answer" in done.stderr, done.stderr


def test_a_service_speaks_only_once_its_tenure_is_certain(redis_url: str) -> None:
    """A new owner's first words (the /async hub's "nobody is signed in with me yet") come once
    the takeover is announced, never from a tenure whose lease lapsed while it restored: said
    late, they would clear every node's directory after players signed in with the real hub."""
    begun: list[str] = []
    lapse = [True]

    async def restore(heartbeat: float | None) -> Owned:
        if lapse[0]:
            node.leases["async"].drop()  # the lease lapsed while the store was read
        return Owned(Shard(), begin=lambda: begun.append("hello"))  # type: ignore[arg-type]

    async def scenario() -> None:
        await node.start()
        try:
            assert "async" not in node.ownership.owned and begun == []
            lapse[0] = False
            for _ in range(50):  # the node's own lease loop may take it first
                if "async" in node.ownership.owned:
                    break
                await node.ownership.step("async")
                await asyncio.sleep(0.05)
            assert "async" in node.ownership.owned and begun == ["hello"]
        finally:
            await node.stop()

    node = ClusterNode(redis_url, Runtime(), {"async": restore}, ttl=2.0)  # type: ignore[arg-type]
    asyncio.run(scenario())
