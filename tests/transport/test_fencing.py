"""The runtime commits every record with the fences in force when it was made (Runtime.fences, a
cluster node's tokens): once another node has claimed the service, nothing more is stored or
shown, the service is told as of any failed commit, and the claimed fence is dropped and
reported (Runtime.on_fenced) so that the node stops acting for the service at once."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from parlour.core.effects import ConnId, Effect, Send, Store
from parlour.storage import Fence, MetaRow, Record
from parlour.storage.sqlite import SQLiteStore
from parlour.transport.runtime import Runtime
from parlour.transport.websocket import text_message
from tests.storage.rows import account
from tests.transport.wire import Wire

KEY = "cluster_epoch_async"


class Told:
    """A service that only records the failed commits it is told of."""

    def __init__(self) -> None:
        self.failed: list[list[Record]] = []

    def reload(self, records: list[Record], store: Any) -> str:
        return "nothing to read back"

    def store_failed(
        self, records: list[Record], origins: list[ConnId], reload: Any, now: float
    ) -> list[Effect]:
        assert reload == "nothing to read back"  # what its own reload returned
        self.failed.append(records)
        return []


@pytest.mark.parametrize("writer", ["thread", "process"])
def test_nothing_made_under_a_claimed_fence_is_stored_or_shown(tmp_path: Path, writer: str) -> None:
    async def scenario() -> None:
        path = tmp_path / "p.db"
        store = SQLiteStore(path)
        runtime = Runtime(store=store, store_writer=writer)
        wire = Wire(runtime)
        wire.add(1)
        service = Told()
        mine = Fence(KEY, "1:1:aaaa")
        await runtime.stored([Store([MetaRow(KEY, mine.value)])])  # this node's claim
        runtime.fences[service] = mine
        lost: list[Fence] = []
        runtime.on_fenced = lost.append
        runtime.execute([Store([account(1)]), Send(1, b"one")], service)
        await runtime.drain_store(10)
        assert wire.writes[1] == [[text_message(b"one")]]

        other = SQLiteStore(path)  # another node takes the service over
        other.commit([MetaRow(KEY, "2:2:bbbb")])
        other.close()
        runtime.execute([Store([account(2)]), Send(1, b"two")], service)
        await runtime.drain_store(10)
        assert wire.writes[1] == [[text_message(b"one")]]  # never shown
        assert [record for records in service.failed for record in records] == [account(2)]
        # The failed commit's fence is read back: claimed, so it is dropped and the node told
        # (a cluster node demotes the service at once); what follows is no longer fenced.
        assert lost == [mine] and runtime.fences == {}
        runtime.execute([Store([account(3)]), Send(1, b"three")], service)
        await runtime.drain_store(10)
        assert wire.writes[1][-1] == [text_message(b"three")]
        assert [row.id for row in store.accounts()] == [1, 3]
        wire.stop()
        await runtime.close_store()

    asyncio.run(scenario())


def test_a_claimed_fence_refuses_only_what_its_own_service_made_in_the_batch(tmp_path: Path) -> None:
    """Each service's records carry its own fence only: once a shard is claimed by another
    node, the records of a service that holds no fence (a table, this node's alone) are still
    stored, and the shard's are refused."""

    async def scenario() -> None:
        path = tmp_path / "p.db"
        store = SQLiteStore(path)
        runtime = Runtime(store=store)
        wire = Wire(runtime)
        wire.add(1)
        shard, table = Told(), Told()
        mine = Fence(KEY, "1:1:aaaa")
        await runtime.stored([Store([MetaRow(KEY, mine.value)])])
        runtime.fences[shard] = mine
        other = SQLiteStore(path)
        other.commit([MetaRow(KEY, "2:2:bbbb")])
        other.close()
        # The table's commit alone: not fenced, stored although the shard was claimed.
        runtime.execute([Store([account(1)]), Send(1, b"table")], table)
        await runtime.drain_store(10)
        assert wire.writes[1] == [[text_message(b"table")]]
        runtime.execute([Store([account(2)]), Send(1, b"shard")], shard)
        await runtime.drain_store(10)
        assert wire.writes[1] == [[text_message(b"table")]]
        assert [record for records in shard.failed for record in records] == [account(2)]
        assert table.failed == [] and runtime.fences == {}
        assert [row.id for row in store.accounts()] == [1]
        wire.stop()
        await runtime.close_store()

    asyncio.run(scenario())
