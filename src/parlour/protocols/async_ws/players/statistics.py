"""Server statistics (the Scalable Server text "Server Statistics"; docs/async-decisions.md
S8): the figures once, or again whenever they change while subscribed. The subscriptions are the
hub's ``Statistics`` (state/social_state.py).
"""

from __future__ import annotations

from parlour.protocols.async_ws.game.lifecycle import LIVE
from parlour.protocols.async_ws.state.hub import Hub, Session
from parlour.protocols.async_ws.wire.messages import AskServerStatisticsRequest, ServerStatisticsRequest

__all__ = ["ask_statistics", "push_statistics"]


def _figures(hub: Hub) -> tuple[int, int, int]:
    """(live games, players with a live game or connected, connected players)."""
    hosted = sum(1 for game in hub.games.values() if game.status in LIVE)
    players = set(hub.online)
    players.update(hub.games.players())
    return hosted, len(players), len(hub.online)


def _statistics(figures: tuple[int, int, int], request_id: str | None = None) -> ServerStatisticsRequest:
    hosted, players, connected = figures
    return ServerStatisticsRequest(
        hosted_games=hosted, players=players, connected_players=connected, request_id=request_id
    )


def ask_statistics(hub: Hub, session: Session, msg: AskServerStatisticsRequest, now: float) -> None:
    """The figures once; with ``subscribe`` again whenever they change (at most every
    ``list_interval``, S8) until asked with ``subscribe`` false."""
    player_id = session.player()
    figures = _figures(hub)
    hub.send(session.conn, _statistics(figures, msg.request_id))
    if msg.subscribe:
        hub.statistics.subscribe(player_id, figures, now)
    else:
        hub.statistics.unsubscribe(player_id)


def push_statistics(hub: Hub, now: float) -> None:
    due = hub.statistics.due(now, hub.limits.list_interval)
    if not due:
        return
    figures = _figures(hub)
    for player_id in hub.statistics.outdated(due, figures, now):
        hub.to_player(player_id, _statistics(figures))
