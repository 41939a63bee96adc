"""Broadcast: one message for many connections, framed once, carried out like one Send each.

The runtime gathers a round's messages by connection (one write each, in effect order), frames a
Broadcast's message once for all its recipients, keeps closes in order, and holds a Broadcast
behind the records of its input like any send (stored before shown)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from websockets.asyncio.client import connect

from parlour.core.effects import Broadcast, Close, ConnId, Effect, Send, Store
from parlour.storage import ChatRow
from parlour.storage.sqlite import SQLiteStore
from parlour.transport.outbox import Outbox
from parlour.transport.runtime import Runtime
from parlour.transport.websocket import serve_websocket, text_frame, text_message
from tests.transport.services import Idle
from tests.transport.wire import Wire


def test_a_round_goes_out_in_one_write_per_connection_in_effect_order() -> None:
    async def scenario() -> None:
        runtime = Runtime()
        wire = Wire(runtime)
        for conn in (1, 2, 3):
            wire.add(conn)
        runtime.execute(
            [
                Send(1, b"echo"),
                Broadcast([2, 3, 9], b"line one"),  # 9: gone already, skipped
                Send(2, b"private"),
                Broadcast([3, 2, 1], b"line two"),
            ]
        )
        assert wire.writes == {
            1: [[text_message(b"echo"), text_message(b"line two")]],
            2: [[text_message(b"line one"), text_message(b"private"), text_message(b"line two")]],
            3: [[text_message(b"line one"), text_message(b"line two")]],
        }
        # Framed once: the very same bytes went to every recipient.
        assert wire.writes[2][0][0] is wire.writes[3][0][0]
        assert wire.writes[1][0][1] is wire.writes[2][0][2] is wire.writes[3][0][1]
        wire.stop()

    asyncio.run(scenario())


def test_broadcasts_to_one_shared_list_go_out_in_one_pass_with_their_substitutes() -> None:
    async def scenario() -> None:
        runtime = Runtime()
        wire = Wire(runtime)
        for conn in (1, 2, 3, 4):
            wire.add(conn)
        lobby = [1, 2, 3, 4, 9]  # 9: gone already
        runtime.execute(
            [
                Broadcast(lobby, b"ann: hi", {1: b"ann: hi (yours)"}),
                Store([]),  # records stored already: no break in the run
                Broadcast(lobby, b"bob: yo", {2: b"bob: yo (yours)", 3: b""}),  # 3 ignores bob
                Broadcast(lobby, b"cid: hey", {3: b"cid: hey (yours)"}),
                Send(4, b"private"),  # ends the run: order is kept around it
                Broadcast(lobby, b"dan: bye", {4: b"dan: bye (yours)"}),
            ]
        )
        m = text_message
        assert wire.writes == {
            1: [[m(b"ann: hi (yours)") + m(b"bob: yo") + m(b"cid: hey"), m(b"dan: bye")]],
            2: [[m(b"ann: hi") + m(b"bob: yo (yours)") + m(b"cid: hey"), m(b"dan: bye")]],
            3: [[m(b"ann: hi") + m(b"cid: hey (yours)"), m(b"dan: bye")]],
            4: [[m(b"ann: hi") + m(b"bob: yo") + m(b"cid: hey"), m(b"private"), m(b"dan: bye (yours)")]],
        }
        # The joined lines were framed once for everyone without a substitute.
        assert wire.writes[1][0][1] is wire.writes[2][0][1] is wire.writes[3][0][1]
        # Broadcast.sends() says the same, one broadcast at a time.
        assert Broadcast([1, 2, 3], b"x", {2: b"", 3: b"y"}).sends() == [Send(1, b"x"), Send(3, b"y")]
        wire.stop()

    asyncio.run(scenario())


def test_outboxes_without_a_frame_get_the_message_itself() -> None:
    async def scenario() -> None:
        runtime = Runtime()
        wire = Wire(runtime)
        wire.add(1, framed=False)  # a line protocol: no framing
        wire.add(2)
        runtime.execute([Broadcast([1, 2], b"hello\n")])
        assert wire.writes == {1: [[b"hello\n"]], 2: [[text_frame(b"hello\n") + b"hello\n"]]}
        wire.stop()

    asyncio.run(scenario())


def test_a_close_keeps_its_place_among_broadcasts() -> None:
    async def scenario() -> None:
        runtime = Runtime()
        wire = Wire(runtime)
        wire.add(1)
        wire.add(2)
        runtime.execute([Broadcast([1, 2], b"before"), Close(1, 4000, "bye"), Broadcast([1, 2], b"after")])
        await wire.settle()
        assert wire.writes[1] == [[text_message(b"before")]]  # "after" is dropped: 1 is closing
        assert wire.closes == {1: (4000, "bye")}
        assert wire.writes[2] == [[text_message(b"before"), text_message(b"after")]]
        wire.stop()

    asyncio.run(scenario())


def test_a_connection_that_cannot_take_it_now_gets_it_from_its_writer_in_order() -> None:
    async def scenario() -> None:
        runtime = Runtime()
        wire = Wire(runtime)
        wire.add(1)
        wire.add(2)
        wire.open[2] = False  # paused by flow control
        runtime.execute([Broadcast([1, 2], b"first")])
        runtime.execute([Broadcast([1, 2], b"second")])
        assert wire.writes[2] == [] and runtime.outboxes[2].pending == 2
        await wire.settle()  # the writer task sends what waited, in order, in one write
        assert wire.writes[1] == [[text_message(b"first")], [text_message(b"second")]]
        assert wire.writes[2] == [[text_message(b"first"), text_message(b"second")]]
        wire.stop()

    asyncio.run(scenario())


def test_put_framed_queues_behind_what_waits_and_keeps_the_limit() -> None:
    async def scenario() -> None:
        writes: list[list[bytes]] = []
        closes: list[tuple[int, str]] = []
        writable = False

        def write_now(chunks: list[bytes]) -> bool:
            if writable:
                writes.append(list(chunks))
            return writable

        async def write(chunks: list[bytes]) -> None:
            writes.append(list(chunks))

        async def close(code: int, reason: str) -> None:
            closes.append((code, reason))

        outbox = Outbox(write, close, limit=3, write_now=write_now, frame=text_message)
        outbox.put(b"a")  # framed when queued
        outbox.flush_now()
        writable = True
        outbox.put_framed([text_message(b"b")])  # "a" waits: "b" goes behind it, not before
        assert writes == [[text_message(b"a"), text_message(b"b")]] and outbox.pending == 0
        writable = False
        outbox.put_framed([text_message(b"%d" % i) for i in range(4)])  # past the limit
        task = asyncio.create_task(outbox.run())
        await asyncio.wait_for(task, 1)
        assert closes == [(1008, "too many unsent messages")]
        assert writes == [[text_message(b"a"), text_message(b"b")]]
        outbox.put_framed([text_message(b"late")])  # closing: dropped
        assert outbox.pending == 0 and len(writes) == 1

    asyncio.run(scenario())


def test_a_broadcast_is_shown_only_once_its_records_are_stored(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = SQLiteStore(tmp_path / "b.db")
        runtime = Runtime(store=store, store_writer="thread")
        wire = Wire(runtime)
        wire.add(1)
        wire.add(2)
        row = ChatRow(0, 1, 1, "ann", "hello all", 0, 1.0)
        runtime.execute([Store([row]), Send(1, b"echo"), Broadcast([2], b"line")])
        runtime.execute([Broadcast([1, 2], b"next")])  # nothing to store, but held behind
        assert wire.writes == {1: [], 2: []}
        await runtime.drain_store(10)
        assert store.load_chat([0], 10) == {0: [row]}
        assert [chunk for write in wire.writes[1] for chunk in write] == [
            text_message(b"echo"),
            text_message(b"next"),
        ]
        assert [chunk for write in wire.writes[2] for chunk in write] == [
            text_message(b"line"),
            text_message(b"next"),
        ]
        wire.stop()
        await runtime.close_store()

    asyncio.run(scenario())


class Lobby(Idle):
    """Everyone connected hears every frame anyone sends, as one Broadcast."""

    def __init__(self) -> None:
        self.conns: list[ConnId] = []

    def connected(self, conn: ConnId, now: float) -> list[Effect]:
        self.conns.append(conn)
        return [Send(conn, b"welcome")]

    def received(self, conn: ConnId, data: str | bytes, now: float) -> list[Effect]:
        text = data if isinstance(data, str) else data.decode()
        return [Broadcast(list(self.conns), f"{conn} says {text}".encode())]

    def disconnected(self, conn: ConnId, now: float) -> list[Effect]:
        self.conns.remove(conn)
        return []

    def stats(self) -> dict[str, int]:
        return {"connections": len(self.conns), "players": 0, "games": 0}


@asynccontextmanager
async def lobby() -> AsyncIterator[int]:
    async with serve_websocket(Lobby(), "127.0.0.1", 0, Runtime()) as listener:
        yield listener.port


def test_a_broadcast_reaches_every_websocket_as_a_text_frame() -> None:
    async def test() -> None:
        async with lobby() as port:
            url = f"ws://127.0.0.1:{port}/"
            async with connect(url) as ann, connect(url) as bob, connect(url) as cid:
                for ws in (ann, bob, cid):
                    assert await ws.recv() == "welcome"
                long = "x" * 70_000  # a 64-bit length in the frame header
                await bob.send("hi")
                await bob.send(long)
                for ws in (ann, bob, cid):
                    assert await ws.recv() == "2 says hi"
                    assert await ws.recv() == f"2 says {long}"

    asyncio.run(asyncio.wait_for(test(), 20))
