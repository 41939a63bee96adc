"""The lobby's membership (lobby_state.py's Lobby, through the service): who is in it, what the
lobby chat reaches and what the pushed player list says stay one and the same set, whichever way a
player leaves it (ExitLobbyRequest, its game starting, signing out, a replacing connection)."""

from __future__ import annotations

import base64
import zlib

import msgspec

from tests.protocols.async_ws.harness import Harness
from tests.protocols.async_ws.test_social import in_lobby, say


def lines(h: Harness, conn: int) -> list[str]:
    """The chat lines queued for ``conn`` (taken off its inbox)."""
    box = h.inbox[conn]
    found = [message["text"] for message in box if message["type"] == "ClientChatRequest"]
    h.inbox[conn] = type(box)(message for message in box if message["type"] != "ClientChatRequest")
    return found


def pushed_players(h: Harness, conn: int) -> list[int]:
    """The player ids of the last LobbyPlayerListRequest pushed to ``conn``."""
    message = [m for m in h.inbox[conn] if m["type"] == "LobbyPlayerListRequest"][-1]
    players = msgspec.json.decode(zlib.decompress(base64.b64decode(message["player_list"])))
    return [player["player_id"] for player in players]


def test_players_whose_game_started_no_longer_get_the_lobby_chat() -> None:
    """A, B and C in the lobby, C speaks (the lobby's list of connections is
    made); A opens a two-seat game, B joins, it starts and both leave the lobby; C's next line
    reached A and B all the same (the list outlived the membership it was made from)."""
    h = Harness()
    (ann, _), (bob, _), (cid, cid_id) = in_lobby(h, "ann", "bob", "cid")
    say(h, cid, "anyone?")
    assert lines(h, ann) == lines(h, bob) == ["anyone?"]
    h.open_game(ann, bob)  # two seats: full, so it starts
    h.expect(ann, "GameCreatedRequest")
    h.expect(bob, "GameCreatedRequest")
    h.advance(h.service.hub.limits.list_interval)
    assert pushed_players(h, cid) == [cid_id]  # the list pushed to C drops them
    h.clear()
    say(h, cid, "still there?")
    assert lines(h, cid) == ["still there?"]  # C's own echo
    assert lines(h, ann) == []
    assert lines(h, bob) == []
    # Nor may they speak there: they left the lobby.
    say(h, ann, "hello")
    h.error(ann, "BAD_REQUEST")
    assert lines(h, cid) == []


def test_players_who_come_back_to_the_lobby_get_its_chat_again() -> None:
    h = Harness()
    (ann, _), (bob, _), (cid, _) = in_lobby(h, "ann", "bob", "cid")
    say(h, cid, "one")
    h.open_game(ann, bob)
    h.send(ann, type="EnterLobbyRequest")
    h.clear()
    say(h, cid, "two")
    assert lines(h, ann) == ["two"]
    assert lines(h, bob) == []


def test_a_dropped_connection_leaves_the_lobby_and_its_chat() -> None:
    h = Harness()
    (ann, _), (bob, _), (cid, cid_id) = in_lobby(h, "ann", "bob", "cid")
    say(h, cid, "one")
    h.drop(ann)
    h.advance(h.service.hub.limits.list_interval)
    assert sorted(pushed_players(h, bob)) == sorted([h.service.hub.accounts.named("bob").id, cid_id])
    h.clear()
    say(h, cid, "two")
    assert lines(h, bob) == ["two"]
    assert lines(h, ann) == []
    assert h.service.hub.lobby.conns() == [bob, cid]


def test_a_replaced_connection_leaves_the_lobby_and_the_new_one_is_not_in_it() -> None:
    h = Harness()
    (ann, ann_id), (cid, _) = in_lobby(h, "ann", "cid")
    say(h, cid, "one")
    token, _ = h.service.tokens.issue(ann_id, "ann", h.now)
    again = h.connect()
    h.send(again, type="AsyncAuthRequest", name="ann", sessionToken=token)
    h.expect(again, "AsyncConnectedRequest")
    h.clear()
    say(h, cid, "two")
    assert lines(h, ann) == lines(h, again) == []
    assert ann_id not in h.service.hub.lobby
    h.send(again, type="EnterLobbyRequest")  # the new connection enters on its own
    h.clear()
    say(h, cid, "three")
    assert lines(h, again) == ["three"]
    assert lines(h, ann) == []


def test_the_lists_are_pushed_once_per_interval_when_something_changed() -> None:
    h = Harness()
    ((ann, _),) = in_lobby(h, "ann")
    h.advance(h.service.hub.limits.list_interval)
    h.none(ann, "LobbyPlayerListRequest")  # nothing changed since its own entry was pushed
    h.send(ann, type="LobbyCreateGameRequest", configuration={"game_type": "test", "max_players": 2})
    h.clear()
    h.advance(h.service.hub.limits.list_interval)
    h.expect(ann, "LobbyGameListRequest")
    h.advance(h.service.hub.limits.list_interval)
    h.none(ann, "LobbyGameListRequest")
