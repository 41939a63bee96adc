"""The /async service's state and the ways it speaks: the composition of its owners (who is
connected, the lobby, observers, the social side, the output), the accounts and the games.

Handlers (lobby.py, play.py, service.py, ...) are functions of the hub, a session and a message;
they never do I/O. Each piece of state has one owner, made here once per service and reached
through the hub (``hub.lobby``, ``hub.relations``...); a handler changes it through that owner's
methods. One input's effects are collected by ``hub.output`` and returned to the transport, which
stores the records before it sends anything (scalable-server-notes.md S10).
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from random import Random
from typing import TYPE_CHECKING, Any, Final

import msgspec

from parlour.core.effects import ConnId, Effect, Store
from parlour.core.ids import IdSource
from parlour.protocols.async_ws.accounts import Account, Accounts
from parlour.protocols.async_ws.lobby_members import Lobby
from parlour.protocols.async_ws.messages import (
    GameConfiguration,
    ServerMessage,
    SmallPlayer,
    encode,
)
from parlour.protocols.async_ws.model import LIVE, AsyncGame, TurnDoc, encode_game, encode_turn
from parlour.protocols.async_ws.observers import Observers
from parlour.protocols.async_ws.output import Output
from parlour.protocols.async_ws.sessions import Session, Sessions
from parlour.protocols.async_ws.social_state import ChatLog, Devices, Presence, Relations, Statistics
from parlour.storage import AsyncGameRow, AsyncTurnRow, MetaRow, Record

if TYPE_CHECKING:
    from parlour.protocols.async_ws.rules import ServerGame

__all__ = ["NEXT_GAME_KEY", "Account", "AsyncLimits", "Hub", "Session", "deflated"]

#: The meta key that keeps game ids unique for the life of the store (S6), whatever is purged.
NEXT_GAME_KEY: Final = "async_next_game_id"


@dataclass(frozen=True, slots=True)
class AsyncLimits:
    """The limits of S8 and the timers of S5/S11, from the settings."""

    ping_timeout: float = 60.0
    max_offers: int = 3
    max_games: int = 50
    max_state_bytes: int = 256 * 1024
    max_pause: int = 10
    requests_per_second: float = 50.0
    list_interval: float = 2.0
    outcome_retention: float = 7 * 86400.0
    #: How long a game stays in memory once OVER or ABORTED (it stays in the store): status
    #: reports still name it meanwhile. Without this every game ever played stayed in memory
    #: (bench/soak.py: about 19 KB per game). A restart loads none of them either.
    finished_retention: float = 2 * 86400.0
    #: A frame may carry a state and a summary of max_state_bytes each, JSON-escaped.
    max_frame_bytes: int = 768 * 1024


def deflated(items: Any) -> str:
    """S13: base64 of the zlib-deflated JSON array."""
    return base64.b64encode(zlib.compress(msgspec.json.encode(items))).decode("ascii")


class Hub:
    """The service's state: the owners below, made here once (the one place they are made),
    and the games (``games``, ``player_games``, ``rules``) with the records of their changes."""

    def __init__(self, limits: AsyncLimits, rng: Random, ids: IdSource | None = None) -> None:
        self.limits = limits
        self.rng = rng
        #: Seeds of games under server rules: secrets, since a seed foretells every deal
        #: (parlour.core.ids).
        self.ids = ids if ids is not None else IdSource()
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
        self.lobby = Lobby()
        #: Observers of each game (account ids, S17): they get every event the players get.
        self.observers = Observers()
        #: The social side (social_state.py): buddy and ignore lists, chat history and
        #: moderation, presence monitoring, statistics subscriptions, push devices.
        self.relations = Relations()
        self.chat_log = ChatLog()
        self.presence_state = Presence()
        self.statistics = Statistics()
        self.devices = Devices()
        # -- The games (play.py, lobby.py, phases.py).
        self.games: dict[int, AsyncGame] = {}
        #: Live games of each account (any status but OVER / ABORTED).
        self.player_games: dict[int, set[int]] = {}
        self.next_game = 1
        #: Games played with Parlour's rules (S9), rebuilt from their actions after a restart.
        self.rules: dict[int, ServerGame] = {}
        #: Times a robot's decision (rules name, the decision) when the composition root gives
        #: one (parlour.metrics): no clock is read in here.
        self.robot_timer: Callable[[str, Callable[[], str]], str] | None = None
        #: Games changed by this input (stored once each, as they are at its end).
        self.dirty: dict[int, AsyncGame] = {}

    @property
    def errors(self) -> dict[str, int]:
        """ErrorRequest answers by code (a copy), read by /metrics (parlour.metrics)."""
        return dict(self.output.errors)

    def robot_action(self, game: ServerGame, local_id: int) -> str:
        """The action Parlour's robot chooses for a seat of a server-rules game (timed by
        ``robot_timer`` if there is one)."""
        timer = self.robot_timer
        if timer is None:
            return game.robot_action(local_id)
        return timer(game.rules, partial(game.robot_action, local_id))

    # -- Output ---------------------------------------------------------------------------------

    def take(self, now: float) -> list[Effect]:
        """This input's effects: what must be stored first (each changed game once, as it is
        now, before its turn rows), then the sends and closes in order."""
        out, stored = self.output.take()
        if self.dirty or stored:
            records: list[Record] = [
                AsyncGameRow(
                    id=game.id,
                    game_type=game.config.game_type,
                    status=game.status,
                    created=game.created,
                    updated=game.updated,
                    doc=encode_game(game),
                )
                for game in self.dirty.values()
            ]
            records += stored
            self.dirty.clear()
            out.insert(0, Store(records))
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

    def to_game(
        self, game: AsyncGame, message: ServerMessage, skip: Iterable[int] = (), observers: bool = True
    ) -> None:
        """Send one message (encoded once) to every present human of ``game`` but ``skip``, and
        to its observers (S17) unless ``observers`` is False (a seat's own view, say)."""
        skipped = set(skip)
        audience = [seat.player_id for seat in game.seats if seat.player_id is not None]
        if observers:
            audience += sorted(self.observers.get(game.id))
        conns: list[ConnId] = []
        for player_id in audience:
            if player_id in skipped:
                continue
            skipped.add(player_id)
            conn = self.online.get(player_id)
            if conn is not None:
                conns.append(conn)
        self.output.send_many(conns, encode(message) if conns else b"")

    # -- Records --------------------------------------------------------------------------------

    def save(self, game: AsyncGame, now: float, turn: TurnDoc | None = None) -> None:
        """Store the game (and a committed turn) before anything of this input is shown."""
        game.updated = now
        self.dirty[game.id] = game
        if turn is not None:
            self.output.store(AsyncTurnRow(game.id, game.turn_index - 1, now, encode_turn(turn)))

    def new_game_id(self) -> int:
        game_id = self.next_game
        self.next_game += 1
        self.store(MetaRow(NEXT_GAME_KEY, str(self.next_game)))
        return game_id

    # -- Lookups --------------------------------------------------------------------------------

    def name(self, player_id: int) -> str:
        return self.accounts.name(player_id)

    def presence(self, player_id: int) -> str:
        return "ONLINE" if player_id in self.online else "OFFLINE"

    def presences(self, game: AsyncGame) -> dict[int, str]:
        return {
            seat.player_id: self.presence(seat.player_id) for seat in game.seats if seat.player_id is not None
        }

    def small(self, player_id: int) -> SmallPlayer:
        return SmallPlayer(player_id=player_id, name=self.name(player_id), presence=self.presence(player_id))  # type: ignore[arg-type]

    def public(self, config: GameConfiguration) -> GameConfiguration:
        """The configuration as others see it: never the password."""
        return config if config.password is None else msgspec.structs.replace(config, password=None)

    def track(self, game: AsyncGame) -> None:
        """Index a game under each of its human seats while it is live."""
        for seat in game.seats:
            if seat.player_id is None:
                continue
            games = self.player_games.setdefault(seat.player_id, set())
            if game.status in LIVE:
                games.add(game.id)
            else:
                games.discard(game.id)

    def untrack(self, game: AsyncGame, player_id: int) -> None:
        self.player_games.get(player_id, set()).discard(game.id)

    def live_games(self, player_id: int) -> list[AsyncGame]:
        return [self.games[game_id] for game_id in sorted(self.player_games.get(player_id, ()))]

    def offers(self, player_id: int) -> int:
        """Open offers and invitations this player created and that have not started (S8)."""
        return sum(
            1
            for game in self.live_games(player_id)
            if game.status == "NOT_STARTED" and game.creator == player_id
        )
