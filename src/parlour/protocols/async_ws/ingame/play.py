"""In game: the requests of a running game (the Scalable Server text "In game";
docs/async-decisions.md S9-S12, S19, S20), routed to the game (game/machine.py).

The server knows no rules with ``rules: "client"``: the committer says who plays next, and a seat
that a robot must play (an invited robot, a forfeiter, a player out of time or idle) is played
by a client the server asks with PlayerTimeoutRequest. With a rules plugin (S9) the server
computes everything and plays those seats itself.

Each request is a row of game_requests.py's table (its game looked up, asked for a plan with the
game unchanged, the refusal answered or the plan applied), as are simultaneous turns,
interruptions and multicast (phase_requests.py). Observers (S17) get every game event the players
get: a message meant for one seat goes to them as a copy, with the spectator view under server
rules, never the seat's.
"""

from __future__ import annotations

from typing import Final

from parlour.protocols.async_ws.ingame.game_requests import handlers
from parlour.protocols.async_ws.state.hub import Handler, Hub, Session
from parlour.protocols.async_ws.wire.messages import ClocksStatusRequest, GetClocksRequest

__all__ = ["HANDLERS", "get_clocks"]


def get_clocks(hub: Hub, session: Session, msg: GetClocksRequest, now: float) -> None:
    """The clocks, to a seat of the game. Not a row of game_requests.py's table: a read plans
    nothing and applies nothing, so it answers from the record at once."""
    game = hub.games.get(msg.game_id)
    if game is None or session.player_id is None or game.seat_of(session.player_id) is None:
        return hub.error(session.conn, "UNKNOWN_GAME", "you are not in a game with this id", msg)
    hub.send(
        session.conn, ClocksStatusRequest(game_id=game.id, clocks=game.clocks(now), request_id=msg.request_id)
    )


#: The requests of a started game this module answers, by message type (the service's table,
#: and a shard's in a cluster).
HANDLERS: Final[dict[str, Handler]] = {
    **handlers(
        "CommitActionRequest",
        "GameForfeitRequest",
        "GameOverRequest",
        "GameOutcomeConfirmationRequest",
        "GameAbortedConfirmationRequest",
    ),
    "GetClocksRequest": get_clocks,
}
