"""An admin's abort of a live /async game, sans I/O: the same on one server's hub and
on the owner of a cluster's shard (shards/shard.py), where a started game runs. The players are told
the reason by a server line in the game's chat, then the game is aborted as when nobody is left
to play (GameAbortedRequest; ABORTING until its humans confirm)."""

from __future__ import annotations

from typing import Final

from parlour.protocols.async_ws.game.game_registry import Games
from parlour.protocols.async_ws.game.lifecycle import LIVE
from parlour.protocols.async_ws.players.chat import SERVER
from parlour.protocols.async_ws.state.hub import Hub
from parlour.protocols.async_ws.wire.messages import ClientChatRequest

__all__ = ["CODE_ABORTED", "UNKNOWN", "abort_here"]

#: The chat code of the server's line that tells a game's players why an admin aborted it
#: (Parlour's own, after players/chat.py's codes).
CODE_ABORTED: Final = 10
#: Why an abort is refused when no live game has the id.
UNKNOWN: Final = "no live /async game has this id"


def abort_here(hub: Hub, games: Games, game_id: int, reason: str, now: float) -> str | None:
    """Abort a live game run by ``games``: None, or why it cannot be (unknown, over already)."""
    game = games.game(game_id)
    if game is None:
        return UNKNOWN
    if game.status not in LIVE or game.status == "ABORTING":
        return f"the game is {game.status} already"
    humans = [seat.player_id for seat in game.record.seats if seat.player_id is not None and not seat.robot]
    hub.to_players(
        humans,
        ClientChatRequest(
            game_id=game_id, text=f"An admin aborted this game: {reason}", sender=SERVER, code=CODE_ABORTED
        ),
    )
    if game.status == "NOT_STARTED":
        game.abort_unstarted(now)  # nobody has anything to confirm
    else:
        game.abort(now)
        game.save(now)
    return None
