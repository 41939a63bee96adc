"""What one input of the /async service produces: the effects (sends, broadcasts, closes) in
order, the records to store before any of them is shown (docs/async-decisions.md S10), and the
count of ErrorRequest answers by code (read by /metrics).

One ``Output`` per service. Handlers never build effects themselves: they call these methods
(mostly through the hub's ``send``, ``to_player`` and ``error``), so that this is the one place
that appends to the list the transport gets back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from parlour.core.effects import Broadcast, Close, ConnId, Effect, Relay, Send
from parlour.protocols.async_ws.wire.messages import ErrorCode, ErrorRequest, ServerMessage, encode
from parlour.storage import Record

__all__ = ["Output"]


class Output:
    """The effects and records of the input being handled, and the error counts."""

    __slots__ = ("_effects", "_errors", "_records")

    def __init__(self) -> None:
        self._effects: list[Effect] = []
        self._records: list[Record] = []
        self._errors: dict[str, int] = {}

    @property
    def errors(self) -> Mapping[str, int]:
        """ErrorRequest answers by code, since the start (read by parlour.metrics)."""
        return self._errors

    def send(self, conn: ConnId, message: ServerMessage) -> None:
        self._effects.append(Send(conn, encode(message)))

    def send_many(self, conns: list[ConnId], data: bytes) -> None:
        """The same encoded message to each of ``conns``, in order: one effect for them all."""
        if len(conns) > 1:
            self._effects.append(Broadcast(conns, data))
        elif conns:
            self._effects.append(Send(conns[0], data))

    def broadcast(self, conns: list[ConnId], data: bytes, instead: dict[ConnId, bytes]) -> None:
        """``data`` to each of ``conns`` but those named in ``instead``, which get their own bytes
        (none when empty). ``conns`` is kept as given: a transport recognises a list it saw
        before as the same audience (see Broadcast), so callers hand the same list again."""
        self._effects.append(Broadcast(conns, data, instead))

    def error(
        self,
        conn: ConnId,
        code: ErrorCode,
        message: str,
        request: Any = None,
        game_id: int | None = None,
        request_type: str | None = None,
        request_id: str | None = None,
    ) -> None:
        """An ErrorRequest to ``conn``, counted by code; the request's type, id and game are
        read from ``request`` when given."""
        self._errors[code] = self._errors.get(code, 0) + 1
        self.send(
            conn,
            ErrorRequest(
                code=code,
                message=message,
                request_type=request_type if request is None else type(request).__name__,
                request_id=request_id if request is None else getattr(request, "request_id", None),
                game_id=game_id if game_id else getattr(request, "game_id", None) or None,
            ),
        )

    def close(self, conn: ConnId, code: int, reason: str) -> None:
        self._effects.append(Close(conn, code, reason))

    def relay(self, to: str, data: bytes) -> None:
        """A note for another owner of a cluster (shards/placement.py), released after the
        records."""
        self._effects.append(Relay(to, data))

    def store(self, *records: Record) -> None:
        """Records to store before anything of this input is shown."""
        self._records.extend(records)

    def take(self) -> tuple[list[Effect], list[Record]]:
        """This input's effects and records, in order; both start empty again."""
        effects, records = self._effects, self._records
        self._effects, self._records = [], []
        return effects, records
