"""Effects: what the core asks a transport to do, instead of doing I/O itself (DESIGN.md).

A service returns a list of effects for every input; the transport executes them in order,
through one ordered outbox per connection.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from parlour.storage.records import Record

__all__ = ["Broadcast", "Close", "ConnId", "Effect", "Relay", "Send", "Store", "Think"]

#: Connections are known to the core by opaque ids handed out by the transport.
ConnId = int


# Not frozen: a server builds one Send per message and recipient, and frozen dataclasses
# initialise through object.__setattr__, several times slower. Effects are never mutated.
# The hot effects (Send, Store) write their own __init__: the one @dataclass generates is
# interpreted even in a compiled module (setup.py), a Python call per effect; this one is not
# (dataclass keeps an __init__ the class defines, and still writes __eq__ and __repr__).
@dataclass(slots=True)
class Send:
    """Queue one message (a complete frame or line, already encoded as UTF-8) on a connection."""

    conn: ConnId
    data: bytes

    def __init__(self, conn: ConnId, data: bytes) -> None:
        self.conn = conn
        self.data = data


@dataclass(slots=True)
class Broadcast:
    """Queue one message on each of several connections: one Send per connection in ``conns``
    (in that order, among the other effects of the same input), with the message encoded once
    and the effect built once, however many recipients. Transports write the same frame to each
    (a chat line to everyone in a lobby).

    ``instead`` names the few connections that get something else in place of ``data``: the
    sender's own copy of a chat line (which echoes its request id), or ``b""`` for nothing (a
    player ignoring the sender). A transport releasing several broadcasts to the same ``conns``
    list (the same object: lists handed out here are never mutated) at once may write them to
    each connection in one pass, which is what keeps a busy lobby's chat cheap."""

    conns: list[ConnId]
    data: bytes
    instead: dict[ConnId, bytes] | None = None

    def sends(self) -> list[Send]:
        """The Sends this broadcast stands for, in order (``instead`` applied)."""
        instead = self.instead or {}
        sends = [Send(conn, instead.get(conn, self.data)) for conn in self.conns]
        return [send for send in sends if send.data]


@dataclass(frozen=True, slots=True)
class Close:
    """Close a connection once everything queued before it has been sent.

    ``code`` and ``reason`` are websocket close codes; stream transports ignore them.
    """

    conn: ConnId
    code: int = 1000
    reason: str = ""


@dataclass(slots=True)
class Store:
    """Make these records durable before any later effect of the same input is carried out.

    The transport commits every Store of one loop iteration in one transaction (on a writer
    thread) and only then releases the sends that reveal them: stored before shown.

    ``refused``, when given, is the service's own answer to the request these records come
    from if they cannot be stored (an error that echoes the request's id): the runtime calls
    it, with whether the store confirmed that nothing was stored, in place of counting the
    input's connection among the ``conns`` of the service's ``store_failed``.

    A Store may hold no records and only ``refused``: the answer of a request that stored
    nothing, if its effects are refused for being held behind a commit that failed (while a
    batch is being stored, every later input's effects wait behind it). It never makes the
    transport hold anything: with nothing held before it, the effects are carried out at once.
    """

    records: list[Record]
    refused: Callable[[bool], None] | None = field(default=None, compare=False, repr=False)

    def __init__(self, records: list[Record], refused: Callable[[bool], None] | None = None) -> None:
        self.records = records
        self.refused = refused


@dataclass(frozen=True, slots=True)
class Relay:
    """A message for another owner of a cluster (a service, a shard of games, or ``"*"``: every
    node), released like a send: after the records of the same input are stored, and before
    the sends that follow it. One server alone has no one to relay to: it drops them (no
    service of one server makes any)."""

    to: str
    data: bytes


@dataclass(slots=True)
class Think:
    """Run ``job`` (a robot's decision, on copies it owns: nothing it reads changes meanwhile)
    away from the event loop, then hand its result to the service that asked, as an input of its
    own: ``service.thought(token, result, now)``, where ``result`` is None if the job failed. A
    slow robot then never holds up other players' requests while it thinks."""

    token: tuple[str, int]
    job: Callable[[], int]


Effect = Send | Broadcast | Close | Store | Relay | Think
