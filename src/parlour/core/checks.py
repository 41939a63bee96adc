"""Periodic idle checks (docs/settings.md, "Idle connections, players and games").

Each check is a function of the lobby and the current time; a :class:`Schedule` decides which
are due, so a test drives them with a fake clock and never sleeps. Thresholds are compared with
``>=``. Parlour's fix: a game is announced idle once per idle spell, not on every run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from parlour.core.events import (
    GameCancelled,
    GameIdle,
    GameInactive,
    PlayerIdle,
    PlayerInactive,
    WebsocketIdle,
    WebsocketInactive,
)
from parlour.core.lobby import Lobby
from parlour.core.records import GameState
from parlour.settings import Settings

__all__ = ["Schedule", "check_games", "check_obsolete_games", "check_players", "check_websockets"]

NORMAL_CLOSURE = 1000


def check_websockets(lobby: Lobby, now: float) -> None:
    """Connections with no registered player: idle once, then closed when inactive."""
    settings = lobby.settings
    for connection in list(lobby.connections.values()):
        if connection.players:
            continue  # players are marked idle before their connection
        quiet = now - connection.last_active
        if quiet >= settings.websocket_inactive:
            lobby.send_to((connection.id,), WebsocketInactive())
            lobby.sink.close(connection.id, NORMAL_CLOSURE, "inactive")
        elif quiet >= settings.websocket_idle and not connection.idle:
            connection.idle = True
            lobby.send_to((connection.id,), WebsocketIdle())


def check_players(lobby: Lobby, now: float) -> None:
    """Idle players are told once; inactive (or idle and disconnected) ones are unregistered."""
    settings = lobby.settings
    for player in list(lobby.players.values()):
        quiet = now - player.last_active
        if quiet >= settings.player_inactive or (quiet >= settings.player_idle and not player.connected):
            if player.connected:
                lobby.tell(player, PlayerInactive(player.handle))
            lobby.unregister(player, now)
        elif quiet >= settings.player_idle and not player.idle:
            player.idle = True
            lobby.tell(player, PlayerIdle(player.handle))


def check_games(lobby: Lobby, now: float) -> None:
    """Advertised and running games: idle once per idle spell, cancelled when inactive."""
    settings = lobby.settings
    for game in list(lobby.games.values()):
        if not game.in_progress:
            continue
        quiet = now - game.last_active
        if quiet >= settings.game_inactive:
            lobby.broadcast(game, GameInactive(game))
            lobby.broadcast(game, GameCancelled(game, "INACTIVE", None))
            lobby.finish(game, GameState.CANCELLED, now)
        elif quiet >= settings.game_idle and not game.idle:
            game.idle = True
            lobby.broadcast(game, GameIdle(game))


def check_obsolete_games(lobby: Lobby, now: float) -> None:
    """Finished games are forgotten once older than the retention period (no message)."""
    retention = lobby.settings.game_retention
    for game_id, game in list(lobby.games.items()):
        if game.finished is not None and now - game.finished >= retention:
            del lobby.games[game_id]


@dataclass(slots=True)
class _Due:
    check: Callable[[Lobby, float], None]
    period: float
    next_run: float


class Schedule:
    """When each check runs next: first after ``check_delay``, then every period."""

    def __init__(self, settings: Settings, started: float) -> None:
        first = started + settings.check_delay
        self.due = [
            _Due(check_websockets, settings.check_period, first),
            _Due(check_players, settings.check_period, first),
            _Due(check_games, settings.check_period, first),
            _Due(check_obsolete_games, settings.obsolete_check_period, first),
        ]

    def run(self, lobby: Lobby, now: float) -> None:
        for due in self.due:
            if now >= due.next_run:
                due.check(lobby, now)
                # Start-to-start periods; a long pause runs a check once, not once per missed slot.
                while due.next_run <= now:
                    due.next_run += due.period
