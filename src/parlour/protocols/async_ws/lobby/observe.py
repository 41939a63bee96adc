"""Watching games (the Scalable Server text "Observable Game List", "Observing a Game";
docs/async-decisions.md S17).

An observer gets every event the players of the game get (hub.to_game includes observers), with
the spectator view under server rules. Observing is tied to a signed-in connection: signing out
stops it. The observable list holds started games that are observable and not private; it is
pushed to subscribers when it changes, at most every ``list_interval``.
"""

from __future__ import annotations

from typing import Final, Literal

from parlour.core.effects import ConnId
from parlour.protocols.async_ws.game.lifecycle import WATCHABLE
from parlour.protocols.async_ws.game.model import AsyncGame
from parlour.protocols.async_ws.state.hub import Handler, Hub, Session
from parlour.protocols.async_ws.wire.messages import (
    GameObservedRequest,
    ObservableGame,
    ObservableGameListRequest,
    StartObserveGameRequest,
    StopObserveGameRequest,
    SubscribedToObservableGameListRequest,
    SubscribeToObservableGameListRequest,
)

__all__ = ["HANDLERS", "signed_out", "tick"]


def _observable(hub: Hub) -> list[ObservableGame]:
    return [
        ObservableGame(
            game_id=game.id,
            configuration=hub.public(game.config),
            players=[hub.small(seat.player_id) for seat in game.seats if seat.player_id is not None],
        )
        for game in sorted(hub.games.values(), key=lambda game: game.id)
        if game.status == "RUNNING" and game.config.observable and not game.config.private
    ]


def subscribe(hub: Hub, session: Session, msg: SubscribeToObservableGameListRequest, now: float) -> None:
    assert session.player_id is not None
    hub.send(
        session.conn,
        SubscribedToObservableGameListRequest(subscribed=msg.subscribe, request_id=msg.request_id),
    )
    if not msg.subscribe:
        hub.observers.unsubscribe(session.player_id)
        return
    games = _observable(hub)
    hub.observers.subscribe(session.player_id, games)
    hub.send(session.conn, ObservableGameListRequest(games=games))


def tick(hub: Hub, now: float) -> None:
    """The observable list to subscribers whose copy is out of date (at most every interval)."""
    for game_id in list(hub.observers):
        game = hub.games.get(game_id)
        if game is None or game.status not in WATCHABLE:
            hub.observers.forget(game_id)  # a finished game has nothing more to show
    if not hub.observers.list_due(now, hub.limits.list_interval):
        return
    games = _observable(hub)
    # Every subscriber due gets the same list: encoded once for them all (one broadcast).
    hub.to_players(hub.observers.outdated(games), ObservableGameListRequest(games=games))


def _refusal(hub: Hub, session: Session, game: AsyncGame | None) -> str | None:
    """Why this player may not watch ``game`` (the text's list, in its order), or None."""
    assert session.player_id is not None
    if game is None:
        return "UNKNOWN_GAME"
    seat = game.seat_of(session.player_id)
    if seat is not None and seat.state in ("FORFEITED", "TIMED_OUT"):
        # "irrespective of the observability properties of the game" (S17)
        return None if game.status in WATCHABLE else "GAME_NOT_RUNNING"
    if seat is not None:
        return "PLAYING_IN_GAME"
    if game.config.private:
        return "PRIVATE_GAME"
    if not game.config.observable:
        return "NOT_OBSERVABLE"
    if game.config.observers_buddies_only and not hub.relations.is_buddy(game.creator, session.player_id):
        return "BUDDIES_ONLY"
    if not session.in_lobby:
        return "NOT_IN_LOBBY"
    if game.status not in WATCHABLE:
        return "GAME_NOT_RUNNING"
    return None


def start(hub: Hub, session: Session, msg: StartObserveGameRequest, now: float) -> None:
    assert session.player_id is not None
    game = hub.games.get(msg.game_id)
    refusal = _refusal(hub, session, game)
    if refusal is not None or game is None:
        hub.send(
            session.conn,
            GameObservedRequest(
                game_id=msg.game_id,
                status=refusal or "UNKNOWN_GAME",  # type: ignore[arg-type]
                request_id=msg.request_id,
            ),
        )
        return
    if hub.placing is not None and hub.games.is_placed(game.id):
        # The game runs on its shard's owner: it keeps the observers and answers.
        hub.placing.watch(game.id, session.conn, session.player_id, True, msg.request_id)
        return
    watch(hub, session.conn, session.player_id, game.id, now, msg.request_id)


def watch(hub: Hub, conn: ConnId, player_id: int, game_id: int, now: float, request_id: str | None) -> None:
    """``player_id`` watches the game (the checks passed): OK, with the spectator's report."""
    hub.observers.add(game_id, player_id)
    report = hub.games.report(game_id, now, None)
    hub.send(
        conn,
        GameObservedRequest(
            game_id=game_id, status="OK", observing=True, status_report=report, request_id=request_id
        ),
    )


def stop(hub: Hub, session: Session, msg: StopObserveGameRequest, now: float) -> None:
    assert session.player_id is not None
    if hub.placing is not None and hub.games.is_placed(msg.game_id):
        hub.placing.watch(msg.game_id, session.conn, session.player_id, False, msg.request_id)
        return
    unwatch(hub, session.conn, session.player_id, msg.game_id, msg.request_id)


def unwatch(hub: Hub, conn: ConnId, player_id: int, game_id: int, request_id: str | None) -> None:
    """``player_id`` stops watching: OK, or UNKNOWN_GAME if it was not watching that game."""
    known = hub.observers.remove(game_id, player_id)
    status: Literal["OK", "UNKNOWN_GAME"] = "OK" if known else "UNKNOWN_GAME"
    hub.send(conn, GameObservedRequest(game_id=game_id, status=status, request_id=request_id))


def signed_out(hub: Hub, player_id: int) -> None:
    """Watching ends with the connection."""
    hub.observers.signed_out(player_id)


HANDLERS: Final[dict[str, Handler]] = {
    "SubscribeToObservableGameListRequest": subscribe,
    "StartObserveGameRequest": start,
    "StopObserveGameRequest": stop,
}
