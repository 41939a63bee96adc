"""The store's writer thread: batches waiting while it writes go into one transaction; after a
failed commit, the rest of that generation is refused unwritten; jobs run in turn."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

from parlour.core.effects import Store
from parlour.storage import GameRow, MetaRow, MoveRow, PlayerRow, Record, StoreFailure
from parlour.storage.pipe import encode_ack, encode_batch
from parlour.storage.sqlite import SQLiteStore
from parlour.transport.runtime import HEARTBEAT_SECONDS, Runtime
from parlour.transport.writer import ProcessCommitter, StoreWriter


class Gate:
    """A store that records each transaction and can be held or made to fail."""

    def __init__(self) -> None:
        self.transactions: list[list[Record]] = []
        self.open = threading.Event()
        self.open.set()
        self.started = threading.Event()
        self.fail_next = False

    def commit(self, records: Sequence[Record]) -> None:
        self.started.set()
        self.open.wait(5)
        if self.fail_next:
            self.fail_next = False
            raise StoreFailure("disk full")
        self.transactions.append(list(records))


def move(seq: int) -> MoveRow:
    return MoveRow("g", seq, 0, "move", 0, 1.0)


async def commit_all(
    writer: StoreWriter, batches: list[tuple[list[Record], int]]
) -> list[BaseException | None]:
    loop = asyncio.get_running_loop()
    answers: list[asyncio.Future[BaseException | None]] = [loop.create_future() for _ in batches]
    for (records, generation), answer in zip(batches, answers, strict=True):
        writer.commit(records, generation, answer.set_result)
    return list(await asyncio.gather(*answers))


def test_batches_that_wait_while_the_writer_writes_share_one_transaction() -> None:
    async def test() -> None:
        store = Gate()
        writer = StoreWriter(store, asyncio.get_running_loop())  # type: ignore[arg-type]
        store.open.clear()
        first = asyncio.ensure_future(commit_all(writer, [([move(0)], 0)]))
        await asyncio.to_thread(store.started.wait, 5)
        rest = asyncio.ensure_future(commit_all(writer, [([move(i)], 0) for i in range(1, 6)]))
        await asyncio.sleep(0.05)  # all five are queued behind the first
        store.open.set()
        assert await first == [None] and await rest == [None] * 5
        assert [len(t) for t in store.transactions] == [1, 5]
        assert writer.transactions == 2
        writer.close()

    asyncio.run(asyncio.wait_for(test(), 10))


def test_after_a_failure_the_rest_of_its_generation_is_refused_unwritten() -> None:
    async def test() -> None:
        store = Gate()
        writer = StoreWriter(store, asyncio.get_running_loop())  # type: ignore[arg-type]
        store.fail_next = True
        store.open.clear()
        answers = asyncio.ensure_future(commit_all(writer, [([move(0)], 0)]))
        await asyncio.to_thread(store.started.wait, 5)
        later = asyncio.ensure_future(commit_all(writer, [([move(1)], 0), ([move(2)], 1)]))
        await asyncio.sleep(0.05)
        store.open.set()
        (failed,) = await answers
        refused, written = await later
        assert isinstance(failed, StoreFailure) and str(failed) == "disk full"
        assert isinstance(refused, StoreFailure) and "not written" in str(refused)
        assert written is None  # a new generation: the runtime is back on stored ground
        assert store.transactions == [[move(2)]]
        writer.close()

    asyncio.run(asyncio.wait_for(test(), 10))


def test_jobs_run_on_the_writer_thread_in_turn() -> None:
    async def test() -> None:
        store = Gate()
        writer = StoreWriter(store, asyncio.get_running_loop())  # type: ignore[arg-type]
        names: list[Any] = []
        result = await asyncio.wrap_future(
            writer.run(lambda: names.append(threading.current_thread().name) or 7)
        )
        assert result == 7 and names == ["parlour-store"]
        with pytest.raises(ZeroDivisionError):
            await asyncio.wrap_future(writer.run(lambda: 1 / 0))
        writer.close()

    asyncio.run(asyncio.wait_for(test(), 10))


def test_housekeeping_beats_and_forgets_records_past_their_retention(tmp_path: Path) -> None:
    async def test() -> None:
        store = SQLiteStore(tmp_path / "p.db")
        old = GameRow(
            id="old",
            protocol="tsuro",
            game="tsuro",
            name="t",
            state="COMPLETED",
            created=1.0,
            last_active=5.0,
            seed=1,
            finished=5.0,
        )
        recent = msgspec.structs.replace(old, id="recent", finished=3_000.0)
        store.commit([old, recent])
        runtime = Runtime(store=store, store_writer="thread")
        await runtime.housekeeping(4_000.0, record_retention=3_600.0)
        assert store.load_live().heartbeat == 4_000.0
        assert [row.id for row in store.list_games()] == ["recent"]
        await runtime.housekeeping(4_000.5, record_retention=3_600.0)  # neither is due again yet
        assert store.load_live().heartbeat == 4_000.0
        await runtime.housekeeping(4_000.0 + HEARTBEAT_SECONDS)
        assert store.load_live().heartbeat == 4_000.0 + HEARTBEAT_SECONDS
        await runtime.close_store()

    asyncio.run(asyncio.wait_for(test(), 10))


def test_the_heartbeat_is_committed_by_the_writer_process_with_the_other_records(tmp_path: Path) -> None:
    """Not a transaction of the store thread's own: on SQLite that would take the write lock
    from the writer process, whose next commits would wait out the busy back-off (measured:
    commits of 10-35 ms once a second under the lobby benchmark)."""

    async def test() -> None:
        store = SQLiteStore(tmp_path / "p.db")
        runtime = Runtime(store=store, store_writer="process")
        await runtime.stored([Store([MetaRow("motd", "hello")])])
        before = runtime.transactions
        await runtime.housekeeping(4_000.0)
        assert runtime.transactions == before + 1
        assert store.load_live().heartbeat == 4_000.0
        await runtime.close_store()

    asyncio.run(asyncio.wait_for(test(), 20))


def test_a_cancelled_job_does_not_stop_the_writer(tmp_path: Path) -> None:
    async def test() -> None:
        store = SQLiteStore(tmp_path / "p.db")
        runtime = Runtime(store=store, store_writer="thread")
        started = threading.Event()
        release = threading.Event()

        def slow() -> None:
            started.set()
            release.wait(5)

        first = asyncio.ensure_future(runtime.in_store_thread(slow))
        await asyncio.to_thread(started.wait, 5)
        cancelled = asyncio.ensure_future(runtime.in_store_thread(lambda: "never"))
        await asyncio.sleep(0)
        cancelled.cancel()
        release.set()
        await first
        assert await runtime.in_store_thread(lambda: "still working") == "still working"
        await runtime.close_store()

    asyncio.run(asyncio.wait_for(test(), 10))


class Wire:
    """A socket's transport as ProcessCommitter uses it: what is written, one item a call."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return False


def test_batches_made_while_the_writer_commits_leave_in_one_write_at_its_answer() -> None:
    loop = asyncio.new_event_loop()
    try:
        committer = ProcessCommitter("unused.db", "normal", loop)
        wire = Wire()
        committer.connection_made(wire)  # type: ignore[arg-type]
        answered: list[BaseException | None] = []
        batches = [[PlayerRow(f"p{n}", f"player{n}", 1.0, 1.0)] for n in range(4)]
        for batch in batches[:3]:
            committer.commit(batch, 0, answered.append)
        # The first leaves at once; the writer reads the next ones only after answering it.
        assert wire.writes == [encode_batch(1, 0, batches[0])]
        committer.data_received(encode_ack(1, 1, None))
        assert answered == [None]
        assert wire.writes[1:] == [encode_batch(2, 0, batches[1]) + encode_batch(3, 0, batches[2])]
        committer.commit(batches[3], 0, answered.append)  # still two unanswered: held
        assert len(wire.writes) == 2
        committer.data_received(encode_ack(2, 2, None) + encode_ack(3, 2, None))
        assert wire.writes[2:] == [encode_batch(4, 0, batches[3])] and answered == [None] * 3
        committer.data_received(encode_ack(4, 3, None))
        assert answered == [None] * 4 and committer.transactions == 3
        # The writer gone: a held batch fails with the unanswered ones, and is never written.
        committer.commit(batches[0], 0, answered.append)
        committer.commit(batches[1], 0, answered.append)
        committer.connection_lost(None)
        assert len(wire.writes) == 4 and all(isinstance(error, StoreFailure) for error in answered[4:])
        assert len(answered) == 6
    finally:
        loop.close()
