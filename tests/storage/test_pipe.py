"""The writer process's frames and loop, driven in a thread over a socket pair."""

from __future__ import annotations

import mmap
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import get_args

import pytest

from parlour.storage import (
    EXPORT_KINDS,
    AccountErased,
    AccountSeen,
    AuditRow,
    DeviceGone,
    Fence,
    GameRow,
    GameSnapshotRow,
    Heartbeat,
    MoveRow,
    PlayerGone,
    PlayerRow,
    Record,
    RelationGone,
    SeatRow,
)
from parlour.storage.batches import KINDS, decode_batch
from parlour.storage.pipe import WORD, FrameReader, decode_ack, encode_batch, serve
from parlour.storage.sqlite import SQLiteStore
from tests.storage.rows import (
    account,
    async_game,
    async_turns,
    notification,
    populate_async,
    populate_social,
    rating,
    relation,
)


def test_batches_round_trip_however_the_stream_is_cut() -> None:
    records: list[Record] = [
        PlayerRow("p", "ann", 1.0, 2.0),
        GameRow(
            id="g",
            protocol="fish",
            game="fish",
            name="t",
            state="PLAYING",
            created=1.0,
            last_active=1.0,
            seed=2**62,
            seats=[SeatRow("ann", False, "PLAYING", extra={"age": 9})],
            config={"options": {}},
        ),
        MoveRow("g", 0, 1, "remove", -1, 3.5),
        PlayerGone("p"),
    ]
    stream = encode_batch(7, 2, records) + encode_batch(8, 2, [])
    reader = FrameReader()
    frames = [frame for i in range(len(stream)) for frame in reader.feed(stream[i : i + 1])]
    assert [decode_batch(frame) for frame in frames] == [(7, 2, records), (8, 2, [])]


class Flaky(SQLiteStore):
    failures = 0

    def commit(self, records: Sequence[Record]) -> None:
        if self.failures:
            self.failures -= 1
            raise OSError("disk full")
        super().commit(records)


def test_the_writer_refuses_the_rest_of_a_failed_generation_then_writes_again(tmp_path: Path) -> None:
    store = Flaky(tmp_path / "p.db")
    server_end, writer_end = socket.socketpair()
    loop = threading.Thread(target=serve, args=(writer_end, store))
    loop.start()
    reader = FrameReader()

    def answers(count: int) -> list[tuple[int, int, str | None]]:
        got: list[tuple[int, int, str | None]] = []
        while len(got) < count:
            got += [decode_ack(frame) for frame in reader.feed(server_end.recv(65536))]
        return got

    server_end.sendall(encode_batch(1, 0, [PlayerRow("z", "zed", 1.0, 1.0)]))
    assert answers(1) == [(1, 1, None)]  # batch 1, in the writer's first transaction
    store.failures = 1
    server_end.sendall(encode_batch(2, 0, [PlayerRow("a", "ann", 1.0, 1.0)]))
    ((number, _, error),) = answers(1)
    assert number == 2 and error == "disk full"
    server_end.sendall(encode_batch(3, 0, [PlayerRow("b", "bob", 1.0, 1.0)]))
    ((number, _, error),) = answers(1)
    assert number == 3 and error is not None and "not written" in error
    server_end.sendall(encode_batch(4, 1, [PlayerRow("c", "cat", 1.0, 1.0)]))
    ((number, transaction, error),) = answers(1)
    assert number == 4 and error is None and transaction >= 1
    server_end.close()  # the server closes its end: the writer stops
    loop.join(5)
    assert not loop.is_alive()
    assert sorted(row.handle for row in store.load_live().players) == ["cat", "zed"]


def test_every_kind_of_record_has_a_tag_in_the_frames() -> None:
    assert (
        set(KINDS.values())
        == set(get_args(Record))
        == {
            *EXPORT_KINDS.values(),
            PlayerGone,
            RelationGone,
            DeviceGone,
            Fence,
            Heartbeat,
            AccountErased,
            AccountSeen,
        }
    )
    assert len(set(KINDS)) == len(KINDS)


def test_async_records_cross_with_their_bytes_unchanged() -> None:
    records = populate_async(accounts=2, games=5, turns=2)
    records.append(async_game(9, doc=bytes(range(256)) * 1024))  # 256 KiB, every byte value
    records.append(AccountErased(2, "deleted-2", [(9, bytes(range(256)))]))
    (body,) = FrameReader().feed(encode_batch(3, 1, records))
    batch, generation, decoded = decode_batch(body)
    assert (batch, generation, decoded) == (3, 1, records)
    assert [type(record) for record in decoded] == [type(record) for record in records]


def test_social_records_cross_with_their_bytes_unchanged() -> None:
    records = [*populate_social(), RelationGone(1, 2, "buddy"), DeviceGone(1, "FCM", "token-1")]
    records.append(notification(9, payload=bytes(range(256)), delivered=None))
    (body,) = FrameReader().feed(encode_batch(4, 2, records))
    assert decode_batch(body) == (4, 2, records)


def test_the_writer_commits_social_records(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "p.db")
    server_end, writer_end = socket.socketpair()
    loop = threading.Thread(target=serve, args=(writer_end, store))
    loop.start()
    reader = FrameReader()
    try:
        server_end.sendall(encode_batch(1, 0, [*populate_social(), *populate_async()]))
        server_end.sendall(encode_batch(2, 0, [RelationGone(1, 2, "buddy"), relation(3, 1, "ignore")]))
        got: list[tuple[int, int, str | None]] = []
        while len(got) < 2:
            got += [decode_ack(frame) for frame in reader.feed(server_end.recv(65536))]
    finally:
        server_end.close()
        loop.join(5)
    assert [error for _, _, error in got] == [None, None]
    try:
        assert store.relations() == [relation(1, 3), relation(2, 1, "ignore"), relation(3, 1, "ignore")]
        assert len(store.load_chat([0, 1, 2], 50)[0]) == 4
        assert [row.id for row in store.pending_notifications(now=1e12, limit=10)] == ["n-0001", "n-0002"]
    finally:
        store.close()


def test_the_writer_commits_async_records(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "p.db")
    server_end, writer_end = socket.socketpair()
    loop = threading.Thread(target=serve, args=(writer_end, store))
    loop.start()
    reader = FrameReader()
    try:
        server_end.sendall(encode_batch(1, 0, populate_async()))
        # A rating of an account nobody made: the store refuses, the writer says so.
        server_end.sendall(encode_batch(2, 1, [rating(99)]))
        server_end.sendall(encode_batch(3, 2, [account(4), *async_turns(2, 5, start=3)]))
        got: list[tuple[int, int, str | None]] = []
        while len(got) < 3:
            got += [decode_ack(frame) for frame in reader.feed(server_end.recv(65536))]
    finally:
        server_end.close()
        loop.join(5)
    assert not loop.is_alive()
    assert [(number, error is None) for number, _, error in got] == [(1, True), (2, False), (3, True)]
    assert "FOREIGN KEY" in str(got[1][2])
    try:
        assert [row.id for row in store.accounts()] == [1, 2, 3, 4]
        assert store.async_turns(2) == async_turns(2, 5)
        assert store.meta("motd") == "Welcome to the parlour"
        assert store.load_async_game(1) == async_game(1, "NOT_STARTED")
    finally:
        store.close()


@pytest.mark.parametrize("name", sorted(KINDS))
def test_every_tag_decodes_to_its_record(name: str) -> None:
    samples = {type(record): record for record in [*populate_async(), *populate_social()]}
    samples.update(
        {
            PlayerRow: PlayerRow("p", "ann", 1.0, 2.0),
            PlayerGone: PlayerGone("p"),
            MoveRow: MoveRow("g", 0, 1, "move", 2, 3.0),
            GameSnapshotRow: GameSnapshotRow("g", 1, 1, b"\x00state\xff"),
            RelationGone: RelationGone(1, 2, "ignore"),
            DeviceGone: DeviceGone(1, "STEAM", "t"),
            Fence: Fence("cluster_epoch_async", "1:1:ab"),
            Heartbeat: Heartbeat(1234.5),
            AuditRow: AuditRow("01", 5.0, "ann", "ban", "bob", "spam", "{}"),
            AccountErased: AccountErased(2, "deleted-2", [(1, b"doc")]),
            AccountSeen: AccountSeen(2, 12.5),
        }
    )
    samples[GameRow] = GameRow(
        id="g",
        protocol="tsuro",
        game="tsuro",
        name="t",
        state="PLAYING",
        created=1.0,
        last_active=1.0,
        seed=1,
    )
    record = samples[KINDS[name]]
    (body,) = FrameReader().feed(encode_batch(1, 1, [record]))
    assert decode_batch(body)[2] == [record]


def test_a_batch_that_cannot_be_encoded_fails_with_the_rest_of_its_generation(tmp_path: Path) -> None:
    """It fails without stalling what follows: the batches of its generation after it are
    refused unwritten (built on it, they must not be stored without it: as the writer does
    after a failed commit), and those of the next generation (the runtime's, once it has
    recovered) are committed."""
    import asyncio

    from parlour.storage import ChatRow, StoreFailure
    from parlour.transport.writer import ProcessCommitter

    path = tmp_path / "p.db"
    SQLiteStore(path).close()

    async def scenario() -> list[BaseException | None]:
        loop = asyncio.get_running_loop()
        committer = ProcessCommitter(str(path), "normal", loop)
        answers: list[asyncio.Future[BaseException | None]] = [loop.create_future() for _ in range(3)]
        lone = ChatRow(0, 1, 1, "ann", "\ud800", 0, 1.0)  # a lone surrogate: no UTF-8 for it
        committer.commit([lone], 0, answers[0].set_result)
        committer.commit([ChatRow(0, 1, 1, "ann", "built on it", 0, 1.0)], 0, answers[1].set_result)
        committer.commit([ChatRow(0, 1, 1, "ann", "fine", 0, 1.0)], 1, answers[2].set_result)
        try:
            return [await asyncio.wait_for(answer, 30) for answer in answers]
        finally:
            await committer.close()

    refused, behind, committed = asyncio.run(scenario())
    assert isinstance(refused, StoreFailure) and "encode" in str(refused)
    assert isinstance(behind, StoreFailure) and "not written" in str(behind)
    assert committed is None
    store = SQLiteStore(path)
    assert [row.text for row in store.load_chat([0], 10)[0]] == ["fine"]
    store.close()


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="Linux's batch scheduling")
def test_the_writer_process_is_batch_scheduled(tmp_path: Path) -> None:
    """Woken by a frame, the writer must not preempt the event loop that wrote it (pipe.py)."""
    server_end, writer_end = socket.socketpair()
    with writer_end:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "parlour.storage.pipe",
                str(tmp_path / "w.db"),
                "normal",
                str(writer_end.fileno()),
            ],
            pass_fds=[writer_end.fileno()],
        )
    try:
        server_end.sendall(encode_batch(1, 0, [PlayerRow("z", "zed", 1.0, 1.0)]))
        reader = FrameReader()
        frames: list[bytes] = []
        while not frames:
            frames = reader.feed(server_end.recv(65536))
        assert decode_ack(frames[0]) == (1, 1, None)  # answered: it is serving, so set up
        assert os.sched_getscheduler(process.pid) == os.SCHED_BATCH
    finally:
        server_end.close()
        assert process.wait(30) == 0


@pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="Linux's memfd")
def test_the_writer_marks_its_last_answer_in_the_shared_word_once_the_answer_is_sent(tmp_path: Path) -> None:
    """The server's loop reads the socket only once the word says an answer waits there."""
    server_end, writer_end = socket.socketpair()
    word_fd = os.memfd_create("test-word")
    os.ftruncate(word_fd, WORD.size)
    word = mmap.mmap(word_fd, WORD.size)
    with writer_end:
        fds = [writer_end.fileno(), word_fd]
        process = subprocess.Popen(
            [sys.executable, "-m", "parlour.storage.pipe", str(tmp_path / "w.db"), "normal", *map(str, fds)],
            pass_fds=fds,
        )
    os.close(word_fd)
    try:
        assert WORD.unpack_from(word)[0] == 0
        server_end.sendall(
            encode_batch(1, 0, [PlayerRow("a", "ann", 1.0, 1.0)])
            + encode_batch(2, 0, [PlayerRow("b", "bob", 1.0, 1.0)])
        )
        reader = FrameReader()
        frames: list[bytes] = []
        while len(frames) < 2:
            frames += reader.feed(server_end.recv(65536))
        assert [decode_ack(frame)[0] for frame in frames] == [1, 2]
        deadline = time.monotonic() + 10
        while WORD.unpack_from(word)[0] != 2:  # written just after the answers
            assert time.monotonic() < deadline
            time.sleep(0.001)
    finally:
        server_end.close()
        assert process.wait(30) == 0


def test_a_writer_that_cannot_open_its_store_says_why_in_one_line(tmp_path: Path) -> None:
    """A database away when the writer starts (restarting, in a cluster's fault): the process
    ends with its reason on one line, not a traceback in the server's log; the server refuses
    what it was committing and starts another writer."""
    from tests.processes import free_port

    server_end, writer_end = socket.socketpair()
    url = f"postgresql://nobody@127.0.0.1:{free_port()}/nothing?connect_timeout=2"
    with writer_end, server_end:
        done = subprocess.run(
            [sys.executable, "-m", "parlour.storage.pipe", url, "normal", str(writer_end.fileno())],
            pass_fds=[writer_end.fileno()],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("parlour writer: ") and done.stderr.count("\n") == 1, done.stderr


def test_a_writer_whose_server_was_killed_commits_what_it_read_and_ends_quietly(tmp_path: Path) -> None:
    """The server killed (kill -9) after sending a batch: the writer commits it, finds nobody to
    answer, and ends without a traceback (it shares the server's log)."""
    server_end, writer_end = socket.socketpair()
    path = tmp_path / "w.db"
    SQLiteStore(str(path)).close()
    with writer_end:
        process = subprocess.Popen(
            [sys.executable, "-m", "parlour.storage.pipe", str(path), "normal", str(writer_end.fileno())],
            pass_fds=[writer_end.fileno()],
            stderr=subprocess.PIPE,
            text=True,
        )
    server_end.sendall(encode_batch(1, 0, [PlayerRow("a", "ann", 1.0, 1.0)]))
    server_end.close()  # gone before the answer
    _, errors = process.communicate(timeout=30)
    assert process.returncode == 0 and "Traceback" not in errors, errors
    store = SQLiteStore(str(path))
    try:
        found = store.load_player("a")
        assert found is not None and found.handle == "ann"
    finally:
        store.close()
