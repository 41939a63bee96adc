"""Cluster nodes as subprocesses: ``parlour serve --cluster`` on one shared store and one Redis."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.processes import RestartableServer

__all__ = ["LEASE", "Cluster", "cluster_of", "health"]

#: A short lease keeps the failover tests fast (a dead owner is replaced within about this);
#: not shorter: on a loaded machine an owner's renewals (every third of it) must not come late.
LEASE = 2.0
#: The shards of /async games a node spreads over (the default of cluster_shards).
SHARDS = 24


def health(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as answer:
        body: dict[str, Any] = json.loads(answer.read())
        return body


@dataclass
class Cluster:
    """Nodes sharing ``store`` and ``redis``; the first started owns every service."""

    folder: Path
    redis: str
    store: str
    nodes: list[RestartableServer] = field(default_factory=list)
    #: The lease every node of this cluster is started with.
    lease: float = LEASE

    def start(self, count: int = 2, *extra: str) -> list[RestartableServer]:
        for _ in range(count):
            node = RestartableServer(
                self.store if "://" in self.store else Path(self.store),
                self.folder / f"node{len(self.nodes) + 1}.log",
                ("--cluster", self.redis, "--cluster-lease", str(self.lease), *extra),
            )
            node.start()
            self.nodes.append(node)
        return self.nodes

    def stop(self) -> None:
        for node in self.nodes:
            if node.process is not None and node.process.poll() is None:
                node.stop()

    async def owner_is(self, node: RestartableServer, timeout: float = 10.0, shards: int = 0) -> None:
        """Until ``node`` reports it owns both stateful services, and ``shards`` shards of /async
        games (all of them once the other nodes are gone); with none asked for, until the live
        nodes hold the shards in fair shares."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            state = await asyncio.to_thread(health, node.port)
            owns = state.get("cluster_owns", [])
            held = len(state.get("cluster_shards", []))
            if (
                owns == ["apologies", "async"]
                and held >= shards
                and (shards or await asyncio.to_thread(self.settled))
            ):
                return
            assert asyncio.get_running_loop().time() < deadline, f"node on {node.port} owns only {owns}"
            await asyncio.sleep(0.1)

    def settled(self) -> bool:
        """Whether the live nodes hold every shard in fair shares: no handover is under way, so a
        game does not change owner while a test plays it (unless the test makes it)."""
        live = [node for node in self.nodes if node.process is not None and node.process.poll() is None]
        counts = [len(health(node.port).get("cluster_shards", [])) for node in live]
        return sum(counts) == SHARDS and all(count <= -(-SHARDS // len(live)) for count in counts)

    def logs(self) -> str:
        return "\n".join(node.log.read_text(errors="replace") for node in self.nodes if node.log.exists())


@contextmanager
def cluster_of(
    folder: Path, redis: str, store: str | None = None, count: int = 2, lease: float = LEASE
) -> Iterator[Cluster]:
    """``count`` nodes on ``store`` (a fresh SQLite file by default, or a PostgreSQL URL)."""
    cluster = Cluster(folder, redis, store or str(folder / "parlour.db"), lease=lease)
    try:
        cluster.start(count)
        yield cluster
    finally:
        cluster.stop()
