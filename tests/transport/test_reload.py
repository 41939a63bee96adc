"""The runtime knows no service's records and no store class: after a failed commit each
service reads back what it needs (its ``reload``, on the store's thread) and is handed exactly
that (``store_failed``); whether commits go to a writer process is the store's to say."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from parlour.core.effects import ConnId, Effect, Send, Store
from parlour.storage import Record
from parlour.storage.sqlite import SQLiteStore
from parlour.transport.runtime import Runtime
from tests.storage.rows import account
from tests.transport.test_store_faults import FullDisk
from tests.transport.wire import Wire


class Reverting:
    """A service that records what it is asked to read back, where, and what it is told."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.read: list[tuple[list[Record], bool]] = []
        self.told: list[tuple[list[Record], list[ConnId], Any]] = []

    def reload(self, records: list[Record], store: Any) -> str:
        self.read.append((list(records), threading.current_thread() is threading.main_thread()))
        return f"{self.name}: {len(records)} rows read"

    def store_failed(
        self, records: list[Record], origins: list[ConnId], reload: Any, now: float
    ) -> list[Effect]:
        self.told.append((records, origins, reload))
        return []


def test_each_service_is_handed_what_its_own_reload_read_on_the_store_thread(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = FullDisk(tmp_path / "r.db")
        runtime = Runtime(store=store, store_writer="thread")
        wire = Wire(runtime)
        wire.add(1)
        wire.add(2)
        first, second = Reverting("first"), Reverting("second")
        store.full = True
        # One loop iteration: both inputs are one batch, and fail together.
        runtime.execute([Store([account(1)]), Send(1, b"one")], first, 1)
        runtime.execute([Store([account(2), account(3)]), Send(2, b"two")], second, 2)
        await runtime.drain_store(10)
        assert first.read == [([account(1)], False)]  # read off the event loop's thread
        assert second.read == [([account(2), account(3)], False)]
        assert first.told == [([account(1)], [1], "first: 1 rows read")]
        assert second.told == [([account(2), account(3)], [2], "second: 2 rows read")]
        assert wire.writes == {1: [], 2: []}  # nothing unsaved was shown
        wire.stop()
        store.full = False
        await runtime.close_store()

    asyncio.run(scenario())


class InProcess(SQLiteStore):
    """A store that says it cannot be committed to from a writer process."""

    commits = 0

    def process_writer(self) -> tuple[str, str] | None:
        return None

    def commit(self, records: Sequence[Record]) -> None:
        self.commits += 1
        super().commit(records)


def test_a_store_without_a_writer_process_is_committed_to_on_the_store_thread(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = InProcess(tmp_path / "t.db")
        runtime = Runtime(store=store, store_writer="process")
        await runtime.stored([Store([account(1)])])
        assert store.commits == 1 and [row.id for row in store.accounts()] == [1]
        await runtime.close_store()

    asyncio.run(scenario())


def test_an_sql_store_is_opened_by_the_writer_process_at_its_path(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "w.db", sync="full")
    assert store.process_writer() == (str(tmp_path / "w.db"), "full")
    store.close()
