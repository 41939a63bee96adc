"""The /async service's state and the ways it speaks: the composition of its owners (who is
connected, the lobby, observers, the social side, the output), the accounts and the games.

Handlers (lobby/, ingame/, players/ and service.py) are functions of the hub, a session and a
message; they never do I/O. Each piece of state has one owner, made here once per service and
reached through the hub (``hub.lobby``, ``hub.relations``...); a handler changes it through that
owner's methods. One input's effects are collected by ``hub.output`` and returned to the transport,
which stores the records before it sends anything (docs/async-decisions.md S10).
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Callable, Iterable, Mapping
from random import Random
from typing import Any, Protocol

import msgspec

from parlour.core.effects import ConnId, Effect, Store
from parlour.protocols.async_ws.game.game_registry import Games, public
from parlour.protocols.async_ws.game.store_ledger import NEXT_GAME_KEY
from parlour.protocols.async_ws.state.known_accounts import Account, Accounts
from parlour.protocols.async_ws.state.lobby_members import Lobby
from parlour.protocols.async_ws.state.matchmaking import Matchmaker
from parlour.protocols.async_ws.state.observers import Observers
from parlour.protocols.async_ws.state.output import Output
from parlour.protocols.async_ws.state.sessions import Session, Sessions
from parlour.protocols.async_ws.state.social_state import ChatLog, Devices, Presence, Relations, Statistics
from parlour.protocols.async_ws.wire.limits import AsyncLimits
from parlour.protocols.async_ws.wire.messages import (
    GameConfiguration,
    ServerMessage,
    SmallPlayer,
    encode,
)

__all__ = ["NEXT_GAME_KEY", "Account", "AsyncLimits", "Handler", "Hub", "Session", "deflated"]


#: A request's handler: the hub, the sender's session, the decoded message, the time.
Handler = Callable[["Hub", Session, Any, float], None]


def deflated(items: Any) -> str:
    """S13: base64 of the zlib-deflated JSON array."""
    return base64.b64encode(zlib.compress(msgspec.json.encode(items))).decode("ascii")


class Placing(Protocol):
    """What the hub of a cluster asks of its placement (placing.Placing)."""

    def watch(self, game_id: int, conn: ConnId, player_id: int, on: bool, request_id: str | None) -> None:
        """``player_id`` starts or stops watching a game placed on a shard: its owner answers."""
        ...


class Hub:
    """The service's state: the owners below, made here once (the one place they are made).

    The games (games.Games) are their own owner: the service creates them right after the hub
    and sets ``games`` once; they speak to the rest through an adapter over this hub
    (hubhost.HubHost)."""

    games: Games
    #: A cluster's hub: where started games go (shards/hub_placement.py); None on one server.
    placing: Placing | None = None

    def __init__(self, limits: AsyncLimits, rng: Random) -> None:
        self.limits = limits
        self.rng = rng
        # -- The owners: each holds one part of the state and is changed only through its methods.
        #: Names, password hashes and ratings of the accounts.
        self.accounts = Accounts()
        #: This input's sends, closes and records to store first, and the error counts; its
        #: methods that every handler uses are the hub's too.
        self.output = output = Output()
        self.send = output.send
        self.error = output.error
        self.close = output.close
        self.store = output.store
        #: Connections, and each signed-in account's live one (S5); read through the views below.
        self.connections = Sessions()
        self.sessions: Mapping[ConnId, Session] = self.connections.by_conn
        self.online: Mapping[int, ConnId] = self.connections.online
        #: Who is in the lobby, the connections its chat reaches, whether its lists are due.
        self.lobby = Lobby(limits.list_cap)
        #: Observers of each game (account ids, S17): they get every event the players get.
        self.observers = Observers()
        #: The social side (social_state.py): buddy and ignore lists, chat history and
        #: moderation, presence monitoring, statistics subscriptions, push devices.
        self.relations = Relations()
        self.chat_log = ChatLog()
        self.presence_state = Presence()
        self.statistics = Statistics()
        self.devices = Devices()
        #: Quick play's queues (matchmaking.py): who waits for which game, at what rating.
        self.matchmaker = Matchmaker()

    @property
    def errors(self) -> dict[str, int]:
        """ErrorRequest answers by code (a copy), read by /metrics (parlour.metrics)."""
        return dict(self.output.errors)

    # -- Output ---------------------------------------------------------------------------------

    def take(self, now: float) -> list[Effect]:
        """This input's effects: what must be stored first (each changed game once, as it is
        now, before its turn rows, then the other records), then the sends and closes in order,
        then the robots' decisions to make away from the event loop."""
        out, stored = self.output.take()
        records = self.games.take_records()
        if records or stored:
            records += stored
            out.insert(0, Store(records))
        if self.games.context.thinks:
            out.extend(self.games.take_thinks())  # robots' decisions to make away from the loop
        return out

    def to_player(self, player_id: int | None, message: ServerMessage) -> bool:
        """Send to an account if it is connected; whether it was."""
        conn = self.online.get(player_id) if player_id is not None else None
        if conn is None:
            return False
        self.output.send(conn, message)
        return True

    def to_players(self, player_ids: Iterable[int], message: ServerMessage) -> None:
        """One message, encoded once, to every connected player of ``player_ids`` (one effect)."""
        online = self.online.get
        conns = [conn for conn in map(online, player_ids) if conn is not None]
        if conns:
            self.output.send_many(conns, encode(message))

    # -- Lookups --------------------------------------------------------------------------------

    def name(self, player_id: int) -> str:
        return self.accounts.name(player_id)

    def presence(self, player_id: int) -> str:
        return "ONLINE" if player_id in self.online else "OFFLINE"

    def small(self, player_id: int) -> SmallPlayer:
        return SmallPlayer(player_id=player_id, name=self.name(player_id), presence=self.presence(player_id))  # type: ignore[arg-type]

    def public(self, config: GameConfiguration) -> GameConfiguration:
        """The configuration as others see it: never the password."""
        return public(config)
