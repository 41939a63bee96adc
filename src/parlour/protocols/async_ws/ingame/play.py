"""In game: the requests of a running game (the Scalable Server text "In game";
docs/async-decisions.md S9-S12, S19, S20), routed to the game (game/machine.py).

The server knows no rules with ``rules: "client"``: the committer says who plays next, and a seat
that a robot must play (an invited robot, a forfeiter, a player out of time or idle) is played
by a client the server asks with PlayerTimeoutRequest. With a rules plugin (S9) the server
computes everything and plays those seats itself.

Each handler looks the game up, asks it for a plan (the game unchanged), and sends the refusal or
applies the plan; simultaneous turns, interruptions and multicast are routed the same way by
phase_requests.py. Observers (S17) get every game event the players get: a message meant for one
seat goes to them as a copy, with the spectator view under server rules, never the seat's.
"""

from __future__ import annotations

from typing import Final

from parlour.protocols.async_ws.game.machine import Game
from parlour.protocols.async_ws.game.plans import Action, Leave, Refusal
from parlour.protocols.async_ws.state.hub import Handler, Hub, Session
from parlour.protocols.async_ws.wire.messages import (
    ClocksStatusRequest,
    CommitActionRequest,
    ErrorCode,
    GameAbortedConfirmationRequest,
    GameForfeitRequest,
    GameOutcomeConfirmationRequest,
    GameOverRequest,
    GetClocksRequest,
)

__all__ = [
    "HANDLERS",
    "commit",
    "confirm_abort",
    "confirm_outcome",
    "forfeit",
    "game_over",
    "get_clocks",
    "refuse",
    "running",
]


def refuse(hub: Hub, session: Session, refusal: Refusal, request: object) -> None:
    """A request that changes nothing: the ErrorRequest of its refusal."""
    code: ErrorCode = refusal.code  # type: ignore[assignment]
    hub.error(session.conn, code, refusal.message, request)


def running(hub: Hub, session: Session, game_id: int, request: object) -> tuple[Game, int] | None:
    """The game a request names and its sender's account, or UNKNOWN_GAME (no such game)."""
    game = hub.games.game(game_id)
    if game is None:
        hub.error(session.conn, "UNKNOWN_GAME", "no game in progress with this id", request)
        return None
    assert session.player_id is not None  # handlers run only for authenticated sessions
    return game, session.player_id


def commit(hub: Hub, session: Session, msg: CommitActionRequest, now: float) -> None:
    found = running(hub, session, msg.game_id, msg)
    if found is None:
        return
    game, player_id = found
    plan = game.plan_commit(player_id, msg)
    if isinstance(plan, Refusal):
        refuse(hub, session, plan, msg)
    elif isinstance(plan, Action):
        game.act(plan, now)
    else:
        game.commit(plan, now)


def get_clocks(hub: Hub, session: Session, msg: GetClocksRequest, now: float) -> None:
    game = hub.games.get(msg.game_id)
    if game is None or session.player_id is None or game.seat_of(session.player_id) is None:
        return hub.error(session.conn, "UNKNOWN_GAME", "you are not in a game with this id", msg)
    hub.send(
        session.conn, ClocksStatusRequest(game_id=game.id, clocks=game.clocks(now), request_id=msg.request_id)
    )


def forfeit(hub: Hub, session: Session, msg: GameForfeitRequest, now: float) -> None:
    game = hub.games.game(msg.game_id)
    assert session.player_id is not None
    if game is None:
        return hub.error(session.conn, "UNKNOWN_GAME", "you are not in a game in progress with this id", msg)
    plan = game.plan_forfeit(session.player_id, msg.request_id)
    if isinstance(plan, Refusal):
        refuse(hub, session, plan, msg)
    elif isinstance(plan, Leave):
        game.leave(plan, now)  # quitting a game that has not started leaves it
    else:
        game.forfeit(plan, now)


def game_over(hub: Hub, session: Session, msg: GameOverRequest, now: float) -> None:
    found = running(hub, session, msg.game_id, msg)
    if found is None:
        return
    game, player_id = found
    plan = game.plan_finish(player_id, msg)
    if isinstance(plan, Refusal):
        refuse(hub, session, plan, msg)
    else:
        game.game_over(plan, now)


def confirm_abort(hub: Hub, session: Session, msg: GameAbortedConfirmationRequest, now: float) -> None:
    _confirm(hub, session, msg.game_id, "ABORTING", msg, now)


def confirm_outcome(hub: Hub, session: Session, msg: GameOutcomeConfirmationRequest, now: float) -> None:
    _confirm(hub, session, msg.game_id, "OUTCOME", msg, now)


def _confirm(hub: Hub, session: Session, game_id: int, status: str, msg: object, now: float) -> None:
    game = hub.games.game(game_id)
    assert session.player_id is not None
    if game is None:
        return hub.error(session.conn, "UNKNOWN_GAME", f"you have no game in {status} with this id", msg)
    plan = game.plan_confirm(session.player_id, status)
    if isinstance(plan, Refusal):
        refuse(hub, session, plan, msg)
    else:
        game.confirm(plan, now)


#: The requests of a started game this module answers, by message type (the service's table,
#: and a shard's in a cluster).
HANDLERS: Final[dict[str, Handler]] = {
    "CommitActionRequest": commit,
    "GetClocksRequest": get_clocks,
    "GameForfeitRequest": forfeit,
    "GameOverRequest": game_over,
    "GameOutcomeConfirmationRequest": confirm_outcome,
    "GameAbortedConfirmationRequest": confirm_abort,
}
