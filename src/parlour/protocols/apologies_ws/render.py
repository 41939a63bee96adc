"""Rendering lobby events as Apologies wire messages (docs/apologies-protocol.md, "The envelope"
and "Events").

Field names and their order, enum NAMEs, ``null`` versus omitted keys and the timestamp format
are the contract with reference clients. Output is compact JSON.
"""

from __future__ import annotations

import math
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
    RateLimited,
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
from parlour.games.apologies.model import START, Card, Color, HistoryEntry, Move, PawnMove
from parlour.games.apologies.public import pawn_json

__all__ = ["FAILURES", "Renderer", "failure_reason", "timestamp"]

ENCODE = msgspec.json.Encoder().encode

#: The one boundary where the core's exception tree meets the protocol's failure reasons
#: (docs/apologies-protocol.md, "Events"): reason code and default comment, most specific
#: class first.
FAILURES: list[tuple[type[ParlourError], str, str]] = [
    (MalformedRequest, "INVALID_REQUEST", "Invalid request"),
    # The event model has no reason for a flood; the connection is closed (1008) after it.
    (RateLimited, "INVALID_REQUEST", "Too many requests"),
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
#: Reasons that never carry a handle.
ANONYMOUS = {"INVALID_REQUEST", "INVALID_PLAYER", "INTERNAL_ERROR", "WEBSOCKET_LIMIT"}


def failure_reason(error: ParlourError) -> tuple[str, str]:
    """(reason code, comment) for an error."""
    for kind, reason, description in FAILURES:
        if isinstance(error, kind):
            return reason, error.comment or description
    return "INTERNAL_ERROR", "Internal error"


def timestamp(seconds: float) -> str:
    """``2026-11-22T11:29:57,878+0000``: UTC, comma before truncated milliseconds."""
    return timestamp_bytes(seconds).decode()


def timestamp_bytes(seconds: float) -> bytes:
    """:func:`timestamp` as bytes, as the history entries of every state carry it.

    One history entry per move makes this hot: the date and time of day are formatted once per
    second (and the last second's text is kept, as consecutive moves mostly share it), the
    milliseconds' text is looked up, and microseconds are rounded as ``datetime.fromtimestamp``
    rounds them.
    """
    fraction, whole = math.modf(seconds)
    micros = round(fraction * 1_000_000)
    if micros >= 1_000_000:
        whole += 1
        micros -= 1_000_000
    elif micros < 0:  # before 1970
        whole -= 1
        micros += 1_000_000
    second = int(whole)
    last = _LAST_SECOND
    if last.second != second:
        last.second = second
        last.text = _second(second).encode()
    return last.text + _MILLIS[micros // 1000]


class _Second:
    """The last whole second :func:`timestamp_bytes` formatted, and its text."""

    __slots__ = ("second", "text")

    def __init__(self) -> None:
        self.second: int | None = None
        self.text = b""


_LAST_SECOND = _Second()
#: A timestamp's end for each millisecond: ``,000+0000`` .. ``,999+0000``.
_MILLIS: tuple[bytes, ...] = tuple(b",%03d+0000" % millis for millis in range(1000))


@lru_cache(maxsize=256)
def _second(seconds: int) -> str:
    return f"{datetime.fromtimestamp(seconds, UTC):%Y-%m-%dT%H:%M:%S}"


#: JSON values of colours and cards (null for history entries without one).
COLOR_JSON: dict[int | None, bytes] = {None: b"null", **{c: b'"%s"' % c.name.encode() for c in Color}}
CARD_JSON: dict[Card | None, bytes] = {None: b"null", **{c: b'"%s"' % c.name.encode() for c in Card}}

#: Every pawn object pre-encoded: PAWNS[color][index][position] (position 0..66).
PAWNS: tuple[tuple[tuple[bytes, ...], ...], ...] = tuple(
    tuple(
        tuple(ENCODE(pawn_json(color, index, position)) for position in range(START + 1))
        for index in range(4)
    )
    for color in Color
)


def _part(color: int, pawns: list[int], turns: int, hand: bytes) -> bytes:
    """One player of a GAME_STATE_CHANGE: colour, turns, hand and four pawns."""
    table = PAWNS[color]
    return b'{"color":%s,"turns":%d,"hand":%s,"pawns":[%s,%s,%s,%s]}' % (
        COLOR_JSON[color],
        turns,
        hand,
        table[0][pawns[0]],
        table[1][pawns[1]],
        table[2][pawns[2]],
        table[3][pawns[3]],
    )


def _step(step: PawnMove) -> bytes:
    table = PAWNS[step.color][step.pawn]
    return b'{"start":%s,"end":%s}' % (table[step.start], table[step.end])


def _move(move_id: bytes, move: Move) -> bytes:
    """One entry of GAME_PLAYER_TURN's moves, keyed by its id."""
    return b'"%s":{"move_id":"%s","card":%s,"actions":[%s],"side_effects":[%s]}' % (
        move_id,
        move_id,
        CARD_JSON[move.card],
        b",".join([_step(s) for s in move.actions]),
        b",".join([_step(s) for s in move.side_effects]),
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


class _Encoded:
    """What the renderer keeps about one game between its events, already encoded."""

    __slots__ = ("head", "history", "parts")

    def __init__(self, game_id: str, colors: int) -> None:
        self.head = b'{"message":"GAME_STATE_CHANGE","context":{"game_id":"%s","recent_history":[' % (
            game_id.encode()
        )
        #: One entry per history entry of the game (history only grows).
        self.history: list[bytes] = []
        #: Per colour: [pawns, turns, part] of the last part rendered without a hand.
        self.parts: list[list[Any]] = [[None, -1, b""] for _ in range(colors)]

    def encode_history(self, entries: list[HistoryEntry], times: list[float]) -> None:
        # Entry 0 is the start, entry k the k-th move; "Game completed" shares the last move's time.
        encoded = self.history
        last = len(times) - 1
        for index in range(len(encoded), len(entries)):
            entry = entries[index]
            encoded.append(
                b'{"action":%s,"color":%s,"card":%s,"timestamp":"%s"}'
                % (
                    ENCODE(entry.action),
                    COLOR_JSON[entry.color],
                    CARD_JSON[entry.card],
                    timestamp_bytes(times[index if index < last else last]),
                )
            )


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

    def render(self, event: Event) -> bytes:
        return self.table[type(event)](event)

    def _failed(self, event: RequestFailed) -> bytes:
        reason, comment = failure_reason(event.error)
        handle = None if reason in ANONYMOUS else event.error.handle
        return _message("REQUEST_FAILED", {"reason": reason, "comment": comment, "handle": handle})

    def _state(self, event: GameStateChange) -> bytes:
        """GAME_STATE_CHANGE from the seat's own view of the game.

        The hot path of a busy server (one per move and human): history entries are encoded
        once per game, pawns come pre-encoded, opponents' parts are kept until their pawns or
        turn counts change, and only the seat's own hand is read.
        """
        game = event.game
        play: Play = game.play
        seat = event.seat
        memo: _Encoded | None = game.memo.get("apologies")
        if memo is None:
            memo = game.memo["apologies"] = _Encoded(game.id, len(play.pawns))
        history = memo.history
        if len(history) < len(play.history):
            memo.encode_history(play.history, game.times)
        pawns, turns, parts = play.pawns, play.turns, memo.parts
        mine = b""
        others = []
        for color in play.colors:
            row = pawns[color]
            count = turns[color]
            if color == seat:
                hand = play.hands[color]
                cards = b"[%s]" % b",".join(CARD_JSON[c] for c in hand) if hand else b"[]"
                mine = _part(color, row, count, cards)
                continue
            part = parts[color]
            if part[1] != count or part[0] != row:
                part[:] = row[:], count, _part(color, row, count, b"[]")
            others.append(part[2])
        return b'%s%s],"player":%s,"opponents":[%s]}}' % (
            memo.head,
            b",".join(history[-self.history :]),
            mine,
            b",".join(others),
        )

    def _turn(self, event: GamePlayerTurn) -> bytes:
        """GAME_PLAYER_TURN: moves keyed by id in list order."""
        game = event.game
        moves = game.pending
        cards = {move.card for move in moves.values()}
        drawn = CARD_JSON[next(iter(cards))] if len(cards) == 1 else b"null"
        return (
            b'{"message":"GAME_PLAYER_TURN","context":{"handle":%s,"game_id":"%s","drawn_card":%s,"moves":{%s}}}'
            % (
                ENCODE(game.seats[event.seat].handle),
                game.id.encode(),
                drawn,
                b",".join([_move(move_id.encode(), move) for move_id, move in moves.items()]),
            )
        )
