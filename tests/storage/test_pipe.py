"""The writer process's frames and loop, driven in a thread over a socket pair."""

from __future__ import annotations

import socket
import threading
from collections.abc import Sequence
from pathlib import Path

from parlour.storage import GameRow, MoveRow, PlayerGone, PlayerRow, Record, SeatRow
from parlour.storage.pipe import FrameReader, decode_ack, decode_batch, encode_batch, serve
from parlour.storage.sqlite import SQLiteStore


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
