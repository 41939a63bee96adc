"""What nodes say to each other over Redis pub/sub, encoded once with msgspec (MessagePack).

Channels (one per purpose, so a node subscribes only to what concerns it):

- ``parlour:{service}:owner``: to the owner of a service: connection inputs from gateways
  (:class:`Input`) and HTTP requests to answer (:class:`HttpCall`);
- ``parlour:node:{n}``: to node ``n``: effects for its connections (:class:`Output`) and HTTP
  answers (:class:`HttpAnswer`);
- ``parlour:cluster``: to everyone: a new owner took a service over (:class:`Takeover`), an
  owner handed one back (:class:`Released`), notes for every node (:class:`Note` to ``*``).

Notes (:class:`Note`) are what a service tells another owner (a shard of games, the /async hub):
their content is the service's own; they go to the owner's channel like inputs.
"""

from __future__ import annotations

from typing import Final

import msgspec

from parlour.core.effects import Broadcast, Close, Effect, Send

__all__ = [
    "CLUSTER_CHANNEL",
    "HttpAnswer",
    "HttpCall",
    "Input",
    "Note",
    "Output",
    "Released",
    "Takeover",
    "decode",
    "encode",
    "from_wire",
    "node_channel",
    "owner_channel",
    "to_wire",
]

CLUSTER_CHANNEL: Final = "parlour:cluster"
#: Kinds of :class:`Input`: a connection opened, a frame arrived, the connection is gone.
CONNECTED: Final = "c"
RECEIVED: Final = "r"
DISCONNECTED: Final = "d"


def owner_channel(service: str) -> str:
    return f"parlour:{service}:owner"


def node_channel(node: int) -> str:
    return f"parlour:node:{node}"


class Input(msgspec.Struct, tag="in", array_like=True):
    """A gateway's connection event, for the owner of ``service`` at ``epoch``."""

    service: str
    epoch: int
    kind: str
    conn: int
    text: str | None = None
    data: bytes | None = None


class WireSend(msgspec.Struct, tag="s", array_like=True):
    conn: int
    data: bytes


class WireBroadcast(msgspec.Struct, tag="b", array_like=True):
    conns: list[int]
    data: bytes
    instead: dict[int, bytes] | None = None


class WireClose(msgspec.Struct, tag="x", array_like=True):
    conn: int
    code: int
    reason: str


WireEffect = WireSend | WireBroadcast | WireClose


class Output(msgspec.Struct, tag="out", array_like=True):
    """Effects (already stored: only sends and closes) for connections of the receiving node."""

    effects: list[WireEffect]


class HttpCall(msgspec.Struct, tag="call", array_like=True):
    """An HTTP request a node forwards to the owner of ``service``; answered to ``reply_to``."""

    service: str
    id: int
    reply_to: int
    method: str
    target: str
    path: str
    headers: dict[str, str]
    body: bytes
    client: str


class HttpAnswer(msgspec.Struct, tag="answer", array_like=True):
    id: int
    status: int
    body: bytes
    headers: list[tuple[str, str]]


class Takeover(msgspec.Struct, tag="takeover", array_like=True):
    """``node`` owns ``service`` from ``epoch`` on: sessions of earlier owners are gone."""

    service: str
    node: int
    epoch: int


class Released(msgspec.Struct, tag="released", array_like=True):
    """``node`` handed ``service`` back (a graceful stop, or a share of shards for a newcomer):
    nobody owns it until the next Takeover."""

    service: str
    node: int


class Note(msgspec.Struct, tag="note", array_like=True):
    """A service's note for the owner of ``to`` (``"*"``: every node), from node ``sender``
    (which hands its own copy of a ``"*"`` note to itself, and skips the one Redis echoes).
    A note that waits for an answer carries the ``epoch`` of the owner it is meant for: any
    other owner drops it, and its sender answers it once it learns that tenure is over
    (Notes.awaiting); 0: any owner takes it."""

    to: str
    data: bytes
    sender: int = 0
    epoch: int = 0


Message = Input | Output | HttpCall | HttpAnswer | Takeover | Released | Note

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(Message)


def encode(message: Message) -> bytes:
    return _encoder.encode(message)


def decode(data: bytes) -> Message:
    """A message from another node (msgspec.DecodeError/ValidationError if it is not one)."""
    message: Message = _decoder.decode(data)
    return message


def to_wire(effects: list[Effect]) -> list[WireEffect]:
    """Sends, broadcasts and closes as they travel (stores are done by then: left out)."""
    wire: list[WireEffect] = []
    for effect in effects:
        if type(effect) is Send:
            wire.append(WireSend(effect.conn, effect.data))
        elif type(effect) is Broadcast:
            wire.append(WireBroadcast(effect.conns, effect.data, effect.instead))
        elif type(effect) is Close:
            wire.append(WireClose(effect.conn, effect.code, effect.reason))
    return wire


def from_wire(wire: list[WireEffect]) -> list[Effect]:
    effects: list[Effect] = []
    for item in wire:
        if type(item) is WireSend:
            effects.append(Send(item.conn, item.data))
        elif type(item) is WireBroadcast:
            effects.append(Broadcast(item.conns, item.data, item.instead))
        elif type(item) is WireClose:
            effects.append(Close(item.conn, item.code, item.reason))
    return effects
