"""The /async service's state and the ways it speaks: who is connected, the accounts, the games,
and the effects one input produces (sends, closes, records to store first).

Handlers (lobby.py, play.py, service.py) are functions of the hub, a session and a message; they
never do I/O. One input's effects are collected in ``hub.out`` and returned to the transport,
which stores the records before it sends anything (scalable-server-notes.md S10).
"""

from __future__ import annotations

import base64
import zlib
from dataclasses import dataclass, field
from random import Random
from typing import Any

import msgspec

from parlour.core.effects import Broadcast, Close, ConnId, Effect, Send, Store
from parlour.core.ratelimit import TokenBucket
from parlour.protocols.async_ws.game.ledger import NEXT_GAME_KEY
from parlour.protocols.async_ws.games import Games, public
from parlour.protocols.async_ws.limits import AsyncLimits
from parlour.protocols.async_ws.messages import (
    ErrorCode,
    ErrorRequest,
    GameConfiguration,
    ServerMessage,
    SmallPlayer,
    encode,
)
from parlour.storage import AccountRow, RatingRow, Record

__all__ = ["NEXT_GAME_KEY", "Account", "AsyncLimits", "Hub", "Session", "deflated"]


@dataclass(slots=True)
class Account:
    id: int
    name: str
    #: Argon2id hash ("" for accounts of an external OAuth2 provider): checked on sign-in.
    password_hash: str = ""
    #: Ratings by game type: (mu, sigma, games rated).
    ratings: dict[str, tuple[float, float, int]] = field(default_factory=dict)


@dataclass(slots=True)
class Session:
    """One /async connection: anonymous until AsyncAuthRequest succeeds."""

    conn: ConnId
    last_seen: float
    player_id: int | None = None
    session: str = ""
    in_lobby: bool = False
    #: The rate limit's token bucket (S8: requests per second per connection).
    bucket: TokenBucket = field(default_factory=lambda: TokenBucket.full(1.0, 0.0))
    #: What this session was last sent of the lobby lists (S13: pushed only when changed).
    sent_players: str = ""
    sent_games: str = ""


def deflated(items: Any) -> str:
    """S13: base64 of the zlib-deflated JSON array."""
    return base64.b64encode(zlib.compress(msgspec.json.encode(items))).decode("ascii")


class Hub:
    #: The games (games.Games): created by the service, which sets it once, right after the hub
    #: (the games speak through an adapter over this hub, hubhost.HubHost).
    games: Games

    def __init__(self, limits: AsyncLimits, rng: Random) -> None:
        self.limits = limits
        self.rng = rng
        self.accounts: dict[int, Account] = {}
        self.by_name: dict[str, int] = {}
        self.next_account = 1
        self.sessions: dict[ConnId, Session] = {}
        #: account id -> its one live connection (S5).
        self.online: dict[int, ConnId] = {}
        #: Players in the lobby, and whether its lists changed since the last push.
        self.lobby: set[int] = set()
        self.lobby_changed = False
        #: The connections of the players in the lobby (see lobby_conns), None when stale.
        self._lobby_conns: list[ConnId] | None = None
        self.lists_pushed = float("-inf")
        #: Observers of each game (account ids, S17): they get every event the players get.
        self.observers: dict[int, set[int]] = {}
        self.out: list[Effect] = []
        #: ErrorRequest answers by code, read by /metrics (parlour.metrics).
        self.errors: dict[str, int] = {}
        #: The records this input produced besides the games' own (games.Games keeps those).
        self.records: list[Record] = []

    # -- The lobby ------------------------------------------------------------------------------

    def join_lobby(self, player_id: int) -> None:
        self.lobby.add(player_id)
        self.lobby_changed = True
        self._lobby_conns = None

    def leave_lobby(self, player_id: int) -> None:
        self.lobby.discard(player_id)
        self.lobby_changed = True
        self._lobby_conns = None

    def lobby_conns(self) -> list[ConnId]:
        """The connections of everyone in the lobby: one list, kept until someone enters or
        leaves, and never changed once handed out (a new one replaces it), so that the chat
        lines of a busy lobby share it and a transport recognises them as one audience (see
        Broadcast). Players in the lobby are online: leaving the lobby comes first when a
        connection goes or is replaced."""
        conns = self._lobby_conns
        if conns is None:
            online = self.online.get
            conns = self._lobby_conns = [conn for conn in map(online, self.lobby) if conn is not None]
        return conns

    # -- Output ---------------------------------------------------------------------------------

    def take(self, now: float) -> list[Effect]:
        """This input's effects: what must be stored first (each changed game once, as it is
        now, before its turn rows), then the sends and closes in order."""
        out, self.out = self.out, []
        records = self.games.take_records()
        if records or self.records:
            records += self.records
            self.records = []
            out.insert(0, Store(records))
        return out

    def send(self, conn: ConnId, message: ServerMessage) -> None:
        self.out.append(Send(conn, encode(message)))

    def to_player(self, player_id: int | None, message: ServerMessage) -> bool:
        """Send to an account if it is connected; whether it was."""
        conn = self.online.get(player_id) if player_id is not None else None
        if conn is None:
            return False
        self.out.append(Send(conn, encode(message)))
        return True

    def send_many(self, conns: list[ConnId], data: bytes) -> None:
        """The same encoded message to each of ``conns``, in order: one effect for them all."""
        if len(conns) > 1:
            self.out.append(Broadcast(conns, data))
        elif conns:
            self.out.append(Send(conns[0], data))

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
        self.errors[code] = self.errors.get(code, 0) + 1
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
        self.out.append(Close(conn, code, reason))

    def store(self, *records: Record) -> None:
        self.records.extend(records)

    # -- Accounts -------------------------------------------------------------------------------

    def add_account(self, row: AccountRow) -> Account:
        account = Account(row.id, row.name, row.password_hash)
        self.accounts[row.id] = account
        self.by_name[row.name.casefold()] = row.id
        self.next_account = max(self.next_account, row.id + 1)
        return account

    def add_rating(self, row: RatingRow) -> None:
        account = self.accounts.get(row.account_id)
        if account is not None:
            account.ratings[row.game_type] = (row.mu, row.sigma, row.games)

    # -- Lookups --------------------------------------------------------------------------------

    def name(self, player_id: int) -> str:
        account = self.accounts.get(player_id)
        return account.name if account else f"player {player_id}"

    def presence(self, player_id: int) -> str:
        return "ONLINE" if player_id in self.online else "OFFLINE"

    def small(self, player_id: int) -> SmallPlayer:
        return SmallPlayer(player_id=player_id, name=self.name(player_id), presence=self.presence(player_id))  # type: ignore[arg-type]

    def public(self, config: GameConfiguration) -> GameConfiguration:
        """The configuration as others see it: never the password."""
        return public(config)
