"""The /async websocket protocol: the Scalable Server workflows (docs/async-decisions.md S1-S20).

messages.py declares every message once; schema.py derives the JSON Schema and the protocol
reference (docs/async-protocol.md) from those declarations (S2). schema.py is not imported here: it
runs as ``python -m parlour.protocols.async_ws.schema``, and a package that imported it first would
make runpy warn.
"""

from parlour.protocols.async_ws.wire.messages import (
    MESSAGES,
    ClientMessage,
    ErrorCode,
    ErrorRequest,
    GameConfiguration,
    GameStatus,
    ServerMessage,
    SmallPlayer,
    StatusReport,
    StatusReportPlayer,
    decode_client,
    encode,
)

__all__ = [
    "MESSAGES",
    "ClientMessage",
    "ErrorCode",
    "ErrorRequest",
    "GameConfiguration",
    "GameStatus",
    "ServerMessage",
    "SmallPlayer",
    "StatusReport",
    "StatusReportPlayer",
    "decode_client",
    "encode",
]
