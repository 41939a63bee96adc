"""The Apologies websocket service: frames in, effects out (a parlour.core.service.Service).

Requests are decoded and validated by :mod:`.requests`, dispatched by a table to the lobby,
and the lobby's events are rendered by :mod:`.render` as they are emitted. Every failure is
answered with REQUEST_FAILED to the sending connection, which stays open.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from random import Random
from typing import Any

from parlour.core.checks import Schedule
from parlour.core.durable import LobbyReload, read_back
from parlour.core.effects import Close, ConnId, Effect, Send, Store
from parlour.core.errors import (
    ConnectionLimit,
    InternalError,
    ParlourError,
    RateLimited,
    StoreUnavailable,
    UnknownPlayer,
)
from parlour.core.events import Event, GameCancelled, RequestFailed
from parlour.core.ids import IdSource
from parlour.core.ledger import Ledger
from parlour.core.lobby import Lobby
from parlour.core.ratelimit import TokenBucket
from parlour.core.records import GameState, Player, Visibility
from parlour.games.apologies.model import Mode
from parlour.protocols.apologies_ws.render import Renderer, failure_reason
from parlour.protocols.apologies_ws.requests import AdvertiseGame, Request, WithHandle, decode_request
from parlour.robots.levels import LEVELS
from parlour.settings import Settings
from parlour.storage import Store as StoreBackend
from parlour.storage.records import Record, Snapshot

__all__ = ["ROBOT_HANDLES", "ApologiesService"]

log = logging.getLogger("parlour.apologies")

#: Programmatic players' handles: the reference server's names, its spelling included (a robot
#: takes one at random that is not seated in its game yet).
ROBOT_HANDLES = [
    "Aragorn",
    "Arwen",
    "Bilbo",
    "Boromir",
    "Elrond",
    "Éomer",
    "Éowyn",
    "Faramir",
    "Frodo",
    "Galadriel",
    "Gandalf",
    "Gimli",
    "Gollum",
    "Isildur",
    "Legolas",
    "Merry",
    "Pippen",
    "Radagast",
    "Samwise",
    "Saruman",
    "Sauron",
    "Shelob",
    "Théoden",
    "Treebeard",
]


def decode_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Stored game options back to the lobby's (the mode as an enum, the robot level if chosen)."""
    decoded: dict[str, Any] = {"mode": Mode(options.get("mode", Mode.STANDARD.value))}
    if options.get("robot_level") in LEVELS:
        decoded["robot_level"] = options["robot_level"]
    return decoded


#: Close code when the connection limit is reached: "try again later".
TRY_AGAIN_LATER = 1013
#: Close code for a flood past the request rate: a policy violation.
POLICY_VIOLATION = 1008

Handler = Callable[["ApologiesService", ConnId, Player, Any, float], None]


def _advertise(
    service: ApologiesService, conn: ConnId, player: Player, context: AdvertiseGame, now: float
) -> None:
    options: dict[str, Any] = {"mode": Mode(context.mode)}
    if context.robot_level is not None:
        options["robot_level"] = context.robot_level  # stored with the game: survives a restart
    service.lobby.advertise(
        player,
        context.name,
        options,
        context.players,
        Visibility(context.visibility),
        context.invited_handles,
        now,
    )


#: Requests that act for a registered player, by message type.
HANDLERS: dict[str, Handler] = {
    "UNREGISTER_PLAYER": lambda s, c, p, x, now: s.lobby.unregister(p, now),
    "LIST_PLAYERS": lambda s, c, p, x, now: s.lobby.list_players(p),
    "ADVERTISE_GAME": _advertise,
    "LIST_AVAILABLE_GAMES": lambda s, c, p, x, now: s.lobby.list_games(p),
    "JOIN_GAME": lambda s, c, p, x, now: s.lobby.join(p, x.game_id, now),
    "QUIT_GAME": lambda s, c, p, x, now: s.lobby.quit(p, now),
    "START_GAME": lambda s, c, p, x, now: s.lobby.start(p, now),
    "CANCEL_GAME": lambda s, c, p, x, now: s.lobby.cancel(p, now),
    "EXECUTE_MOVE": lambda s, c, p, x, now: s.lobby.execute(p, x.move_id, now),
    "OPTIMAL_MOVE": lambda s, c, p, x, now: s.lobby.optimal(p, now),
    "RETRIEVE_GAME_STATE": lambda s, c, p, x, now: s.lobby.retrieve(p, now),
    "SEND_MESSAGE": lambda s, c, p, x, now: s.lobby.send_message(p, x.recipient_handles, x.message),
}


class ApologiesService:
    """One Apologies lobby behind a websocket listener."""

    def __init__(
        self,
        settings: Settings,
        rng: Random | None = None,
        ledger: Ledger | None = None,
        ids: IdSource | None = None,
        offload: bool = False,
    ) -> None:
        self.settings = settings
        self.rng = rng if rng is not None else Random()
        self.renderer = Renderer(settings.history_length)
        self.lobby: Lobby = Lobby(
            settings, self.rng, self, game="apologies", robot_handles=ROBOT_HANDLES, ledger=ledger, ids=ids
        )
        #: Slow robots (the hard level) decide in a worker thread: the transport runs the Think
        #: effects and calls ``thought`` (parlour.transport.runtime). Tests driving the service
        #: by hand leave it off, and every robot moves at once.
        self.lobby.turns.offload = offload
        self.schedule: Schedule | None = None
        self._out: list[Effect] = []
        #: REQUEST_FAILED answers by reason code, read by /metrics (parlour.metrics).
        self.failures: dict[str, int] = {}
        #: Each connection's request rate (``requests_per_second``, bursts of twice that); a
        #: connection past it is refused once, closed, and not heard any more.
        self._buckets: dict[ConnId, TokenBucket] = {}

    # Sink: events are rendered the moment they are emitted.
    def send(self, conns: Iterable[ConnId], event: Event) -> None:
        data = self.renderer.render(event)
        out = self._out
        for conn in conns:
            out.append(Send(conn, data))

    def close(self, conn: ConnId, code: int, reason: str) -> None:
        self._out.append(Close(conn, code, reason))

    def _drain(self) -> list[Effect]:
        out, self._out = self._out, []
        if self.lobby.journal.recording:
            records = self.lobby.journal.take()
            if records:
                out.insert(0, Store(records))
        if self.lobby.turns.thinks:
            out.extend(self.lobby.turns.take_thinks())
        return out

    def thought(self, token: tuple[str, int], choice: int | None, now: float) -> list[Effect]:
        """A robot's decision, made away from the event loop, is back (a Think effect's answer)."""
        self.lobby.thought(token, choice, now)
        return self._drain()

    def _fail(self, conn: ConnId, error: ParlourError, what: str) -> None:
        reason, comment = failure_reason(error)
        self.failures[reason] = self.failures.get(reason, 0) + 1
        who = f" for {error.handle}" if error.handle else ""
        log.info("%s failed%s: %s %s", what, who, reason, comment)
        self.send((conn,), RequestFailed(error))

    # Service
    def connected(self, conn: ConnId, now: float) -> list[Effect]:
        self._start_checks(now)
        self._buckets[conn] = TokenBucket.full(self.settings.requests_per_second, now)
        try:
            self.lobby.connect(conn, now)
        except ConnectionLimit as error:
            self._fail(conn, error, "connection")
            self.close(conn, TRY_AGAIN_LATER, "connection limit reached")
        return self._drain()

    def received(self, conn: ConnId, data: str | bytes, now: float) -> list[Effect]:
        bucket = self._buckets.get(conn)
        if bucket is None:
            return []  # flooded and closing: nothing more is read
        if not bucket.allow(now):
            del self._buckets[conn]
            rate = self.settings.requests_per_second
            self._fail(conn, RateLimited(f"Too many requests: at most {rate:g} a second"), "request")
            self.close(conn, POLICY_VIOLATION, "rate limit exceeded")
            return self._drain()
        what = "request"
        try:
            request = decode_request(data, self.settings.max_message_bytes, self.settings.max_chat_chars)
            what = request.message
            self._dispatch(conn, request, now)
        except ParlourError as error:
            self._fail(conn, error, what)
        except Exception:
            log.exception("internal error handling %s", what)
            self._fail(conn, InternalError(), what)
        return self._drain()

    def _dispatch(self, conn: ConnId, request: Request, now: float) -> None:
        if request.message == "REGISTER_PLAYER":
            assert isinstance(request.context, WithHandle)
            player = self.lobby.register(conn, request.context.handle, now)
            log.info("REGISTER_PLAYER by %s", player.handle)
            return
        assert request.player_id is not None
        if request.message == "REREGISTER_PLAYER":
            assert isinstance(request.context, WithHandle)
            player = self.lobby.reregister(conn, request.player_id, request.context.handle, now)
            log.info("REREGISTER_PLAYER by %s", player.handle)
            return
        player = self.lobby.lookup(request.player_id, now, conn)
        log.info("%s by %s", request.message, player.handle)
        try:
            HANDLERS[request.message](self, conn, player, request.context, now)
        except UnknownPlayer:
            raise
        except ParlourError as error:
            if error.handle is None:
                error.handle = player.handle
            raise

    def disconnected(self, conn: ConnId, now: float) -> list[Effect]:
        self._buckets.pop(conn, None)
        try:
            self.lobby.disconnect(conn, now)
        except Exception:
            log.exception("internal error on disconnect")
        return self._drain()

    def tick(self, now: float) -> list[Effect]:
        self._start_checks(now)
        assert self.schedule is not None
        try:
            if self.lobby.grace_until is not None and now >= self.lobby.grace_until:
                self.lobby.end_grace(now)
            self.schedule.run(self.lobby, now)
        except Exception:
            log.exception("internal error in periodic checks")
        return self._drain()

    def _start_checks(self, now: float) -> None:
        if self.schedule is None:
            self.schedule = Schedule(self.settings, now)

    # Durability
    def restore(self, snapshot: Snapshot, now: float) -> list[Effect]:
        """Start recording for the store, and load what it holds (parlour.core.durable)."""
        self.lobby.journal.recording = True
        self.lobby.restore(snapshot, now, decode_options)
        return self._drain()

    def reload(self, records: list[Record], store: StoreBackend) -> LobbyReload:
        """On the store's thread: the stored rows of the players and games a failed commit
        touched."""
        return read_back(records, store)

    def store_failed(
        self, records: list[Record], conns: list[ConnId], reload: LobbyReload | None, now: float
    ) -> list[Effect]:
        """A commit failed: what it held never happened. The players and games it touched
        return to their stored state, and each request among them is refused."""
        reload = LobbyReload() if reload is None else reload
        if reload.failure is not None:
            log.error("cannot read the store back either: %s", reload.failure)
            log.error("cannot return %d changed records to their stored state", len(records))
        else:
            self.lobby.revert(reload.players, reload.games, decode_options, now)
        for conn in conns:
            self._fail(conn, StoreUnavailable(), "request")
        return self._drain()

    def live_games(self) -> list[dict[str, Any]]:
        """Every advertised or running game, for an admin."""
        return [
            {
                "protocol": "apologies",
                "game_id": game.id,
                "game": "apologies",
                "state": game.state.value,
                "players": [seat.handle for seat in game.seats if seat.handle],
            }
            for game in self.lobby.games.values()
            if game.state in (GameState.ADVERTISED, GameState.PLAYING)
        ]

    def abort_game(self, game_id: str, reason: str, now: float) -> tuple[list[Effect], str | None]:
        """An admin ends a game, as its advertiser cancels one: its players get
        GAME_CANCELLED with the admin's reason as the comment. The effects, or why it cannot be."""
        game = self.lobby.games.get(game_id)
        if game is None or game.state not in (GameState.ADVERTISED, GameState.PLAYING):
            return [], "no advertised or running Apologies game has this id"
        comment = f"An admin aborted this game: {reason}"
        self.lobby.broadcast(game, GameCancelled(game, "CANCELLED", comment))
        self.lobby.finish(game, GameState.CANCELLED, now, comment=comment)
        return self._drain(), None

    def shutdown(self, now: float) -> list[Effect]:
        self.lobby.shutdown(now)
        return self._drain()

    def stats(self) -> dict[str, int]:
        return {
            "connections": len(self.lobby.connections),
            "players": len(self.lobby.players),
            "games": len(self.lobby.games),
            "games_in_progress": self.lobby.ledger.in_progress,
        }
