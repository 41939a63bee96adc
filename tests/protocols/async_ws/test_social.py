"""Chat, presence, buddy and ignore lists, server statistics (chat.py, presence.py, statistics.py,
social.py): one test per sequence diagram of those sections of the Scalable Server text, the
refusals, and a restart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from parlour.protocols.async_ws.players import chat, presence, social
from parlour.protocols.async_ws.state.hub import AsyncLimits
from parlour.protocols.async_ws.state.profanity import ProfanityFilter, default_filter, load_words
from parlour.storage import ChatRow, RelationGone, RelationRow, ReportRow
from parlour.storage.sqlite import SQLiteStore
from tests.protocols.async_ws.harness import Harness

# -- Helpers --------------------------------------------------------------------------------------


def in_lobby(h: Harness, *names: str) -> list[tuple[int, int]]:
    """Players signed in and in the lobby, their inboxes empty: (connection, account id) each."""
    players = [h.player(name) for name in names]
    for conn, _ in players:
        h.send(conn, type="EnterLobbyRequest")
    h.clear()
    return players


def game_of(h: Harness, *names: str) -> tuple[int, list[tuple[int, int]]]:
    """A running game of these players (local ids in this order), their inboxes empty."""
    players = [h.player(name) for name in names]
    game_id = h.open_game(players[0][0], *(conn for conn, _ in players[1:]))
    h.clear()
    return game_id, players


def say(h: Harness, conn: int, text: str, **fields: Any) -> None:
    h.send(conn, type="MulticastChatRequest", text=text, **fields)


def chat_rows(h: Harness) -> list[ChatRow]:
    return [record for record in h.records if isinstance(record, ChatRow)]


def line(text: str, sender: int, **fields: Any) -> dict[str, Any]:
    return {"type": "ClientChatRequest", "text": text, "sender": sender, **fields}


# -- Chat: the text's diagrams ----------------------------------------------------------------------


def test_lobby_chat_is_echoed_and_reaches_the_other_clients_in_the_lobby() -> None:
    h = Harness()
    (ann, ann_id), (bob, _), (cid, _) = in_lobby(h, "ann", "bob", "cid")
    dan, _ = h.player("dan")  # signed in, not in the lobby
    say(h, ann, "test", request_id="c1")
    assert h.expect(ann, "ClientChatRequest") == {**line("test", ann_id), "request_id": "c1"}  # the reply
    assert h.expect(bob, "ClientChatRequest") == line("test", ann_id)
    assert h.expect(cid, "ClientChatRequest") == line("test", ann_id)
    h.none(dan, "ClientChatRequest")
    # Stored (before it was shown: the harness checks the order) with the sender's name.
    assert chat_rows(h) == [ChatRow(0, 1, ann_id, "ann", "test", 0, h.now)]
    say(h, cid, "hello", game_id=0)
    assert [row.seq for row in chat_rows(h)] == [1, 2]


def test_game_chat_reaches_the_players_of_the_game_with_local_ids() -> None:
    h = Harness()
    game_id, [(ann, ann_id), (bob, bob_id)] = game_of(h, "ann", "bob")
    (cid, _), (eve, eve_id) = in_lobby(h, "cid", "eve")
    say(h, ann, "test", game_id=game_id)
    assert h.expect(ann, "ClientChatRequest") == line("test", 1, game_id=game_id)
    assert h.expect(bob, "ClientChatRequest") == line("test", 1, game_id=game_id)
    h.none(cid, "ClientChatRequest")
    say(h, bob, "hi", game_id=game_id)
    assert h.expect(ann, "ClientChatRequest") == line("hi", 2, game_id=game_id)
    assert chat_rows(h) == [
        ChatRow(game_id, 1, ann_id, "ann", "test", 0, h.now),
        ChatRow(game_id, 2, bob_id, "bob", "hi", 0, h.now),
    ]
    # Someone neither seated nor watching may not chat there.
    say(h, cid, "let me in", game_id=game_id)
    h.error(cid, "UNKNOWN_GAME")
    # An observer hears the game's chat and may chat there; it has no local id: its global id.
    h.service.hub.observers.add(game_id, eve_id)
    say(h, ann, "we are watched", game_id=game_id)
    assert h.expect(eve, "ClientChatRequest") == line("we are watched", 1, game_id=game_id)
    h.clear()
    say(h, eve, "hello players", game_id=game_id)
    assert h.expect(ann, "ClientChatRequest") == line("hello players", eve_id, game_id=game_id)
    assert h.expect(bob, "ClientChatRequest") == line("hello players", eve_id, game_id=game_id)
    h.none(cid, "ClientChatRequest")


def test_the_profanity_filter_blocks_lines_and_the_third_in_ten_minutes_mutes() -> None:
    h = Harness()
    game_id, [(ann, _), (bob, _)] = game_of(h, "ann", "bob")
    blocked = {"type": "ClientChatBlockedRequest", "game_id": game_id, "sender": 1}
    for number, muted in ((1, False), (2, False), (3, True)):
        say(h, ann, "what the sh1t" if number != 2 else "BULLSHIT!", game_id=game_id, request_id=f"p{number}")
        expected = {**blocked, "muted": True} if muted else blocked
        assert h.expect(ann, "ClientChatBlockedRequest") == {**expected, "request_id": f"p{number}"}
        assert h.expect(bob, "ClientChatBlockedRequest") == expected
        h.none(bob, "ClientChatRequest")
        h.advance(60)
    # Muted: even a clean line is refused, to the sender alone, and nothing reaches the others.
    say(h, ann, "message", game_id=game_id)
    assert h.expect(ann, "ClientChatBlockedRequest") == {**blocked, "muted": True}
    assert list(h.inbox[bob]) == []
    assert chat_rows(h) == []
    h.advance(300 - 60)  # five minutes after the mute: it is over
    say(h, ann, "sorry", game_id=game_id)
    assert h.expect(bob, "ClientChatRequest") == line("sorry", 1, game_id=game_id)
    # The slate is clean: one more blocked line does not mute again.
    say(h, ann, "shit", game_id=game_id)
    assert "muted" not in h.expect(ann, "ClientChatBlockedRequest")


def test_blocked_lines_older_than_ten_minutes_do_not_count() -> None:
    h = Harness()
    (ann, ann_id), (bob, _) = in_lobby(h, "ann", "bob")
    for _ in range(2):
        say(h, ann, "fuck")
        h.advance(301)
    # The first block is now more than ten minutes old.
    say(h, ann, "fuuuck")
    assert h.expect(ann, "ClientChatBlockedRequest") == {"type": "ClientChatBlockedRequest", "sender": ann_id}
    say(h, ann, "fine")
    h.expect(bob, "ClientChatRequest")


def test_private_chat_reaches_only_its_recipients_and_the_sender_and_is_not_kept() -> None:
    h = Harness()
    game_id, [(ann, _), (bob, _), (cid, _)] = game_of(h, "ann", "bob", "cid")
    say(h, ann, "test", game_id=game_id, recipients_ids=[2])  # the text's spelling (S20)
    private = line("test", 1, game_id=game_id, recipient_ids=[2])
    assert h.expect(ann, "ClientChatRequest") == private
    assert h.expect(bob, "ClientChatRequest") == private
    h.none(cid, "ClientChatRequest")
    # In the lobby, recipients are global ids.
    (dan, dan_id), (eve, eve_id), (fay, _) = in_lobby(h, "dan", "eve", "fay")
    say(h, dan, "psst", recipient_ids=[eve_id, eve_id])
    assert h.expect(eve, "ClientChatRequest") == line("psst", dan_id, recipient_ids=[eve_id])
    h.expect(dan, "ClientChatRequest")
    h.none(fay, "ClientChatRequest")
    # Never stored, never in the history.
    assert chat_rows(h) == []
    h.send(bob, type="GetChatHistoryRequest", game_id=game_id)
    assert h.expect(bob, "ClientChatHistoryRequest") == {
        "type": "ClientChatHistoryRequest",
        "game_id": game_id,
    }
    h.send(fay, type="GetChatHistoryRequest")
    assert "messages" not in h.expect(fay, "ClientChatHistoryRequest")


def test_the_chat_history_is_the_last_fifty_public_lines_for_who_may_read_them() -> None:
    h = Harness()
    (ann, ann_id), (bob, bob_id) = in_lobby(h, "ann", "bob")
    for number in range(55):
        h.now += 1
        say(h, ann if number % 2 else bob, f"line {number}", code=300 if number == 54 else 0)
    h.send(bob, type="GetChatHistoryRequest", game_id=0, request_id="h")
    history = h.expect(bob, "ClientChatHistoryRequest")
    assert history["request_id"] == "h"
    messages = history["messages"]
    assert [message["text"] for message in messages] == [f"line {n}" for n in range(5, 55)]
    assert messages[0] == {"sender": ann_id, "text": "line 5", "sent_at": h.now - 49}
    assert messages[-1] == {"sender": bob_id, "text": "line 54", "code": 300, "sent_at": h.now}
    # A game's history names the senders by local id.
    game_id, [(cid, _), (dan, _)] = game_of(h, "cid", "dan")
    say(h, dan, "gg", game_id=game_id)
    h.send(cid, type="GetChatHistoryRequest", game_id=game_id)
    assert h.expect(cid, "ClientChatHistoryRequest")["messages"] == [
        {"sender": 2, "text": "gg", "sent_at": h.now}
    ]
    # Only for those who may read the scope.
    h.send(ann, type="GetChatHistoryRequest", game_id=game_id)
    h.error(ann, "UNKNOWN_GAME")
    h.send(cid, type="GetChatHistoryRequest")
    h.error(cid, "BAD_REQUEST")  # not in the lobby
    h.send(cid, type="GetChatHistoryRequest", game_id=999)
    h.error(cid, "UNKNOWN_GAME")


def test_bad_chat_is_refused_and_nothing_of_it_is_relayed_or_stored() -> None:
    h = Harness()
    (ann, _), (bob, _) = in_lobby(h, "ann", "bob")
    game_id, [(cid, _), _] = game_of(h, "cid", "dan")
    refusals: list[tuple[int, dict[str, Any], str]] = [
        (ann, {"text": ""}, "BAD_REQUEST"),
        (ann, {"text": "   "}, "BAD_REQUEST"),
        (ann, {"text": "x" * 501}, "TOO_LARGE"),
        (ann, {"text": "hi", "code": 1}, "BAD_REQUEST"),
        (ann, {"text": "hi", "code": 255}, "BAD_REQUEST"),
        (ann, {"text": "hi", "recipient_ids": [999]}, "UNKNOWN_PLAYER"),
        (cid, {"text": "hi"}, "BAD_REQUEST"),  # not in the lobby
        (cid, {"text": "hi", "game_id": 999}, "UNKNOWN_GAME"),
        (cid, {"text": "hi", "game_id": game_id, "recipient_ids": [3]}, "UNKNOWN_PLAYER"),
        (ann, {"text": "hi", "game_id": game_id}, "UNKNOWN_GAME"),
    ]
    for conn, fields, code in refusals:
        h.send(conn, type="MulticastChatRequest", request_id="bad", **fields)
        error = h.error(conn, code)
        assert (error["request_type"], error["request_id"]) == ("MulticastChatRequest", "bad")
    # A negative code or game id is not even a message (S3).
    say(h, ann, "hi", code=-1)
    h.error(ann, "BAD_REQUEST")
    assert all(message["type"] == "ErrorRequest" for conn in (ann, bob, cid) for message in h.inbox[conn])
    assert chat_rows(h) == []
    # The limits themselves pass; codes above 255 are relayed, 0 is no code.
    say(h, ann, "x" * 500)
    say(h, ann, "<3", code=256)
    h.clear(bob)
    say(h, ann, "plain", code=0)
    assert h.expect(bob, "ClientChatRequest") == line("plain", h.service.hub.accounts.named("ann").id)
    assert [row.code for row in chat_rows(h)] == [0, 256, 0]


def test_a_game_that_is_over_has_no_chat() -> None:
    h = Harness()
    game_id, [(ann, _), (bob, _)] = game_of(h, "ann", "bob")
    h.service.hub.games[game_id].status = "ABORTED"
    say(h, ann, "still there?", game_id=game_id)
    h.error(ann, "UNKNOWN_GAME")
    h.none(bob, "ClientChatRequest")


# -- Chat commands and codes ------------------------------------------------------------------------


def test_help_and_unknown_commands_answer_the_sender_alone_from_the_server() -> None:
    h = Harness()
    (ann, _), (bob, _) = in_lobby(h, "ann", "bob")
    say(h, ann, "/help")
    answer = h.expect(ann, "ClientChatRequest")
    assert (answer["sender"], answer["code"]) == (0, 6)
    assert "/report" in answer["text"] and "/statistics" in answer["text"]
    say(h, ann, "/dance")
    answer = h.expect(ann, "ClientChatRequest", code=6)
    assert answer["text"].startswith("Unknown command /dance.")
    assert list(h.inbox[bob]) == []
    assert chat_rows(h) == []


def test_a_report_is_stored_and_thanked_then_cools_down_for_a_minute() -> None:
    h = Harness()
    (ann, ann_id), (bob, _) = in_lobby(h, "ann", "bob")
    say(h, ann, "/report toto keeps insulting everyone")
    thanks = h.expect(ann, "ClientChatRequest", code=4, sender=0)
    assert "Thanks for your report" in thanks["text"]
    assert [r for r in h.records if isinstance(r, ReportRow)] == [
        ReportRow(reporter=ann_id, reported="toto", scope=0, text="keeps insulting everyone", at=h.now)
    ]
    h.now += 59
    say(h, ann, "/report bob")
    assert "1 s" in h.expect(ann, "ClientChatRequest", code=5, sender=0)["text"]
    h.now += 1
    say(h, ann, "/REPORT bob")
    h.expect(ann, "ClientChatRequest", code=4)
    assert [r.reported for r in h.records if isinstance(r, ReportRow)] == ["toto", "bob"]
    say(h, ann, "/report")
    h.error(ann, "BAD_REQUEST")
    assert list(h.inbox[bob]) == []


def test_statistics_in_the_lobby_and_in_a_game() -> None:
    h = Harness()
    (ann, _), (bob, _) = in_lobby(h, "ann", "bob")
    h.send(bob, type="LobbyCreateGameRequest", configuration={"game_type": "chess", "max_players": 2})
    say(h, ann, "/statistics")
    assert h.expect(ann, "ClientChatRequest", code=7, sender=0)["text"] == "Lobby: 2 players, 1 open game."
    game_id, [(cid, _), (dan, _), (eve, _)] = game_of(h, "cid", "dan", "eve")
    h.send(eve, type="GameForfeitRequest", game_id=game_id)
    h.clear()
    say(h, cid, "/statistics", game_id=game_id)
    text = h.expect(cid, "ClientChatRequest", code=8, game_id=game_id)["text"]
    assert text.startswith(f"Game {game_id}: 2 active players, 0 robots, 1 forfeiter,")
    assert list(h.inbox[dan]) == []


def test_commands_work_while_muted() -> None:
    h = Harness()
    ((ann, _),) = in_lobby(h, "ann")
    for _ in range(3):
        say(h, ann, "shit")
    h.clear()
    say(h, ann, "/report someone")
    h.expect(ann, "ClientChatRequest", code=4)


# -- The ignore list in chat ------------------------------------------------------------------------


def test_ignored_players_chat_never_reaches_the_ignorer() -> None:
    h = Harness()
    (ann, ann_id), (bob, bob_id), (cid, _) = in_lobby(h, "ann", "bob", "cid")
    h.send(bob, type="AsyncIgnoreManagementRequest", operation="ADD", player_id=ann_id)
    h.expect(bob, "AsyncIgnoreAddedRequest", player_id=ann_id)
    say(h, ann, "public")
    h.expect(ann, "ClientChatRequest")  # the sender cannot tell
    h.expect(cid, "ClientChatRequest")
    say(h, ann, "private", recipient_ids=[bob_id])
    h.expect(ann, "ClientChatRequest", text="private")
    say(h, ann, "shit")  # nor the filter's notice
    h.expect(cid, "ClientChatBlockedRequest")
    assert list(h.inbox[bob]) == []
    say(h, cid, "from cid")
    h.send(bob, type="GetChatHistoryRequest")
    assert [m["text"] for m in h.expect(bob, "ClientChatHistoryRequest")["messages"]] == ["from cid"]
    h.send(cid, type="GetChatHistoryRequest")
    assert [m["text"] for m in h.expect(cid, "ClientChatHistoryRequest")["messages"]] == [
        "public",
        "from cid",
    ]
    # Not the other way round: bob's chat reaches ann.
    h.clear()
    say(h, bob, "I see you")
    h.expect(ann, "ClientChatRequest", text="I see you")
    # In a game too.
    h.send(bob, type="ExitLobbyRequest")
    h.send(ann, type="ExitLobbyRequest")
    h.open_game(ann, bob)
    game_id = max(h.service.hub.games)
    h.clear()
    say(h, ann, "in game", game_id=game_id)
    assert list(h.inbox[bob]) == []
    relations = h.service.hub.relations
    assert relations.is_ignored(bob_id, ann_id) and not relations.is_ignored(ann_id, bob_id)


def test_the_word_list_matches_whole_words_with_leetspeak_folded() -> None:
    words = default_filter()
    for text in ("sh1t", "What the $hit!", "a$$hole", "SHIIIT", "you... BITCH", "fuuuuck", "b!tch"):
        assert words.blocks(text), text
    for text in ("Scunthorpe", "classic", "shitake mushrooms", "Dick Turpin", "assassin", "hello 1337"):
        assert not words.blocks(text), text
    assert "fuck" in load_words() and not any(word.startswith("#") for word in load_words())
    h = Harness()
    (ann, _), (bob, _) = in_lobby(h, "ann", "bob")
    social.set_profanity_words(h.service.hub, ["darn"])
    say(h, ann, "shit")
    h.expect(bob, "ClientChatRequest")
    say(h, ann, "D4RN it")
    h.expect(bob, "ClientChatBlockedRequest")
    assert ProfanityFilter([]).blocks("anything") is False


# -- Presence ---------------------------------------------------------------------------------------


def presence_updates(h: Harness, conn: int) -> list[dict[str, Any]]:
    updates: list[dict[str, Any]] = h.expect(conn, "AsyncBuddyPresencePartialUpdateRequest")["updates"]
    return updates


def test_presence_of_monitored_players_is_batched_to_subscribers() -> None:
    h = Harness()
    ann, _ = h.player("ann")
    bob, bob_id = h.player("bob")
    cid_id, _ = h.account("cid")  # not connected
    h.send(ann, type="RegisterPresenceRequest", player_ids=[bob_id, cid_id])
    h.send(ann, type="SubscribePresenceServiceRequest", subscribe=True)
    assert list(h.inbox[ann]) == []  # no reply: the state comes with the next batch
    h.advance(1)
    assert presence_updates(h, ann) == [
        {"player_id": bob_id, "presence": "ONLINE"},
        {"player_id": cid_id, "presence": "OFFLINE"},
    ]
    # Changes within one batch: one message, each player once, as it is at the end.
    cid = h.connect()
    token, _ = h.service.tokens.issue(cid_id, "cid", h.now)
    h.send(cid, type="AsyncAuthRequest", name="cid", sessionToken=token)
    game_id = h.open_game(bob, cid)
    h.send(bob, type="SwitchedToGameRequest", game_id=game_id)
    h.send(cid, type="SwitchedToGameRequest", game_id=game_id)
    h.send(cid, type="SwitchedToGameRequest")
    h.advance(1)
    assert presence_updates(h, ann) == [
        {"player_id": bob_id, "presence": "IN_GAME", "game_id": game_id},
        {"player_id": cid_id, "presence": "ONLINE"},
    ]
    h.none(ann, "AsyncBuddyPresencePartialUpdateRequest")
    # At most one batch a second: a change half a second after a batch waits for the next.
    h.drop(bob)
    h.advance(0.5)
    h.none(ann, "AsyncBuddyPresencePartialUpdateRequest")
    h.advance(0.5)
    assert presence_updates(h, ann) == [{"player_id": bob_id, "presence": "OFFLINE"}]
    # Nothing changed: nothing sent. Unsubscribed: nothing sent.
    h.advance(1)
    h.none(ann, "AsyncBuddyPresencePartialUpdateRequest")
    h.send(ann, type="SubscribePresenceServiceRequest", subscribe=False)
    h.drop(cid)
    h.advance(2)
    h.none(ann, "AsyncBuddyPresencePartialUpdateRequest")


def test_registering_replaces_the_monitored_players() -> None:
    h = Harness()
    ann, _ = h.player("ann")
    bob, bob_id = h.player("bob")
    cid, cid_id = h.player("cid")
    h.send(ann, type="SubscribePresenceServiceRequest")
    h.send(ann, type="RegisterPresenceRequest", player_ids=[bob_id])
    h.advance(1)
    assert presence_updates(h, ann) == [{"player_id": bob_id, "presence": "ONLINE"}]
    h.send(ann, type="RegisterPresenceRequest", player_ids=[cid_id])
    h.drop(bob)
    h.advance(1)
    assert presence_updates(h, ann) == [{"player_id": cid_id, "presence": "ONLINE"}]
    h.send(ann, type="RegisterPresenceRequest", player_ids=[cid_id, 999], request_id="r")
    error = h.error(ann, "UNKNOWN_PLAYER")
    assert error["request_id"] == "r" and "999" in error["message"]
    h.send(ann, type="RegisterPresenceRequest", player_ids=[])
    h.drop(cid)
    h.advance(1)
    h.none(ann, "AsyncBuddyPresencePartialUpdateRequest")


def test_switching_to_a_game_tells_its_other_players_at_once() -> None:
    h = Harness()
    game_id, [(ann, ann_id), (bob, bob_id), (cid, _)] = game_of(h, "ann", "bob", "cid")
    h.send(ann, type="SwitchedToGameRequest", game_id=game_id, request_id="s")
    update = {"player_id": ann_id, "presence": "IN_GAME", "game_id": game_id}
    expected = {"type": "PlayerPresenceUpdateRequest", "game_id": game_id, "updates": [update]}
    assert h.expect(bob, "PlayerPresenceUpdateRequest") == expected
    assert h.expect(cid, "PlayerPresenceUpdateRequest") == expected
    assert list(h.inbox[ann]) == []  # no reply
    h.send(ann, type="SwitchedToGameRequest", game_id=game_id)  # already there: nothing
    assert all(not h.inbox[conn] for conn in (ann, bob, cid))
    # Once switched to the game, a player hears of its opponents' presence (and only then).
    h.send(bob, type="SwitchedToGameRequest", game_id=game_id)
    h.clear()
    h.drop(cid)
    assert h.expect(ann, "PlayerPresenceUpdateRequest")["updates"] == [
        {"player_id": h.service.hub.accounts.named("cid").id, "presence": "OFFLINE"}
    ]
    h.expect(bob, "PlayerPresenceUpdateRequest")
    h.send(ann, type="SwitchedToGameRequest")  # left the game's screen
    assert h.expect(bob, "PlayerPresenceUpdateRequest")["updates"] == [
        {"player_id": ann_id, "presence": "ONLINE"}
    ]
    h.drop(bob)  # ann is not in the game's screen any more: not told
    assert list(h.inbox[ann]) == []
    assert presence.presence(h.service.hub, bob_id).presence == "OFFLINE"


def test_switching_to_a_game_one_is_not_in_is_refused() -> None:
    h = Harness()
    game_id, _ = game_of(h, "ann", "bob")
    cid, _ = h.player("cid")
    h.send(cid, type="SwitchedToGameRequest", game_id=game_id)
    h.error(cid, "UNKNOWN_GAME")
    h.send(cid, type="SwitchedToGameRequest", game_id=999)
    h.error(cid, "UNKNOWN_GAME")
    h.send(cid, type="SwitchedToGameRequest")  # leaving games it never entered: nothing
    assert list(h.inbox[cid]) == []


def test_signing_out_ends_the_connections_monitoring_and_switching() -> None:
    h = Harness()
    game_id, [(ann, ann_id), (bob, bob_id)] = game_of(h, "ann", "bob")
    h.send(ann, type="RegisterPresenceRequest", player_ids=[bob_id])
    h.send(ann, type="SubscribePresenceServiceRequest")
    h.send(ann, type="SwitchedToGameRequest", game_id=game_id)
    h.advance(1)
    h.send(ann, type="AsyncDisconnectRequest")
    h.clear()
    token, _ = h.service.tokens.issue(ann_id, "ann", h.now)
    h.send(ann, type="AsyncAuthRequest", name="ann", sessionToken=token)
    h.drop(bob)
    h.advance(2)
    h.none(ann, "AsyncBuddyPresencePartialUpdateRequest")
    h.none(ann, "PlayerPresenceUpdateRequest")
    assert presence.presence(h.service.hub, ann_id).presence == "ONLINE"


# -- Buddy and ignore lists -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "manage", "content", "field", "added", "removed"),
    [
        (
            "buddy",
            "AsyncBuddyManagementRequest",
            "AsyncBuddyListRequest",
            "buddies",
            "AsyncBuddyAddedRequest",
            "AsyncBuddyRemovedRequest",
        ),
        (
            "ignore",
            "AsyncIgnoreManagementRequest",
            "AsyncIgnoreListRequest",
            "ignored",
            "AsyncIgnoreAddedRequest",
            "AsyncIgnoreRemovedRequest",
        ),
    ],
)
def test_a_list_is_managed_stored_and_shown_with_presence(
    kind: str, manage: str, content: str, field: str, added: str, removed: str
) -> None:
    h = Harness()
    ann, ann_id = h.player("ann")
    zed, zed_id = h.player("Zed")
    bob_id, _ = h.account("bob")
    answer = content.replace("Request", "ContentRequest")
    h.send(ann, type=content, request_id="l0")
    assert h.expect(ann, answer) == {"type": answer, "request_id": "l0"}
    for other in (zed_id, bob_id):
        h.send(ann, type=manage, operation="ADD", player_id=other, request_id="a")
        assert h.expect(ann, added) == {"type": added, "request_id": "a", "player_id": other}
    game_id = h.open_game(zed, h.player("cid")[0])
    h.send(zed, type="SwitchedToGameRequest", game_id=game_id)
    h.send(ann, type=content)
    # By name, whatever the case, with presence (IN_GAME with the game it switched to).
    assert h.expect(ann, answer)[field] == [
        {"player_id": bob_id, "name": "bob"},
        {"player_id": zed_id, "name": "Zed", "presence": "IN_GAME"},
    ]
    assert [r for r in h.records if isinstance(r, RelationRow)] == [
        RelationRow(ann_id, zed_id, kind, h.now),
        RelationRow(ann_id, bob_id, kind, h.now),
    ]
    # Adding again and removing what is not there are confirmed, and change nothing.
    h.send(ann, type=manage, operation="ADD", player_id=bob_id)
    h.expect(ann, added, player_id=bob_id)
    h.send(ann, type=manage, operation="REMOVE", player_id=bob_id, request_id="r")
    assert h.expect(ann, removed) == {"type": removed, "request_id": "r", "player_id": bob_id}
    h.send(ann, type=manage, operation="REMOVE", player_id=bob_id)
    h.expect(ann, removed, player_id=bob_id)
    assert [r for r in h.records if isinstance(r, RelationRow | RelationGone)][2:] == [
        RelationGone(ann_id, bob_id, kind)
    ]
    h.send(ann, type=content)
    assert [p["player_id"] for p in h.expect(ann, answer)[field]] == [zed_id]
    relations = h.service.hub.relations
    check = relations.is_buddy if kind == "buddy" else relations.is_ignored
    assert check(ann_id, zed_id) and not check(zed_id, ann_id)
    assert not check(ann_id, bob_id)
    # Unknown players and oneself.
    for other in (999, ann_id):
        h.send(ann, type=manage, operation="ADD", player_id=other, request_id="x")
        assert h.error(ann, "UNKNOWN_PLAYER")["request_id"] == "x"
        h.send(ann, type=manage, operation="REMOVE", player_id=other)
        h.error(ann, "UNKNOWN_PLAYER")
    h.send(ann, type=manage, operation="BEFRIEND", player_id=zed_id)
    h.error(ann, "BAD_REQUEST")


def test_a_list_holds_at_most_max_list_players(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(social, "MAX_LIST", 2)
    h = Harness()
    ann, _ = h.player("ann")
    others = [h.account(name)[0] for name in ("bob", "cid", "dan")]
    for other in others[:2]:
        h.send(ann, type="AsyncBuddyManagementRequest", operation="ADD", player_id=other)
    h.send(ann, type="AsyncBuddyManagementRequest", operation="ADD", player_id=others[2])
    h.error(ann, "TOO_LARGE")
    h.send(ann, type="AsyncIgnoreManagementRequest", operation="ADD", player_id=others[2])
    h.expect(ann, "AsyncIgnoreAddedRequest")


# -- Server statistics ------------------------------------------------------------------------------


def statistics(hosted: int, players: int, connected: int, **fields: Any) -> dict[str, Any]:
    return {
        "type": "ServerStatisticsRequest",
        **fields,
        "hosted_games": hosted,
        "players": players,
        "connected_players": connected,
    }


def test_statistics_once_or_subscribed_pushed_when_they_change() -> None:
    h = Harness(AsyncLimits(list_interval=2))
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    h.send(ann, type="AskServerStatisticsRequest", request_id="s")
    assert h.expect(ann, "ServerStatisticsRequest") == statistics(0, 2, 2, request_id="s")
    h.send(ann, type="AskServerStatisticsRequest", subscribe=True)
    assert h.expect(ann, "ServerStatisticsRequest") == statistics(0, 2, 2)
    game_id = h.open_game(ann, bob)
    h.clear()
    h.advance(1)  # changed, but the last push was a second ago
    h.none(ann, "ServerStatisticsRequest")
    h.advance(1)
    assert h.expect(ann, "ServerStatisticsRequest") == statistics(1, 2, 2)
    # A player away from a live game still counts as a player, not as connected.
    h.drop(bob)
    h.player("cid")
    h.advance(2)
    assert h.expect(ann, "ServerStatisticsRequest") == statistics(1, 3, 2)
    h.advance(2)
    h.none(ann, "ServerStatisticsRequest")  # unchanged
    h.send(ann, type="GameForfeitRequest", game_id=game_id)
    h.send(ann, type="AskServerStatisticsRequest", subscribe=False, request_id="u")
    h.expect(ann, "ServerStatisticsRequest", request_id="u")
    h.player("dan")
    h.advance(2)
    h.none(ann, "ServerStatisticsRequest")


# -- Restart ----------------------------------------------------------------------------------------


def test_chat_history_lists_and_reports_survive_a_restart(tmp_path: Path) -> None:
    h = Harness()
    (ann, ann_id), (bob, bob_id) = in_lobby(h, "ann", "bob")
    game_id = h.open_game(ann, bob)
    for conn in (ann, bob):  # the game started: they left the lobby, and come back
        h.send(conn, type="EnterLobbyRequest")
    for number in range(3):
        h.now += 1
        say(h, ann, f"lobby {number}")
    say(h, ann, "only for bob", recipient_ids=[bob_id])
    say(h, bob, "gl hf", game_id=game_id)
    h.send(ann, type="AsyncBuddyManagementRequest", operation="ADD", player_id=bob_id)
    h.send(bob, type="AsyncIgnoreManagementRequest", operation="ADD", player_id=ann_id)
    h.send(bob, type="AsyncIgnoreManagementRequest", operation="REMOVE", player_id=ann_id)
    say(h, bob, "/report ann spoilers", game_id=game_id)
    # What a store would hold: every record the service stored, through the real store.
    store = SQLiteStore(tmp_path / "parlour.db")
    try:
        store.commit(h.records)
        again = h.restart(downtime=30)
        hub = again.service.hub
        social.restore(hub, store.load_chat([social.LOBBY, *hub.games], social.HISTORY), store.relations())
        assert store.reports(10) == [ReportRow(bob_id, "ann", game_id, "spoilers", h.now)]
        # The accounts' sessions survive too: sign in again.
        conns = {}
        for name, account_id in (("ann", ann_id), ("bob", bob_id)):
            token, _ = again.service.tokens.issue(account_id, name, again.now)
            conns[name] = again.connect()
            again.send(conns[name], type="AsyncAuthRequest", name=name, sessionToken=token)
            again.send(conns[name], type="EnterLobbyRequest")
        again.clear()
        again.send(conns["bob"], type="GetChatHistoryRequest")
        lobby = again.expect(conns["bob"], "ClientChatHistoryRequest")["messages"]
        assert [(m["sender"], m["text"]) for m in lobby] == [(ann_id, f"lobby {n}") for n in range(3)]
        again.send(conns["ann"], type="GetChatHistoryRequest", game_id=game_id)
        assert again.expect(conns["ann"], "ClientChatHistoryRequest")["messages"] == [
            {"sender": 2, "text": "gl hf", "sent_at": h.now}
        ]
        again.send(conns["ann"], type="AsyncBuddyListRequest")
        assert again.expect(conns["ann"], "AsyncBuddyListContentRequest")["buddies"] == [
            {"player_id": bob_id, "name": "bob", "presence": "ONLINE"}
        ]
        assert not hub.relations.is_ignored(bob_id, ann_id)
        # Numbering goes on where it stopped: the new lines store next to the old ones.
        start = len(again.records)
        say(again, conns["ann"], "back again")
        say(again, conns["bob"], "me too", game_id=game_id)
        store.commit(again.records[start:])
        assert [(r.seq, r.text) for r in store.load_chat([0], 2)[0]] == [(3, "lobby 2"), (4, "back again")]
        assert [r.seq for r in store.load_chat([game_id], 5)[game_id]] == [1, 2]
    finally:
        store.close()


def test_an_ignorer_leaving_the_lobby_or_unignoring_changes_who_gets_lobby_lines() -> None:
    h = Harness()
    (ann, ann_id), (bob, _), (cid, cid_id) = in_lobby(h, "ann", "bob", "cid")
    for ignorer in (bob, cid):
        h.send(ignorer, type="AsyncIgnoreManagementRequest", operation="ADD", player_id=ann_id)
    h.clear()
    say(h, ann, "one")
    assert [m["text"] for m in h.inbox[ann]] == ["one"] and not h.inbox[bob] and not h.inbox[cid]
    h.send(cid, type="AsyncIgnoreManagementRequest", operation="REMOVE", player_id=ann_id)
    h.send(bob, type="ExitLobbyRequest")
    h.clear()
    say(h, ann, "two")
    h.expect(cid, "ClientChatRequest", text="two", sender=ann_id)
    assert not h.inbox[bob]
    h.send(bob, type="EnterLobbyRequest")
    h.clear()
    say(h, cid, "three")  # bob ignores ann, not cid
    h.expect(bob, "ClientChatRequest", text="three", sender=cid_id)
    h.expect(ann, "ClientChatRequest", text="three")
    say(h, ann, "four")
    assert not [m for m in h.inbox[bob] if m.get("text") == "four"]


def test_an_ignored_players_invitation_never_reaches_the_ignorer() -> None:
    h = Harness()
    ann, ann_id = h.player("ann")
    bob, bob_id = h.player("bob")
    h.send(bob, type="AsyncIgnoreManagementRequest", operation="ADD", player_id=ann_id)
    h.expect(bob, "AsyncIgnoreAddedRequest", player_id=ann_id)
    h.send(ann, type="EngageGameWithFriendsRequest", friend_ids=[bob_id])
    game_id = h.expect(ann, "GameCreatedRequest")["game_id"]
    h.expect(ann, "GameAbortedRequest", game_id=game_id)
    h.none(bob, "GameCreatedRequest")
    assert h.games[game_id].status == "ABORTED"


def test_a_failed_commit_returns_lists_chat_reports_devices_and_ratings_to_the_store() -> None:
    from parlour.core.effects import Store
    from parlour.protocols.async_ws.players import devices
    from parlour.protocols.async_ws.state.readback import AsyncReload
    from parlour.protocols.async_ws.wire.messages import Device

    h = Harness()
    (ann, ann_id), (bob, bob_id) = in_lobby(h, "ann", "bob")
    say(h, ann, "kept")
    kept = chat_rows(h)
    hub = h.service.hub
    hub.accounts[ann_id].ratings["fish"] = (30.0, 5.0, 1)  # as if rated by the failed commit
    devices.link_device(hub, ann_id, Device(device_type="APNS", token="t1"), h.now)
    failed: list[Any] = []
    for message in (
        {"type": "AsyncIgnoreManagementRequest", "operation": "ADD", "player_id": ann_id},
        {"type": "MulticastChatRequest", "text": "lost"},
        {"type": "MulticastChatRequest", "text": "/report ann rude"},
    ):
        effects = h.service.received(bob, msgspec.json.encode(message).decode(), h.now)
        failed += [record for effect in effects if isinstance(effect, Store) for record in effect.records]
    assert hub.relations.is_ignored(bob_id, ann_id)
    reload = AsyncReload(
        relations={(bob_id, ann_id, "ignore"): None},
        chat={social.LOBBY: kept},
        ratings={(ann_id, "fish"): None},
        devices={(ann_id, "APNS", "t1"): None},
    )
    h.run(h.service.store_failed(failed, [bob], reload, h.now))
    h.error(bob, "INTERNAL_ERROR")
    assert not hub.relations.is_ignored(bob_id, ann_id)
    assert "fish" not in hub.accounts[ann_id].ratings
    assert devices.linked(hub, ann_id) == []
    h.clear()
    h.send(bob, type="GetChatHistoryRequest")
    assert [m["text"] for m in h.expect(bob, "ClientChatHistoryRequest")["messages"]] == ["kept"]
    say(h, bob, "again")
    assert chat_rows(h)[-1].seq == 2  # the lost line's number is given again
    say(h, bob, "/report ann rude")  # the lost report started no cooldown
    h.expect(bob, "ClientChatRequest", code=chat.CODE_REPORT_THANKS)
