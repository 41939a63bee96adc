"""The runtime committing through the redo log (store_writer = "log"): acknowledged once
appended, read back only once applied, a writer process that dies replaced, a failed append
refused like a failed commit."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from parlour.core.effects import Store
from parlour.storage import MetaRow, StoreFailure
from parlour.storage.applier import WORDS
from parlour.storage.redo import segments
from parlour.storage.sqlite import SQLiteStore
from parlour.transport.redo import LogCommitter
from parlour.transport.runtime import Runtime


def committer_of(runtime: Runtime) -> LogCommitter:
    committer = runtime._committer
    assert isinstance(committer, LogCommitter)
    return committer


def test_a_change_is_acknowledged_from_the_log_and_read_once_applied(tmp_path: Path) -> None:
    async def test() -> None:
        store = SQLiteStore(tmp_path / "p.db")
        runtime = Runtime(store=store, store_writer="log")
        await runtime.stored([Store([MetaRow("motd", "hello")])])
        committer = committer_of(runtime)
        assert len(segments(store.redo_directory)) == 1
        # A read waits for the writer to have applied everything acknowledged.
        assert await runtime.in_store_thread(lambda: store.meta("motd")) == "hello"
        assert committer.applied >= 1 and runtime.transactions >= 1 and runtime.unapplied == 0
        await runtime.stored([Store([MetaRow("motd", "again")])])
        await runtime.close_store()
        # The writer applied the rest as it stopped, and deleted the log.
        assert store.meta("motd") == "again"
        assert segments(store.redo_directory) == []
        store.close()

    asyncio.run(asyncio.wait_for(test(), 20))


def test_a_writer_process_that_dies_is_replaced_and_nothing_is_lost(tmp_path: Path) -> None:
    async def test() -> None:
        store = SQLiteStore(tmp_path / "p.db")
        runtime = Runtime(store=store, store_writer="log")
        await runtime.stored([Store([MetaRow("first", "1")])])
        committer = committer_of(runtime)
        process = committer._process
        assert process is not None
        committer.restart_seconds = 0.0  # at once (1 s by default, against a crash loop)
        process.kill()
        await asyncio.to_thread(process.wait, 10)
        # Acknowledged while no writer runs: in the log, applied by the next writer.
        await runtime.stored([Store([MetaRow("second", "2")])])
        assert await runtime.in_store_thread(lambda: (store.meta("first"), store.meta("second"))) == (
            "1",
            "2",
        )
        assert committer._process is not process
        await runtime.close_store()
        store.close()

    asyncio.run(asyncio.wait_for(test(), 20))


def test_a_failed_append_is_refused_and_the_next_change_stored(tmp_path: Path) -> None:
    async def test() -> None:
        store = SQLiteStore(tmp_path / "p.db")
        runtime = Runtime(store=store, store_writer="log")
        await runtime.stored([Store([MetaRow("before", "1")])])
        committer = committer_of(runtime)
        append = committer._log.append

        def full(body: bytes) -> None:
            raise OSError(28, "No space left on device")

        committer._log.append = full  # type: ignore[method-assign]
        with pytest.raises(StoreFailure):
            await runtime.stored([Store([MetaRow("lost", "1")])])
        assert runtime.store_status == "failing"
        committer._log.append = append  # type: ignore[method-assign]
        await runtime.drain_store(10)
        await runtime.stored([Store([MetaRow("after", "1")])])
        assert runtime.store_status == "ok"
        read = await runtime.in_store_thread(lambda: [store.meta(key) for key in ("before", "lost", "after")])
        assert read == ["1", None, "1"]
        await runtime.close_store()
        store.close()

    asyncio.run(asyncio.wait_for(test(), 20))


def test_healthz_reports_a_store_the_writer_cannot_apply_to(tmp_path: Path) -> None:
    async def test() -> None:
        store = SQLiteStore(tmp_path / "p.db")
        runtime = Runtime(store=store, store_writer="log")
        await runtime.stored([Store([MetaRow("motd", "hello")])])
        committer = committer_of(runtime)
        shared = committer._shared
        assert shared is not None
        await runtime.in_store_thread(lambda: None)  # applied: the writer is idle
        applied, transactions, _ = WORDS.unpack_from(shared)
        assert runtime.store_status == "ok"
        # What the writer process says of its last transaction (storage/applier.py).
        WORDS.pack_into(shared, 0, applied, transactions, 1)
        assert runtime.store_status == "failing"
        await runtime.close_store()
        store.close()

    asyncio.run(asyncio.wait_for(test(), 20))


def test_a_second_server_on_the_same_store_commits_without_the_log(tmp_path: Path) -> None:
    async def test() -> None:
        store = SQLiteStore(tmp_path / "p.db")
        other = SQLiteStore(tmp_path / "p.db")
        first = Runtime(store=store, store_writer="log")
        await first.stored([Store([MetaRow("one", "1")])])
        second = Runtime(store=other, store_writer="log")
        await second.stored([Store([MetaRow("two", "2")])])
        assert not isinstance(second._committer, LogCommitter)
        await second.close_store()
        await first.close_store()
        assert store.meta("two") == "2" and store.meta("one") == "1"
        store.close()
        other.close()

    asyncio.run(asyncio.wait_for(test(), 20))


def test_store_sync_full_commits_in_the_writer_process(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "p.db", "full")
    assert store.redo_log() is None
    store.close()
    assert not os.path.exists(tmp_path / "p.db-redo")
