"""The store's writer thread: batches waiting while it writes go into one transaction; after a
failed commit, the rest of that generation is refused unwritten; jobs run in turn. The writer
process's committer: batches leave as they are made, answers are read when the shared word
announces them (after each input), a frame the socket cannot take waits for it to drain."""

from __future__ import annotations

import asyncio
import contextlib
import mmap
import socket
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

from parlour.core.effects import Send, Store
from parlour.storage import ChatRow, GameRow, MetaRow, MoveRow, PlayerRow, Record, StoreFailure
from parlour.storage.pipe import WORD, FrameReader, encode_ack, encode_batch
from parlour.storage.sqlite import SQLiteStore
from parlour.transport.outbox import Outbox
from parlour.transport.runtime import HEARTBEAT_SECONDS, Runtime
from parlour.transport.store_thread import StoreThread
from parlour.transport.writer import ProcessCommitter


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
    writer: StoreThread, batches: list[tuple[list[Record], int]]
) -> list[BaseException | None]:
    loop = asyncio.get_running_loop()
    answers: list[asyncio.Future[BaseException | None]] = [loop.create_future() for _ in batches]
    for (records, generation), answer in zip(batches, answers, strict=True):
        writer.commit(records, generation, answer.set_result)
    return list(await asyncio.gather(*answers))


def test_batches_that_wait_while_the_writer_writes_share_one_transaction() -> None:
    async def test() -> None:
        store = Gate()
        writer = StoreThread(store, asyncio.get_running_loop())  # type: ignore[arg-type]
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
        writer = StoreThread(store, asyncio.get_running_loop())  # type: ignore[arg-type]
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
        writer = StoreThread(store, asyncio.get_running_loop())  # type: ignore[arg-type]
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


class FakeWriter:
    """The writer process's end of a ProcessCommitter's socket, played by the test: it reads
    the frames the committer writes, and answers when told to, marking its answers in the
    shared word as the writer does (storage/pipe.py)."""

    def __init__(self, committer: ProcessCommitter) -> None:
        ours, self.sock = socket.socketpair()
        self.word = mmap.mmap(-1, WORD.size)
        committer.attach(ours, self.word)
        self.reader = FrameReader()

    def frames(self) -> list[bytes]:
        """The frames written so far (each batch is written when it is made)."""
        self.sock.setblocking(False)
        frames: list[bytes] = []
        with contextlib.suppress(BlockingIOError):
            while data := self.sock.recv(1 << 20):
                frames += self.reader.feed(data)
        return frames

    def answer(self, *batches: int, mark: bool = True) -> None:
        self.sock.sendall(b"".join(encode_ack(batch, batch, None) for batch in batches))
        if mark:
            WORD.pack_into(self.word, 0, batches[-1])


def test_batches_leave_at_once_and_answers_are_read_when_the_shared_word_says_they_wait() -> None:
    loop = asyncio.new_event_loop()
    try:
        committer = ProcessCommitter("unused.db", "normal", loop)
        writer = FakeWriter(committer)
        answered: list[BaseException | None] = []
        batches = [[PlayerRow(f"p{n}", f"player{n}", 1.0, 1.0)] for n in range(3)]
        for batch in batches:
            committer.commit(batch, 0, answered.append)
        # Written as they were made, while the first is not answered yet: the writer takes
        # them as soon as it has answered it, without waiting for the loop to hear the answer.
        assert writer.frames() == [
            frame[4:] for frame in (encode_batch(n + 1, 0, b) for n, b in enumerate(batches))
        ]
        committer.poll()
        assert answered == []  # nothing answered: no system call, nothing read
        writer.answer(1, mark=False)
        committer.poll()
        assert answered == []  # an answer the word does not announce yet waits for the loop
        WORD.pack_into(writer.word, 0, 1)
        committer.poll()
        assert answered == [None]
        writer.answer(2, 3)
        committer.poll()
        assert answered == [None] * 3 and committer.transactions == 3
    finally:
        loop.close()


def test_when_the_writer_is_gone_what_it_had_not_answered_fails() -> None:
    async def test() -> list[BaseException | None]:
        loop = asyncio.get_running_loop()
        committer = ProcessCommitter("unused.db", "normal", loop)
        writer = FakeWriter(committer)
        answers = [loop.create_future() for _ in range(3)]
        for n, answer in enumerate(answers):
            committer.commit([PlayerRow(f"p{n}", f"player{n}", 1.0, 1.0)], 0, answer.set_result)
        writer.answer(1)
        writer.sock.close()  # the process died after its first answer
        return list(await asyncio.gather(*answers))

    first, *rest = asyncio.run(asyncio.wait_for(test(), 10))
    assert first is None
    assert len(rest) == 2 and all(isinstance(error, StoreFailure) for error in rest)


def test_a_frame_the_socket_cannot_take_whole_is_written_as_it_drains_in_order() -> None:
    async def test() -> tuple[list[bytes], list[bytes]]:
        loop = asyncio.get_running_loop()
        committer = ProcessCommitter("unused.db", "normal", loop)
        writer = FakeWriter(committer)
        big = [ChatRow(0, n, 1, "ann", "x" * 4096, 0, 1.0) for n in range(256)]  # ~1 MiB
        small = [PlayerRow("p", "player", 1.0, 1.0)]
        committer.commit(big, 0, lambda error: None)
        committer.commit(small, 0, lambda error: None)
        assert committer._out  # the socket took part of the first: the rest waits, then the second
        received: list[bytes] = []
        writer.sock.setblocking(False)
        while len(received) < 2:
            await asyncio.sleep(0.001)  # the loop writes more as the socket drains
            with contextlib.suppress(BlockingIOError):
                received += writer.reader.feed(writer.sock.recv(1 << 20))
        assert not committer._out
        return received, [encode_batch(1, 0, big)[4:], encode_batch(2, 0, small)[4:]]

    received, sent = asyncio.run(asyncio.wait_for(test(), 10))
    assert received == sent


def test_an_answer_is_shown_during_the_next_input_not_after_the_loop_iteration() -> None:
    """The runtime glances at the writer's word after each input: a batch committed while the
    loop handles a burst of inputs is released at the next of them."""

    async def test() -> None:
        loop = asyncio.get_running_loop()
        runtime = Runtime(store=SQLiteStore(":memory:"))
        committer = ProcessCommitter("unused.db", "normal", loop)
        writer = FakeWriter(committer)
        runtime._committer = committer
        shown: list[bytes] = []

        async def unused(*args: object) -> None:
            raise AssertionError("the outbox writes at once")

        def write_now(chunks: list[bytes]) -> bool:
            shown.extend(chunks)
            return True

        runtime.outboxes[1] = Outbox(unused, unused, write_now=write_now)
        runtime.execute([Store([move(0)]), Send(1, b"first")])
        await asyncio.sleep(0)  # the loop iteration ends: the batch leaves for the writer
        assert len(writer.frames()) == 1 and shown == []
        writer.answer(1)
        # The next input, in the same loop iteration as the answer's arrival: the first
        # input's message goes out before it is held itself.
        runtime.execute([Store([move(1)]), Send(1, b"second")])
        assert shown == [b"first"]
        await asyncio.sleep(0)
        writer.answer(2)
        runtime.execute([Send(1, b"third")])  # nothing to store: held behind the second
        assert shown == [b"first", b"second"]
        await asyncio.sleep(0)
        assert shown == [b"first", b"second", b"third"]
        runtime.store.close()  # type: ignore[union-attr]

    asyncio.run(asyncio.wait_for(test(), 10))
