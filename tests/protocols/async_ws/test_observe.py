"""Watching games (S17): the observable list, every refusal the text lists, and what observers get."""

from __future__ import annotations

from typing import Any

from tests.protocols.async_ws.harness import Harness


def running_game(h: Harness, **config: Any) -> tuple[int, int, int]:
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    game_id = h.open_game(ann, bob, **config)
    h.clear()
    return game_id, ann, bob


def watcher(h: Harness, name: str = "eve", lobby: bool = True) -> tuple[int, int]:
    conn, account_id = h.player(name)
    if lobby:
        h.send(conn, type="EnterLobbyRequest")
    h.clear(conn)
    return conn, account_id


def test_the_observable_list_is_pushed_to_subscribers() -> None:
    h = Harness()
    eve, _ = watcher(h)
    h.send(eve, type="SubscribeToObservableGameListRequest", subscribe=True, request_id="s")
    h.expect(eve, "SubscribedToObservableGameListRequest", subscribed=True, request_id="s")
    assert h.expect(eve, "ObservableGameListRequest").get("games", []) == []
    game_id, _, _ = running_game(h)
    h.send(eve, type="EnterLobbyRequest")  # (already in: refused, nothing else changes)
    h.advance(2)
    games = h.expect(eve, "ObservableGameListRequest")["games"]
    assert [game["game_id"] for game in games] == [game_id]
    h.advance(2)
    h.none(eve, "ObservableGameListRequest")  # unchanged: not pushed again
    h.send(eve, type="SubscribeToObservableGameListRequest", subscribe=False)
    h.expect(eve, "SubscribedToObservableGameListRequest", subscribed=False)


def test_every_refusal() -> None:
    h = Harness()
    game_id, ann, _ = running_game(h)
    eve, _ = watcher(h)
    out, _ = watcher(h, "out", lobby=False)

    def status(conn: int, target: int) -> str:
        h.send(conn, type="StartObserveGameRequest", game_id=target)
        answer: str = h.expect(conn, "GameObservedRequest", game_id=target)["status"]
        return answer

    assert status(ann, game_id) == "PLAYING_IN_GAME"
    assert status(eve, 999) == "UNKNOWN_GAME"
    assert status(out, game_id) == "NOT_IN_LOBBY"
    cid, _ = h.player("cid")
    dan, _ = h.player("dan")
    private = h.open_game(cid, dan, private=True, password="pw")
    hidden = h.open_game(cid, dan, observable=False)
    buddies = h.open_game(cid, dan, observers_buddies_only=True)
    h.send(cid, type="LobbyCreateGameRequest", configuration={"game_type": "x", "max_players": 2})
    waiting = h.expect(cid, "LobbyGameCreatedRequest")["game_id"]
    assert status(eve, private) == "PRIVATE_GAME"
    assert status(eve, hidden) == "NOT_OBSERVABLE"
    assert status(eve, buddies) == "BUDDIES_ONLY"
    assert status(eve, waiting) == "GAME_NOT_RUNNING"


def test_a_buddy_of_the_creator_may_watch_a_buddies_only_game() -> None:
    h = Harness()
    ann, ann_id = h.player("ann")
    bob, _ = h.player("bob")
    eve, eve_id = watcher(h)
    h.send(ann, type="AsyncBuddyManagementRequest", operation="ADD", player_id=eve_id)
    h.expect(ann, "AsyncBuddyAddedRequest", player_id=eve_id)
    game_id = h.open_game(ann, bob, observers_buddies_only=True)
    h.send(eve, type="StartObserveGameRequest", game_id=game_id)
    assert h.expect(eve, "GameObservedRequest")["status"] == "OK"
    assert ann_id != eve_id


def test_an_observer_gets_the_game_events_until_it_stops() -> None:
    h = Harness()
    game_id, ann, bob = running_game(h)
    eve, _ = watcher(h)
    h.send(eve, type="StartObserveGameRequest", game_id=game_id, request_id="o")
    observed = h.expect(eve, "GameObservedRequest", status="OK", observing=True, request_id="o")
    assert observed["status_report"]["turn"] == 1
    h.send(ann, type="CommitActionRequest", game_id=game_id, next_state="A", next_players=[2], broadcast=True)
    h.expect(eve, "GameStateUpdatedRequest", state="A", turn_index=2)
    h.send(bob, type="GameForfeitRequest", game_id=game_id)
    h.expect(eve, "GameForfeitedRequest", player_id=2)
    h.send(eve, type="StopObserveGameRequest", game_id=game_id)
    h.expect(eve, "GameObservedRequest", status="OK")
    h.send(ann, type="GameOverRequest", game_id=game_id, finalScores={"1": [1, 1], "2": [0, 2]})
    h.none(eve, "GameOutcomeRequest")
    h.send(eve, type="StopObserveGameRequest", game_id=game_id)
    h.expect(eve, "GameObservedRequest", status="UNKNOWN_GAME")


def test_a_forfeiter_may_watch_its_private_game() -> None:
    h = Harness()
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    cid, _ = h.player("cid")
    game_id = h.open_game(ann, bob, cid, private=True, password="pw", observable=False)
    h.send(bob, type="GameForfeitRequest", game_id=game_id)
    h.send(bob, type="StartObserveGameRequest", game_id=game_id)
    assert h.expect(bob, "GameObservedRequest")["status"] == "OK"


def test_signing_out_stops_watching() -> None:
    h = Harness()
    game_id, _, _ = running_game(h)
    eve, _ = watcher(h)
    h.send(eve, type="StartObserveGameRequest", game_id=game_id)
    h.drop(eve)
    assert not h.service.hub.observers
