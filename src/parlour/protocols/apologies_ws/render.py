"""Rendering lobby events as Apologies wire messages (apologies-wire-notes.md sections 2 and 5).

Field names and their order, enum NAMEs, ``null`` versus omitted keys and the timestamp format
are the contract with reference clients. Output is compact JSON (wire-notes 11).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import msgspec

from parlour.core.errors import (
    AdvertiserMayNotQuit,
    AlreadyPlaying,
    ConnectionLimit,
    DuplicateHandle,
    GameLimit,
    IllegalMove,
    InternalError,
    MalformedRequest,
    NoMovePending,
    NotAdvertiser,
    NotPlaying,
    ParlourError,
    PlayerLimit,
    UnknownGame,
    UnknownPlayer,
)
from parlour.core.events import (
    AvailableGames,
    Event,
    GameAdvertised,
    GameCancelled,
    GameCompleted,
    GameIdle,
    GameInactive,
    GameInvitation,
    GameJoined,
    GamePlayerChange,
    GamePlayerQuit,
    GamePlayerTurn,
    GameStarted,
    GameStateChange,
    PlayerIdle,
    PlayerInactive,
    PlayerMessageReceived,
    PlayerRegistered,
    PlayerUnregistered,
    RegisteredPlayers,
    RequestFailed,
    ServerShutdown,
    WebsocketIdle,
    WebsocketInactive,
)
from parlour.core.records import Game, GameState, Player
from parlour.games.apologies.engine import GameState as Play
from parlour.games.apologies.model import HOME, SAFE, START, Card, Color, Move, PawnMove

__all__ = ["FAILURES", "Renderer", "failure_reason", "timestamp"]

ENCODE = msgspec.json.Encoder().encode

#: The one boundary where the core's exception tree meets the protocol's failure reasons
#: (wire-notes 4): reason code and default comment, most specific class first.
FAILURES: list[tuple[type[ParlourError], str, str]] = [
    (MalformedRequest, "INVALID_REQUEST", "Invalid request"),
    (DuplicateHandle, "DUPLICATE_USER", "Handle is already in use"),
    (ConnectionLimit, "WEBSOCKET_LIMIT", "Connection limit reached; try again later"),
    (PlayerLimit, "USER_LIMIT", "System user limit reached; try again later"),
    (GameLimit, "GAME_LIMIT", "System game limit reached; try again later"),
    (UnknownPlayer, "INVALID_PLAYER", "Unknown or invalid player"),
    (UnknownGame, "INVALID_GAME", "Unknown or invalid game"),
    (NotPlaying, "NOT_PLAYING", "Player is not playing a game"),
    (NotAdvertiser, "NOT_ADVERTISER", "Player did not advertise this game"),
    (AlreadyPlaying, "ALREADY_PLAYING", "Player is already playing a game"),
    (NoMovePending, "NO_MOVE_PENDING", "No move is pending for this player"),
    (IllegalMove, "ILLEGAL_MOVE", "The chosen move is not legal"),
    (AdvertiserMayNotQuit, "ADVERTISER_MAY_NOT_QUIT", "Advertiser may not quit a game (cancel instead)"),
    (InternalError, "INTERNAL_ERROR", "Internal error"),
]
#: Reasons that never carry a handle (wire-notes 4).
ANONYMOUS = {"INVALID_REQUEST", "INVALID_PLAYER", "INTERNAL_ERROR", "WEBSOCKET_LIMIT"}


def failure_reason(error: ParlourError) -> tuple[str, str]:
    """(reason code, comment) for an error."""
    for kind, reason, description in FAILURES:
        if isinstance(error, kind):
            return reason, error.comment or description
    return "INTERNAL_ERROR", "Internal error"


@lru_cache(maxsize=8192)
def timestamp(seconds: float) -> str:
    """``2026-11-22T11:29:57,878+0000``: UTC, comma before truncated milliseconds (wire-notes 2.2)."""
    moment = datetime.fromtimestamp(seconds, UTC)
    return f"{moment:%Y-%m-%dT%H:%M:%S},{moment.microsecond // 1000:03d}+0000"


def _pawn(color: Color, index: int, position: int) -> dict[str, Any]:
    """The pawn object of wire-notes 5.1: exactly one of start/home/safe/square is set."""
    return {
        "color": color.name,
        "id": str(index),
        "start": position == START,
        "home": position == HOME,
        "safe": position - SAFE if SAFE <= position < HOME else None,
        "square": position if position < SAFE else None,
    }


COLOR_NAMES = tuple(color.name.encode() for color in Color)
CARD_NAMES = {card: card.name for card in Card}

#: Every pawn object pre-encoded: PAWNS[color][index][position] (position 0..66).
PAWNS: tuple[tuple[tuple[bytes, ...], ...], ...] = tuple(
    tuple(tuple(ENCODE(_pawn(color, index, position)) for position in range(START + 1)) for index in range(4))
    for color in Color
)


def _part(color: int, pawns: list[int], turns: int, hand: bytes) -> bytes:
    """One player of a GAME_STATE_CHANGE: colour, turns, hand and four pawns."""
    table = PAWNS[color]
    return b'{"color":"%s","turns":%d,"hand":%s,"pawns":[%s,%s,%s,%s]}' % (
        COLOR_NAMES[color],
        turns,
        hand,
        table[0][pawns[0]],
        table[1][pawns[1]],
        table[2][pawns[2]],
        table[3][pawns[3]],
    )


def _step(step: PawnMove) -> bytes:
    table = PAWNS[step.color][step.pawn]
    return b'{"start":' + table[step.start] + b',"end":' + table[step.end] + b"}"


def _move(move_id: str, move: Move) -> bytes:
    actions = b",".join(_step(s) for s in move.actions)
    effects = b",".join(_step(s) for s in move.side_effects)
    return b'{"move_id":"%s","card":"%s","actions":[%s],"side_effects":[%s]}' % (
        move_id.encode(),
        move.card.name.encode(),
        actions,
        effects,
    )


def _players(game: Game) -> list[dict[str, Any]]:
    started = game.state is not GameState.ADVERTISED
    return [
        {
            "handle": seat.handle,
            "player_color": Color(index).name if started else None,
            "player_type": seat.kind.value,
            "player_state": "PLAYING" if seat.state.value == "FINISHED" else seat.state.value,
        }
        for index, seat in enumerate(game.seats)
    ]


def _advertised(game: Game) -> dict[str, Any]:
    return {
        "game_id": game.id,
        "name": game.name,
        "mode": game.options["mode"].value,
        "advertiser_handle": game.advertiser,
        "players": game.players,
        "available": game.players - game.joined_humans(),
        "visibility": game.visibility.value,
        "invited_handles": game.invited,
    }


def _registered(player: Player) -> dict[str, Any]:
    return {
        "handle": player.handle,
        "registration_date": timestamp(player.registered),
        "last_active_date": timestamp(player.last_active),
        "connection_state": "CONNECTED" if player.connected else "DISCONNECTED",
        "activity_state": "IDLE" if player.idle else "ACTIVE",
        "player_state": player.play_state,
        "game_id": player.game.id if player.game is not None else None,
    }


def _message(name: str, context: dict[str, Any] | None = None, player_id: str | None = None) -> bytes:
    body: dict[str, Any] = {"message": name}
    if player_id is not None:
        body["player_id"] = player_id
    if context is not None:
        body["context"] = context
    return ENCODE(body)


class Renderer:
    """Turns events into wire text. ``history`` is how many history entries a state carries."""

    def __init__(self, history: int) -> None:
        self.history = history
        self.table: dict[type[Event], Callable[[Any], bytes]] = {
            ServerShutdown: lambda e: _message("SERVER_SHUTDOWN"),
            WebsocketIdle: lambda e: _message("WEBSOCKET_IDLE"),
            WebsocketInactive: lambda e: _message("WEBSOCKET_INACTIVE"),
            RequestFailed: self._failed,
            PlayerRegistered: lambda e: _message(
                "PLAYER_REGISTERED", {"handle": e.player.handle}, e.player.id
            ),
            RegisteredPlayers: lambda e: _message(
                "REGISTERED_PLAYERS", {"players": [_registered(p) for p in e.players]}
            ),
            AvailableGames: lambda e: _message(
                "AVAILABLE_GAMES", {"games": [_advertised(g) for g in e.games]}
            ),
            PlayerUnregistered: lambda e: _message("PLAYER_UNREGISTERED", {"handle": e.handle}),
            PlayerIdle: lambda e: _message("PLAYER_IDLE", {"handle": e.handle}),
            PlayerInactive: lambda e: _message("PLAYER_INACTIVE", {"handle": e.handle}),
            PlayerMessageReceived: lambda e: _message(
                "PLAYER_MESSAGE_RECEIVED",
                {"sender_handle": e.sender, "recipient_handles": e.recipients, "message": e.message},
            ),
            GameAdvertised: lambda e: _message("GAME_ADVERTISED", {"game": _advertised(e.game)}),
            GameInvitation: lambda e: _message("GAME_INVITATION", {"game": _advertised(e.game)}),
            GameJoined: lambda e: _message(
                "GAME_JOINED",
                {
                    "player_handle": e.handle,
                    "game_id": e.game.id,
                    "name": e.game.name,
                    "mode": e.game.options["mode"].value,
                    "advertiser_handle": e.game.advertiser,
                },
            ),
            GameStarted: lambda e: _message("GAME_STARTED", {"game_id": e.game.id}),
            GamePlayerChange: lambda e: _message(
                "GAME_PLAYER_CHANGE",
                {"game_id": e.game.id, "comment": e.comment, "players": _players(e.game)},
            ),
            GamePlayerQuit: lambda e: _message(
                "GAME_PLAYER_QUIT", {"handle": e.handle, "game_id": e.game.id}
            ),
            GameCancelled: lambda e: _message(
                "GAME_CANCELLED", {"game_id": e.game.id, "reason": e.reason, "comment": e.comment}
            ),
            GameCompleted: lambda e: _message(
                "GAME_COMPLETED", {"game_id": e.game.id, "winner": e.winner, "comment": e.comment}
            ),
            GameIdle: lambda e: _message("GAME_IDLE", {"game_id": e.game.id}),
            GameInactive: lambda e: _message("GAME_INACTIVE", {"game_id": e.game.id}),
            GameStateChange: self._state,
            GamePlayerTurn: self._turn,
        }

    def render(self, event: Event) -> str:
        return self.table[type(event)](event).decode()

    def _failed(self, event: RequestFailed) -> bytes:
        reason, comment = failure_reason(event.error)
        handle = None if reason in ANONYMOUS else event.error.handle
        return _message("REQUEST_FAILED", {"reason": reason, "comment": comment, "handle": handle})

    def _state(self, event: GameStateChange) -> bytes:
        """GAME_STATE_CHANGE (wire-notes 5.2) from the seat's own view of the game.

        The hot path of a busy server: history entries are encoded once per game, pawns come
        pre-encoded, and only the seat's own hand is read.
        """
        game = event.game
        play: Play = game.play
        seat = event.seat
        entries = self._entries(game)
        pawns, turns = play.pawns, play.turns
        # Opponents' parts (no hand) change only when their pawns or turn counts do.
        cache: dict[int, tuple[tuple[int, ...], bytes]] = game.memo.setdefault("parts", {})
        mine = b""
        others = []
        for color in play.colors:
            row = pawns[color]
            key = (*row, turns[color])
            if color != seat:
                hit = cache.get(color)
                if hit is None or hit[0] != key:
                    hit = cache[color] = (key, _part(color, row, turns[color], b"[]"))
                others.append(hit[1])
            else:
                mine = _part(color, row, turns[color], ENCODE([CARD_NAMES[c] for c in play.hands[color]]))
        return (
            b'{"message":"GAME_STATE_CHANGE","context":{"game_id":"%s","recent_history":[%s],"player":%s,"opponents":[%s]}}'
            % (
                game.id.encode(),
                b",".join(entries[-self.history :]),
                mine,
                b",".join(others),
            )
        )

    def _entries(self, game: Game) -> list[bytes]:
        """The game's history entries, encoded once each (history only grows)."""
        play: Play = game.play
        encoded: list[bytes] = game.memo.setdefault("history", [])
        history, times = play.history, game.times
        for index in range(len(encoded), len(history)):
            entry = history[index]
            # Entry 0 is the start, entry k the k-th move; "Game completed" shares the last move's time.
            encoded.append(
                ENCODE(
                    {
                        "action": entry.action,
                        "color": entry.color.name if entry.color is not None else None,
                        "card": entry.card.name if entry.card is not None else None,
                        "timestamp": timestamp(times[min(index, len(times) - 1)]),
                    }
                )
            )
        return encoded

    def _turn(self, event: GamePlayerTurn) -> bytes:
        """GAME_PLAYER_TURN (wire-notes 5.3): moves keyed by id in list order."""
        game = event.game
        moves = game.pending
        cards = {move.card for move in moves.values()}
        drawn = next(iter(cards)).name if len(cards) == 1 else None
        body = b",".join(
            b'"%s":%s' % (move_id.encode(), _move(move_id, move)) for move_id, move in moves.items()
        )
        return (
            b'{"message":"GAME_PLAYER_TURN","context":{"handle":%s,"game_id":"%s","drawn_card":%s,"moves":{%s}}}'
            % (
                ENCODE(game.seats[event.seat].handle),
                game.id.encode(),
                ENCODE(drawn),
                body,
            )
        )
