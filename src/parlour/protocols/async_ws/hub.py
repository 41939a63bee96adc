"""The /async service's state and the ways it speaks: who is connected, the accounts, the games,
and the effects one input produces (sends, closes, records to store first).

Handlers (lobby.py, play.py, service.py) are functions of the hub, a session and a message; they
never do I/O. One input's effects are collected in ``hub.out`` and returned to the transport,
which stores the records before it sends anything (scalable-server-notes.md S10).
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from random import Random
from typing import TYPE_CHECKING, Any, Final

import msgspec

from parlour.core.effects import Broadcast, Close, ConnId, Effect, Send, Store
from parlour.core.ids import IdSource
from parlour.core.ratelimit import TokenBucket
from parlour.protocols.async_ws.messages import (
    ErrorCode,
    ErrorRequest,
    GameConfiguration,
    ServerMessage,
    SmallPlayer,
    encode,
)
from parlour.protocols.async_ws.model import LIVE, AsyncGame, TurnDoc, encode_game, encode_turn
from parlour.storage import AccountRow, AsyncGameRow, AsyncTurnRow, MetaRow, RatingRow, Record

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
    def __init__(self, limits: AsyncLimits, rng: Random, ids: IdSource | None = None) -> None:
        self.limits = limits
        self.rng = rng
        #: Seeds of games under server rules: secrets, since a seed foretells every deal
        #: (parlour.core.ids).
        self.ids = ids if ids is not None else IdSource()
        self.accounts: dict[int, Account] = {}
        self.by_name: dict[str, int] = {}
        self.next_account = 1
        self.sessions: dict[ConnId, Session] = {}
        #: account id -> its one live connection (S5).
        self.online: dict[int, ConnId] = {}
        self.games: dict[int, AsyncGame] = {}
        #: Live games of each account (any status but OVER / ABORTED).
        self.player_games: dict[int, set[int]] = {}
        self.next_game = 1
        #: Games played with Parlour's rules (S9), rebuilt from their actions after a restart.
        self.rules: dict[int, ServerGame] = {}
        #: Times a robot's decision (rules name, the decision) when the composition root gives
        #: one (parlour.metrics): no clock is read in here.
        self.robot_timer: Callable[[str, Callable[[], str]], str] | None = None
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
        #: Games changed by this input (stored once each, as they are at its end) and the
        #: other records it produced.
        self.dirty: dict[int, AsyncGame] = {}
        self.records: list[Record] = []

    def robot_action(self, game: ServerGame, local_id: int) -> str:
        """The action Parlour's robot chooses for a seat of a server-rules game (timed by
        ``robot_timer`` if there is one)."""
        timer = self.robot_timer
        if timer is None:
            return game.robot_action(local_id)
        return timer(game.rules, partial(game.robot_action, local_id))

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
        if self.dirty or self.records:
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
            records += self.records
            self.dirty.clear()
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

    def to_game(
        self, game: AsyncGame, message: ServerMessage, skip: Iterable[int] = (), observers: bool = True
    ) -> None:
        """Send one message (encoded once) to every present human of ``game`` but ``skip``, and
        to its observers (S17) unless ``observers`` is False (a seat's own view, say)."""
        skipped = set(skip)
        audience = [seat.player_id for seat in game.seats if seat.player_id is not None]
        if observers:
            audience += sorted(self.observers.get(game.id, ()))
        conns: list[ConnId] = []
        for player_id in audience:
            if player_id in skipped:
                continue
            skipped.add(player_id)
            conn = self.online.get(player_id)
            if conn is not None:
                conns.append(conn)
        self.send_many(conns, encode(message) if conns else b"")

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

    # -- Records --------------------------------------------------------------------------------

    def save(self, game: AsyncGame, now: float, turn: TurnDoc | None = None) -> None:
        """Store the game (and a committed turn) before anything of this input is shown."""
        game.updated = now
        self.dirty[game.id] = game
        if turn is not None:
            self.records.append(AsyncTurnRow(game.id, game.turn_index - 1, now, encode_turn(turn)))

    def new_game_id(self) -> int:
        game_id = self.next_game
        self.next_game += 1
        self.store(MetaRow(NEXT_GAME_KEY, str(self.next_game)))
        return game_id

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
