"""The /async websocket protocol: the Scalable Server workflows (docs/async-decisions.md S1-S20).

Its packages, from the top; each imports only those below it (docs/DESIGN.md, "The /async
packages"):

- ``http/``, ``reference/``: the HTTP routes; the schema, the protocol reference and the catalogue
- ``service.py``: the service, which checks and decodes each frame and hands it to its handler
- ``shards/``: started games placed on the shards of a cluster
- ``lobby/``: the lobby, open games, invitations, quick play, watching games
- ``ingame/``: the requests of a started game
- ``players/``: chat, presence, buddies, statistics, push devices and notifications, ratings
- ``state/``: the hub and the owners of the service's state
- ``game/``: the games, each a unit, and the owner of every game
- ``wire/``: every message, declared once (S1, S2), and the protocol's limits

The messages are exported here. reference/schema.py is not imported: it runs as
``python -m parlour.protocols.async_ws.reference.schema``, and a package that imported it first
would make runpy warn.
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
