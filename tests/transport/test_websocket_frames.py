"""Whole text frames taken without the websocket protocol's parser (transport/websocket.py,
``simple_text_frames``) give the service what the protocol gives it, however the bytes are
cut: frames cut short, pings, pongs, fragments and closes between them still go through the
protocol."""

from __future__ import annotations

import asyncio
from random import Random
from typing import Any

import pytest
from websockets.client import ClientProtocol
from websockets.frames import OP_CONT, OP_TEXT, Frame
from websockets.protocol import OPEN
from websockets.server import ServerProtocol
from websockets.uri import parse_uri

from parlour.core.effects import ConnId, Effect, Send
from parlour.transport import websocket
from parlour.transport.runtime import Runtime
from parlour.transport.websocket import (
    HARD_FRAME_LIMIT,
    WebsocketConnection,
    WebsocketListener,
    simple_text_frames,
)
from tests.transport.services import Idle


def _client() -> ClientProtocol:
    return ClientProtocol(parse_uri("ws://127.0.0.1:1/"), state=OPEN)


def _wire(sends: list[tuple[str, Any]]) -> bytes:
    """What a client writes for ``sends`` (masked frames, as clients send them)."""
    client = _client()
    for kind, value in sends:
        if kind == "text":
            client.send_text(value.encode())
        elif kind == "binary":
            client.send_binary(value)
        elif kind == "ping":
            client.send_ping(value)
        elif kind == "pong":
            client.send_pong(value)
        elif kind == "fragments":
            client.send_text(value[0].encode(), fin=False)
            for index, part in enumerate(value[1:], 2):
                client.send_continuation(part.encode(), fin=index == len(value))
    return b"".join(client.data_to_send())


def test_only_whole_masked_unfragmented_text_frames_are_taken() -> None:
    many = ["short", "é" * 70, "x" * 125, "y" * 126, "z" * 65_535, ""]
    assert simple_text_frames(_wire([("text", text) for text in many]), HARD_FRAME_LIMIT) == [
        text.encode() for text in many
    ]
    assert simple_text_frames(b"", HARD_FRAME_LIMIT) == []
    whole = _wire([("text", "one"), ("text", "two")])
    for cut in range(1, len(whole)):
        assert simple_text_frames(whole[:cut], HARD_FRAME_LIMIT) in (None, [b"one"])
    assert simple_text_frames(whole[:-1], HARD_FRAME_LIMIT) is None
    assert simple_text_frames(_wire([("text", "a"), ("ping", b"p")]), HARD_FRAME_LIMIT) is None
    assert simple_text_frames(_wire([("binary", b"a")]), HARD_FRAME_LIMIT) is None
    assert simple_text_frames(_wire([("fragments", ["a", "b"])]), HARD_FRAME_LIMIT) is None
    assert simple_text_frames(_wire([("text", "q" * 65_536)]), HARD_FRAME_LIMIT) is None  # 8-byte length
    assert simple_text_frames(_wire([("text", "q" * 200)]), 199) is None  # past the limit
    server = ServerProtocol(state=OPEN)  # its frames are not masked: a client's must be
    server.send_text(b"unmasked")
    assert simple_text_frames(b"".join(server.data_to_send()), HARD_FRAME_LIMIT) is None
    rsv = bytearray(_wire([("text", "r")]))
    rsv[0] |= 0x40  # an extension bit, with no extension agreed
    assert simple_text_frames(bytes(rsv), HARD_FRAME_LIMIT) is None


class _Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.written: list[bytes] = []
        self.closed = False

    def write(self, data: Any) -> None:
        self.written.append(bytes(data))

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        self.closed = True

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed


class _Record(Idle):
    def __init__(self) -> None:
        self.frames: list[str | bytes] = []

    def received(self, conn: ConnId, data: str | bytes, now: float) -> list[Effect]:
        self.frames.append(data)
        return [Send(conn, b"got")]


def _feed(chunks: list[bytes]) -> tuple[list[str | bytes], list[Frame], int]:
    """What the service got, the frames the server wrote, and how many chunks were taken whole."""

    async def run() -> tuple[list[str | bytes], list[Frame], int]:
        service = _Record()
        listener = WebsocketListener(service, Runtime())
        connection = WebsocketConnection(
            listener, service, ServerProtocol(state=OPEN, max_size=HARD_FRAME_LIMIT)
        )
        transport = _Transport()
        connection.opened(transport, b"", b"")
        taken = 0
        original = websocket.simple_text_frames

        def counted(data: bytes, max_size: int) -> list[bytes] | None:
            nonlocal taken
            payloads = original(data, max_size)
            taken += payloads is not None
            return payloads

        websocket.simple_text_frames = counted
        try:
            for chunk in chunks:
                connection.data_received(chunk)
        finally:
            websocket.simple_text_frames = original
        connection.connection_lost(None)
        reader = _client()
        reader.receive_data(b"".join(transport.written))
        return service.frames, [f for f in reader.events_received() if isinstance(f, Frame)], taken

    return asyncio.run(run())


SENDS: list[tuple[str, Any]] = [
    ("text", "first"),
    ("text", "second"),
    ("ping", b"are you there"),
    ("text", "after the ping"),
    ("fragments", ["frag", "men", "ted"]),
    ("text", "after the fragments"),
    ("binary", b"\x00\x01"),
    ("pong", b"unasked"),
    ("text", "a longer one " * 20),
    ("text", "last"),
]
EXPECTED: list[str | bytes] = [
    "first",
    "second",
    "after the ping",
    "fragmented",
    "after the fragments",
    b"\x00\x01",
    "a longer one " * 20,
    "last",
]


@pytest.mark.parametrize("seed", range(12))
def test_the_service_gets_the_same_messages_however_the_bytes_are_cut(seed: int) -> None:
    rng = Random(seed)
    frames = [_wire([send]) for send in SENDS]
    if seed == 0:
        chunks = frames  # a frame a read: the text frames are all taken whole
    elif seed == 1:
        whole = b"".join(frames)
        chunks = [whole[i : i + 1] for i in range(len(whole))]  # a byte a read
    else:
        whole = b"".join(frames)
        cuts = sorted(rng.sample(range(1, len(whole)), rng.randint(1, 12)))
        chunks = [whole[a:b] for a, b in zip([0, *cuts], [*cuts, len(whole)], strict=True)]
    got, written, taken = _feed(chunks)
    assert got == EXPECTED
    texts = [f for f in written if f.opcode is OP_TEXT]
    assert [f.data for f in texts] == [b"got"] * len(EXPECTED)
    pongs = [f.data for f in written if f.opcode.name == "PONG"]
    assert pongs == [b"are you there"]  # the ping answered, in its place among the answers
    assert not any(f.opcode is OP_CONT for f in written)
    if seed == 0:
        assert taken == 6  # every text frame but the fragments
    if seed == 1:
        assert taken <= 1  # an empty or one-byte read is never a whole frame


def test_nothing_is_taken_after_the_client_closed() -> None:
    client = _client()
    client.send_text(b"before")
    client.send_close(1000, "done")
    closing = b"".join(client.data_to_send())
    got, written, taken = _feed([closing, _wire([("text", "after the close")])])
    assert got == ["before"]
    assert taken == 0
    assert [f.opcode.name for f in written] == ["TEXT", "CLOSE"]
