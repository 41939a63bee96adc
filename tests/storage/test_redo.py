"""The redo log (storage/redo.py) and its writer (storage/applier.py), without a server: frames
read only whole, segments followed and deleted once applied, a torn or corrupt tail skipped, a
batch never applied twice, a stopped server's log applied when the store is opened."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from parlour.storage import MetaRow, MoveRow, Record, StoreFailure
from parlour.storage.applier import WORDS, Applier, merged
from parlour.storage.batches import batch_body
from parlour.storage.redo import RedoLog, SegmentReader, frame, lock, recover, segments
from parlour.storage.sqlite import SQLiteStore
from tests.storage.rows import game, move_rows

MARK = "commit_mark_test"


def batch(number: int, records: list[Record]) -> bytes:
    """A batch as the runtime makes it: its records, then the run's commit mark."""
    return batch_body(number, 0, [*records, MetaRow(MARK, str(number))])


def moves(first: int, count: int) -> list[Record]:
    return list(move_rows("game-0001", first + count, first))


def stored_moves(store: SQLiteStore) -> list[int]:
    loaded = store.load_game("game-0001")
    assert loaded is not None
    return [row.seq for row in loaded[1]]


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    opened = SQLiteStore(tmp_path / "p.db")
    opened.commit([game(1)])
    return opened


def test_a_reader_takes_only_whole_frames_and_follows_the_segments(tmp_path: Path) -> None:
    directory = tmp_path / "redo"
    directory.mkdir()
    log = RedoLog(directory, segment_bytes=200)  # a new segment once one is past 200 bytes
    reader = SegmentReader(directory)
    bodies = [bytes([n]) * 150 for n in range(5)]
    log.append(bodies[0])
    assert reader.read() == [bodies[0]]
    # A write in progress, as a reader may see it: not read until the frame is whole.
    whole = frame(bodies[1])
    with (directory / "000000000001.log").open("ab", buffering=0) as file:
        file.write(whole[:10])
        assert reader.read() == []
        file.write(whole[10:])
    assert reader.read() == [bodies[1]]
    log._size += len(whole)  # as if the log had written it
    for body in bodies[2:]:
        log.append(body)
    assert reader.read() == bodies[2:]
    assert [path.name for path in reader.finished] == ["000000000001.log", "000000000002.log"]
    assert [number for number, _ in segments(directory)] == [1, 2, 3]
    log.close()
    reader.close()


def test_a_frame_that_fails_its_checksum_ends_what_is_read_of_its_segment(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = tmp_path / "redo"
    directory.mkdir()
    log = RedoLog(directory)
    log.append(b"first")
    log.append(b"second")
    path = directory / "000000000001.log"
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 0xFF  # the last byte of "second"
    path.write_bytes(raw)
    reader = SegmentReader(directory)
    assert reader.read() == [b"first"]  # the rest may still be being written: kept
    with caplog.at_level(logging.WARNING, "parlour.storage"):
        assert reader.read(final=True) == []
    assert "not a whole batch" in caplog.text
    log.close()
    reader.close()


def test_after_a_failed_write_the_log_goes_on_in_a_new_segment(tmp_path: Path) -> None:
    directory = tmp_path / "redo"
    directory.mkdir()
    log = RedoLog(directory)
    log.append(b"kept")
    real = os.write
    calls = []

    def failing(fd: int, data: bytes) -> int:
        calls.append(fd)
        written = real(fd, data[:5])  # part of the frame, then the disk is full
        assert written == 5
        raise OSError(28, "No space left on device")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "write", failing)
        with pytest.raises(OSError):
            log.append(b"lost")
    log.append(b"after")
    reader = SegmentReader(directory)
    assert reader.read() == [b"kept", b"after"]
    assert len(calls) == 1 and len(segments(directory)) == 2
    log.close()
    reader.close()


def test_recovery_applies_what_the_store_does_not_hold_and_deletes_the_log(
    tmp_path: Path, store: SQLiteStore
) -> None:
    directory = store.redo_directory
    directory.mkdir()
    log = RedoLog(directory, segment_bytes=1)  # a segment a batch
    for number in range(1, 5):
        log.append(batch(number, moves(2 * (number - 1), 2)))
    log.close()
    # The writer had applied the first two before the server died.
    store.commit([*moves(0, 4), MetaRow(MARK, "2")])
    assert recover(store, directory) == 2
    assert stored_moves(store) == list(range(8))
    assert store.meta(MARK) == "4"
    assert segments(directory) == []
    assert recover(store, directory) == 0


def test_opening_a_store_applies_its_log(tmp_path: Path, store: SQLiteStore) -> None:
    directory = store.redo_directory
    directory.mkdir()
    log = RedoLog(directory)
    log.append(batch(1, moves(0, 3)))
    log.close()
    store.close()
    again = SQLiteStore(tmp_path / "p.db")
    assert stored_moves(again) == [0, 1, 2]
    assert segments(directory) == []


def test_a_log_held_by_a_running_server_is_left_to_it(
    tmp_path: Path, store: SQLiteStore, caplog: pytest.LogCaptureFixture
) -> None:
    directory = store.redo_directory
    held = lock(directory)
    assert held is not None
    assert lock(directory) is None  # one holder at a time
    log = RedoLog(directory)
    log.append(batch(1, moves(0, 1)))
    with pytest.raises(StoreFailure, match="held by another process"):
        recover(store, directory, wait=0)  # a server must not start on what it cannot read
    with caplog.at_level(logging.WARNING, "parlour.storage"):
        assert recover(store, directory, wait=0, required=False) == 0
    assert "held by a running server" in caplog.text
    assert stored_moves(store) == []
    os.close(held)
    assert recover(store, directory, wait=0) == 1
    log.close()


def test_the_writer_applies_in_one_transaction_and_deletes_what_it_applied(
    tmp_path: Path, store: SQLiteStore
) -> None:
    directory = store.redo_directory
    directory.mkdir()
    log = RedoLog(directory, segment_bytes=1)
    shared = bytearray(WORDS.size)
    applier = Applier(store, directory, shared)  # type: ignore[arg-type]  # any writable buffer
    for number in range(1, 4):
        log.append(batch(number, moves(number - 1, 1)))
    applier.step()
    assert stored_moves(store) == [0, 1, 2]
    assert WORDS.unpack_from(shared) == (3, 1, 0)
    # Every segment before the one the log appends to now is gone.
    assert [number for number, _ in segments(directory)] == [3]
    log.close()
    applier.step(final=True)
    assert segments(directory) == []


def test_a_batch_the_store_refuses_is_skipped_and_the_rest_applied(
    tmp_path: Path, store: SQLiteStore, caplog: pytest.LogCaptureFixture
) -> None:
    directory = store.redo_directory
    directory.mkdir()
    log = RedoLog(directory)
    applier = Applier(store, directory)
    log.append(batch(1, moves(0, 2)))
    log.append(batch(2, moves(1, 1)))  # move 1 again: refused by the store (a bug's batch)
    log.append(batch(3, moves(2, 1)))
    with caplog.at_level(logging.ERROR, "parlour.storage"):
        applier.step()
    assert "refused batch 2" in caplog.text
    assert stored_moves(store) == [0, 1, 2]
    assert applier.applied == 3 and not applier.failing
    log.close()


class Failing:
    """A store whose commits fail until ``works`` is set (a full disk, say)."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store
        self.works = False

    def meta(self, key: str) -> str | None:
        return self.store.meta(key)

    def settled_meta(self, key: str) -> str | None:
        return self.store.settled_meta(key)

    def commit(self, records: list[Record]) -> None:
        if not self.works:
            raise StoreFailure("disk full")
        self.store.commit(records)


def test_a_failing_store_keeps_the_batches_until_it_works(tmp_path: Path, store: SQLiteStore) -> None:
    directory = store.redo_directory
    directory.mkdir()
    log = RedoLog(directory)
    failing = Failing(store)
    applier = Applier(failing, directory)
    log.append(batch(1, moves(0, 2)))
    applier.step()
    assert applier.failing and applier.applied == 0
    assert len(segments(directory)) == 1
    log.append(batch(2, moves(2, 1)))
    failing.works = True
    applier.step()
    assert not applier.failing and applier.applied == 2
    assert stored_moves(store) == [0, 1, 2]
    log.close()


def test_a_second_writer_skips_what_the_first_applied(tmp_path: Path, store: SQLiteStore) -> None:
    directory = store.redo_directory
    directory.mkdir()
    log = RedoLog(directory)
    log.append(batch(1, moves(0, 2)))
    first = Applier(store, directory)
    first.step()
    log.append(batch(2, moves(2, 2)))
    # The first writer died; the next one reads the log from its oldest segment.
    second = Applier(store, directory)
    second.step()
    assert stored_moves(store) == [0, 1, 2, 3]
    assert second.applied == 2
    log.close()


def test_a_transaction_writes_a_runs_commit_mark_once() -> None:
    records = merged(
        [
            (1, 0, [*moves(0, 1), MetaRow(MARK, "1")]),
            (2, 0, [*moves(1, 1), MetaRow("motd", "hi"), MetaRow(MARK, "2")]),
        ]
    )
    assert [type(record) for record in records] == [MoveRow, MoveRow, MetaRow, MetaRow]
    assert records[-1] == MetaRow(MARK, "2")
