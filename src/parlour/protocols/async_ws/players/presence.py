"""Presence (the Scalable Server text "Presence", "Switching to a Game"; docs/async-decisions.md
S15). What each connection monitors, subscribed to and switched to is the hub's ``Presence``
(state/social_state.py).

Decisions where the text is silent, beside S15:

- Presence monitoring (RegisterPresenceRequest, which replaces the set), subscriptions (presence,
  statistics) and the game a player switched to belong to the connection: signing out ends them.
  Subscribing sends the current presence of every monitored player on the next batch.
- In-game presence (PlayerPresenceUpdateRequest) is relative to the game: IN_GAME when the player
  switched to that game, else ONLINE or OFFLINE (another game's id is not shown). Switching into a
  game tells its other players at once, as the text says; other changes (signing in or out,
  leaving the game) reach those of its players who switched to it.
"""

from __future__ import annotations

from functools import partial
from typing import Final

from parlour.protocols.async_ws.game.model import AsyncGame
from parlour.protocols.async_ws.state.hub import Hub, Session
from parlour.protocols.async_ws.wire.messages import (
    AsyncBuddyPresencePartialUpdateRequest,
    PlayerPresenceUpdateRequest,
    PresenceUpdate,
    RegisterPresenceRequest,
    SubscribePresenceServiceRequest,
    SwitchedToGameRequest,
)

__all__ = [
    "PRESENCE_INTERVAL",
    "presence",
    "push_presence",
    "register_presence",
    "signed_in",
    "signed_out",
    "subscribe_presence",
    "switched_to_game",
]

#: S15: presence updates are batched, at most one a second per subscriber.
PRESENCE_INTERVAL: Final = 1.0


def presence(hub: Hub, player_id: int) -> PresenceUpdate:
    """A player's presence: OFFLINE, ONLINE, or IN_GAME with the game its UI switched to."""
    if player_id not in hub.online:
        return PresenceUpdate(player_id=player_id, presence="OFFLINE")
    game_id = hub.presence_state.switched(player_id)
    if game_id is not None:
        return PresenceUpdate(player_id=player_id, presence="IN_GAME", game_id=game_id)
    return PresenceUpdate(player_id=player_id, presence="ONLINE")


def _presence_in(hub: Hub, player_id: int, game_id: int, online: bool) -> PresenceUpdate:
    """A player's presence as a game's other players see it: another game's id is not theirs."""
    if not online:
        return PresenceUpdate(player_id=player_id, presence="OFFLINE")
    if hub.presence_state.switched(player_id) == game_id:
        return PresenceUpdate(player_id=player_id, presence="IN_GAME", game_id=game_id)
    return PresenceUpdate(player_id=player_id, presence="ONLINE")


def _tell_switched(hub: Hub, game: AsyncGame, player_id: int, online: bool) -> None:
    """PlayerPresenceUpdateRequest about ``player_id`` to the other players of ``game`` whose UI
    is in it ("while in a game, the opponents presence is automatically monitored")."""
    switched = hub.presence_state.switched
    others = [
        seat.player_id
        for seat in game.seats
        if seat.player_id is not None and seat.player_id != player_id and switched(seat.player_id) == game.id
    ]
    if others:
        update = _presence_in(hub, player_id, game.id, online)
        hub.to_players(others, PlayerPresenceUpdateRequest(game_id=game.id, updates=[update]))


def signed_in(hub: Hub, player_id: int) -> None:
    """``player_id`` signed in (its connection is ``hub.online[player_id]``). A connection
    replacing another starts afresh: monitoring, subscriptions and the switched game were the old
    one's."""
    hub.presence_state.forget(player_id)
    hub.presence_state.changed(player_id)
    for game in hub.games.live_games(player_id):
        _tell_switched(hub, game, player_id, online=True)


def signed_out(hub: Hub, player_id: int) -> None:
    """The account's last connection is gone (OFFLINE from now, whatever ``hub.online`` still
    says)."""
    hub.presence_state.forget(player_id)
    hub.presence_state.changed(player_id)
    for game in hub.games.live_games(player_id):
        _tell_switched(hub, game, player_id, online=False)


def switched_to_game(hub: Hub, session: Session, msg: SwitchedToGameRequest, now: float) -> None:
    """The UI entered a game of this player (IN_GAME), or left games (``game_id`` absent: ONLINE).
    No reply (the text); switching into a game tells its other players at once."""
    player_id = session.player()
    game = hub.games.get(msg.game_id) if msg.game_id is not None else None
    if msg.game_id is not None and (game is None or game.seat_of(player_id) is None):
        return hub.error(session.conn, "UNKNOWN_GAME", "you are not in a game with this id", msg)
    state = hub.presence_state
    previous = state.switched(player_id)
    if previous == msg.game_id:
        return
    state.switch(player_id, msg.game_id)
    state.changed(player_id)
    if player_id in hub.lobby:
        hub.lobby.player_changed(player_id)  # the lobby lists show it IN_GAME, or ONLINE again
    left = hub.games.get(previous) if previous is not None else None
    if left is not None:
        _tell_switched(hub, left, player_id, online=True)
    if game is not None:
        update = PresenceUpdate(player_id=player_id, presence="IN_GAME", game_id=game.id)
        others = [
            seat.player_id
            for seat in game.seats
            if seat.player_id is not None and seat.player_id != player_id
        ]
        hub.to_players(others, PlayerPresenceUpdateRequest(game_id=game.id, updates=[update]))


def register_presence(hub: Hub, session: Session, msg: RegisterPresenceRequest, now: float) -> None:
    """The players this connection monitors (replaces the set; no reply)."""
    for other in msg.player_ids:
        if other not in hub.accounts:
            return hub.error(session.conn, "UNKNOWN_PLAYER", f"no player {other}", msg)
    hub.presence_state.monitor(session.player(), set(msg.player_ids))


def subscribe_presence(hub: Hub, session: Session, msg: SubscribePresenceServiceRequest, now: float) -> None:
    """Start (with the monitored players' presence in the next batch) or stop the stream."""
    if msg.subscribe:
        hub.presence_state.subscribe(session.player())
    else:
        hub.presence_state.unsubscribe(session.player())


def push_presence(hub: Hub, now: float) -> None:
    """Each subscriber's batch: the monitored players whose presence differs from what it was
    last told, at most every PRESENCE_INTERVAL (S15)."""
    for watcher, updates in hub.presence_state.batches(now, PRESENCE_INTERVAL, partial(presence, hub)):
        hub.to_player(watcher, AsyncBuddyPresencePartialUpdateRequest(updates=updates))
