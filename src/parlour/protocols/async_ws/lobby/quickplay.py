"""Quick play (Parlour extensions; docs/async.md "Quick play"): the requests that join and leave
matchmaking queues, the games the queues find, and the pushes that show a player their wait.

The queues are the hub's ``matchmaker`` (state/matchmaking.py, sans I/O); these handlers hold no
state. A game found is made through the registry (``Games.plan_match`` / ``match``) and starts at
once, the same start as an invitation whose last invitee accepts, so everything after it (robots,
clocks, placement on a shard in a cluster) is the ordinary path.

Queues are not stored: a queue lives as long as its player stays signed in. Signing out ends
every queue of the player; a server that stops tells each waiting player (QuickPlayStatusRequest
``ended: SERVER_STOPPING``) before it closes the connections (in a cluster, the hub's node tells
those of every node: ``AsyncService.farewell``), and after any restart (a crash
too, or a new hub in a cluster) every connection is new, so a client queues again once signed in.
"""

from __future__ import annotations

from typing import Final

from openskill.models import PlackettLuce

from parlour.core.rating_scale import shown_rating
from parlour.protocols.async_ws.game.plans import Refusal
from parlour.protocols.async_ws.game.rules import RULES, seat_range
from parlour.protocols.async_ws.state.hub import Handler, Hub, Session
from parlour.protocols.async_ws.state.matchmaking import Match, QueueKey, Ticket
from parlour.protocols.async_ws.wire.messages import (
    GameConfiguration,
    QueueEntry,
    QuickPlayJoinRequest,
    QuickPlayLeaveRequest,
    QuickPlayMatchedRequest,
    QuickPlayStatusRequest,
)

__all__ = ["HANDLERS", "STATUS_EVERY", "join_queue", "leave_queue", "signed_out", "stopping", "tick"]

#: How often a waiting player is shown their queues (the time waited, the window as it widens).
STATUS_EVERY: Final = 5.0
#: The rating of a player with no rated game of a type: the model's default mu
#: (players/ratings.py's).
DEFAULT_MU: Final = PlackettLuce().mu


def _rating(hub: Hub, player_id: int, game_type: str) -> float:
    account = hub.accounts.get(player_id)
    if account is not None and game_type in account.ratings:
        return account.ratings[game_type][0]
    return DEFAULT_MU


def _entry(hub: Hub, ticket: Ticket, now: float) -> QueueEntry:
    low, high = hub.matchmaker.window(ticket, now)
    after = ticket.robots_after
    return QueueEntry(
        game_type=ticket.key.game_type,
        seats=ticket.key.seats,
        ranked=ticket.key.ranked,
        waited_seconds=round(now - ticket.since, 3),
        rating=round(ticket.rating, 3),
        window_low=round(low, 3),
        window_high=round(high, 3),
        robots_in_seconds=None if after is None else round(max(0.0, ticket.since + after - now), 3),
        # The window as the page shows it, on the scale of every other rating (docs/ratings.md).
        shown_low=shown_rating(low, 0).rating,
        shown_high=shown_rating(high, 0).rating,
    )


def _status(hub: Hub, player_id: int, now: float, request_id: str | None = None) -> QuickPlayStatusRequest:
    hub.matchmaker.told(player_id, now)
    return QuickPlayStatusRequest(
        queues=[_entry(hub, ticket, now) for ticket in hub.matchmaker.tickets(player_id)],
        request_id=request_id,
    )


def join_queue(hub: Hub, session: Session, msg: QuickPlayJoinRequest, now: float) -> None:
    player_id = session.player()
    if msg.game_type not in RULES:
        return hub.error(
            session.conn,
            "BAD_REQUEST",
            f"unknown game type {msg.game_type!r}; choose from {', '.join(RULES)}",
            msg,
        )
    low, high = seat_range(msg.game_type)
    if not low <= msg.seats <= high:
        return hub.error(
            session.conn, "BAD_REQUEST", f"`{msg.game_type}` is played by {low} to {high} players", msg
        )
    limit = hub.limits.max_games
    if hub.games.playing(player_id) >= limit:
        return hub.error(session.conn, "TOO_MANY_OFFERS", f"you are in {limit} games already", msg)
    key = QueueKey(msg.game_type, msg.seats, msg.ranked)
    refusal = hub.matchmaker.refusal(player_id, key)
    if refusal is not None:
        code, words = refusal
        return hub.error(session.conn, code, words, msg)  # type: ignore[arg-type]
    rating = _rating(hub, player_id, msg.game_type)
    hub.matchmaker.join(player_id, key, rating, msg.robots_after, now)
    hub.send(session.conn, _status(hub, player_id, now, msg.request_id))
    _make(hub, hub.matchmaker.match(now, everywhere=False), now)


def leave_queue(hub: Hub, session: Session, msg: QuickPlayLeaveRequest, now: float) -> None:
    player_id = session.player()
    if not hub.matchmaker.leave(player_id, msg.game_type, msg.seats, msg.ranked):
        return hub.error(session.conn, "NOT_QUEUED", "you are waiting in no such queue", msg)
    hub.send(session.conn, _status(hub, player_id, now, msg.request_id))


def tick(hub: Hub, now: float) -> None:
    """On the ticker: games that wider windows and due robots make now, then each waiting
    player's queues every STATUS_EVERY seconds."""
    matchmaker = hub.matchmaker
    if not len(matchmaker):
        return
    _make(hub, matchmaker.match(now), now)
    for player_id in matchmaker.due(now, STATUS_EVERY):
        hub.to_player(player_id, _status(hub, player_id, now))


def _make(hub: Hub, matches: list[Match], now: float) -> None:
    for match in matches:
        key = match.key
        players = tuple(ticket.player_id for ticket in match.tickets)
        config = GameConfiguration(
            game_type=key.game_type,
            rules=key.game_type,  # type: ignore[arg-type]  # RULES checked on joining
            min_players=key.seats,
            max_players=key.seats,
            ranked=key.ranked,
        )
        plan = hub.games.plan_match(config, players, match.robots)
        if isinstance(plan, Refusal):
            _unmade(hub, match, plan, now)
            continue
        game = hub.games.match(plan, now)
        for ticket in match.tickets:
            hub.to_player(
                ticket.player_id,
                QuickPlayMatchedRequest(
                    game_id=game.id,
                    game_type=key.game_type,
                    seats=key.seats,
                    ranked=key.ranked,
                    waited_seconds=round(now - ticket.since, 3),
                    robots=match.robots,
                ),
            )


def _unmade(hub: Hub, match: Match, refusal: Refusal, now: float) -> None:
    """A player of the match reached the games limit while waiting (an invitation accepted, a
    game joined): they leave every queue, told why; the others wait on as they were."""
    over = int(refusal.message) if refusal.code == "TOO_MANY_OFFERS" else None
    hub.matchmaker.put_back(ticket for ticket in match.tickets + match.ended if ticket.player_id != over)
    if over is not None:
        hub.matchmaker.leave(over)
        hub.to_player(over, QuickPlayStatusRequest(queues=[], ended="TOO_MANY_GAMES"))


def signed_out(hub: Hub, player_id: int) -> None:
    """A player who signs out leaves every queue (a game found now would start without them)."""
    hub.matchmaker.leave(player_id)


def stopping(hub: Hub) -> None:
    """The server stops: queues are not kept, so each waiting player is told to queue again."""
    for player_id in hub.matchmaker.clear():
        hub.to_player(player_id, QuickPlayStatusRequest(queues=[], ended="SERVER_STOPPING"))


HANDLERS: Final[dict[str, Handler]] = {
    "QuickPlayJoinRequest": join_queue,
    "QuickPlayLeaveRequest": leave_queue,
}
