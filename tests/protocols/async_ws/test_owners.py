"""The owners of the /async state on their own (lobby_members, sessions, output, observers,
social_state): each keeps what it holds consistent whatever the order of the calls."""

from __future__ import annotations

from parlour.core.effects import Broadcast, Close, Send
from parlour.core.ratelimit import TokenBucket
from parlour.protocols.async_ws.state.lobby_members import Lobby
from parlour.protocols.async_ws.state.observers import Observers
from parlour.protocols.async_ws.state.output import Output
from parlour.protocols.async_ws.state.sessions import Session, Sessions
from parlour.protocols.async_ws.state.social_state import (
    BLOCKS_TO_MUTE,
    HISTORY,
    MAX_DEVICES,
    ChatLog,
    Devices,
    Presence,
    Relations,
    Statistics,
)
from parlour.protocols.async_ws.wire.messages import (
    GameConfiguration,
    ObservableGame,
    PingRequest,
    PresenceUpdate,
)
from parlour.storage import ChatRow, DeviceGone, DeviceRow, RelationRow


def signed_in(sessions: Sessions, conn: int, player_id: int) -> Session:
    session = sessions.opened(conn, 0.0, TokenBucket.full(10.0, 0.0))
    sessions.bind(session, player_id, f"digest{conn}")
    return session


def consistent(lobby: Lobby, *sessions: Session) -> None:
    """The flags, the member set and the cached connections say the same."""
    inside = [session for session in sessions if session.in_lobby]
    assert sorted(lobby) == sorted(session.player() for session in inside)
    assert sorted(lobby.conns()) == sorted(session.conn for session in inside)
    assert len(lobby) == len(inside)


# -- Lobby ------------------------------------------------------------------------------------------


def test_entering_and_leaving_keep_flags_members_and_connections_together() -> None:
    sessions, lobby = Sessions(), Lobby()
    ann, bob = signed_in(sessions, 1, 10), signed_in(sessions, 2, 20)
    assert lobby.move(ann, True) and lobby.move(bob, True)
    consistent(lobby, ann, bob)
    assert not lobby.move(ann, True)  # entering twice changes nothing
    shared = lobby.conns()
    assert lobby.conns() is shared  # one list for every line until the membership changes
    ann.sent_players = "sent"
    assert lobby.move(ann, False)
    assert ann.sent_players == ""  # the lists are sent again on coming back
    assert lobby.conns() is not shared and shared == [1, 2]  # a list handed out never changes
    consistent(lobby, ann, bob)
    assert not lobby.move(ann, False)


def test_a_started_game_takes_its_players_out_and_changes_the_lists() -> None:
    sessions, lobby = Sessions(), Lobby()
    ann, bob, cid = (signed_in(sessions, conn, conn * 10) for conn in (1, 2, 3))
    for session in (ann, bob, cid):
        lobby.move(session, True)
    assert lobby.push_due(5.0, 2.0)
    lobby.conns()
    lobby.game_started([10, 20, 99])  # 99 is not in the lobby: nothing to do for it
    consistent(lobby, ann, bob, cid)
    assert list(lobby) == [30] and lobby.conns() == [3]
    assert lobby.push_due(7.0, 2.0)
    lobby.game_started([])  # a game of players none of whom is in the lobby: the lists change
    assert not lobby.push_due(8.0, 2.0)  # within the interval
    assert lobby.push_due(9.0, 2.0)
    assert not lobby.push_due(20.0, 2.0)  # nothing changed since


def test_a_disconnect_and_a_replaced_connection_leave_the_lobby() -> None:
    sessions, lobby = Sessions(), Lobby()
    ann, bob = signed_in(sessions, 1, 10), signed_in(sessions, 2, 20)
    lobby.move(ann, True)
    lobby.move(bob, True)
    # bob's connection goes (the service: leave the lobby, then sign out).
    lobby.move(bob, False)
    assert sessions.unbind(bob) == 20
    assert sessions.closed(2) is bob
    # ann signs in again elsewhere: the old session leaves, the new one is not in the lobby.
    again = sessions.opened(3, 1.0, TokenBucket.full(10.0, 1.0))
    lobby.move(ann, False)
    sessions.unbind(ann)
    sessions.bind(again, 10, "digest3")
    consistent(lobby, ann, bob, again)
    assert list(lobby) == [] and lobby.conns() == []
    assert sessions.online == {10: 3}


def test_an_anonymous_session_never_enters() -> None:
    sessions, lobby = Sessions(), Lobby()
    anonymous = sessions.opened(1, 0.0, TokenBucket.full(10.0, 0.0))
    assert not lobby.move(anonymous, True)
    assert not anonymous.in_lobby and len(lobby) == 0


# -- Sessions and output ----------------------------------------------------------------------------


def test_unbinding_a_replaced_session_keeps_the_live_connection() -> None:
    sessions = Sessions()
    old = signed_in(sessions, 1, 10)
    new = signed_in(sessions, 2, 10)  # replaces the first as the live connection
    assert sessions.unbind(old) is None  # the account is still online, on 2
    assert old.player_id is None and sessions.online == {10: 2}
    assert sessions.unbind(new) == 10 and sessions.online == {}


def test_output_keeps_effects_in_order_and_counts_errors() -> None:
    output = Output()
    output.send(1, PingRequest(timestamp=1, request_id="p"))
    output.send_many([1, 2], b"x")
    output.send_many([3], b"y")
    output.send_many([], b"z")
    output.broadcast([1, 2], b"w", {1: b""})
    output.error(2, "BAD_REQUEST", "no")
    output.close(2, 1000, "bye")
    output.store(RelationRow(1, 2, "buddy", 0.0))
    effects, records = output.take()
    assert [type(effect) for effect in effects] == [Send, Broadcast, Send, Broadcast, Send, Close]
    assert records == [RelationRow(1, 2, "buddy", 0.0)]
    assert output.take() == ([], [])
    assert output.errors == {"BAD_REQUEST": 1}


# -- Observers --------------------------------------------------------------------------------------


def test_observers_by_game_and_the_list_subscribers() -> None:
    observers = Observers()
    observers.add(7, 1)
    observers.add(7, 2)
    observers.add(8, 1)
    assert sorted(observers.get(7)) == [1, 2] and observers.get(9) == ()
    assert not observers.remove(9, 1) and observers.remove(7, 2)
    observers.signed_out(1)
    assert len(observers) == 0 and 7 not in observers
    game = ObservableGame(
        game_id=7, configuration=GameConfiguration(game_type="test", max_players=2), players=[]
    )
    assert not observers.list_due(0.0, 2.0)  # nobody subscribed
    observers.subscribe(1, [])
    observers.subscribe(2, [game])
    assert observers.list_due(0.0, 2.0) and not observers.list_due(1.0, 2.0)
    assert observers.outdated([game]) == [1]
    assert observers.outdated([game]) == []


# -- The social side --------------------------------------------------------------------------------


def test_relations_keep_both_directions_of_an_ignore() -> None:
    relations = Relations()
    relations.add("ignore", 1, 2, 0.0)
    relations.add("buddy", 1, 3, 0.0)
    assert relations.is_ignored(1, 2) and not relations.is_ignored(2, 1)
    assert relations.ignorers(2) == {1} and relations.is_buddy(1, 3)
    relations.reload({(1, 2, "ignore"): None, (4, 1, "buddy"): RelationRow(4, 1, "buddy", 5.0)})
    assert not relations.ignorers(2) and relations.listed("ignore", 1) == {}
    assert relations.listed("buddy", 4) == {1: 5.0}


def test_the_chat_log_numbers_keeps_mutes_and_cools_down_reports() -> None:
    log = ChatLog()
    for _ in range(HISTORY + 5):
        log.keep(ChatRow(0, log.next_seq(0), 1, "ann", "hi", 0, 0.0))
    assert len(log.history(0)) == HISTORY and log.history(0)[-1].seq == HISTORY + 5
    mutes = [log.blocked(1, float(second)) for second in range(BLOCKS_TO_MUTE)]
    assert mutes[:-1] == [None] * (BLOCKS_TO_MUTE - 1) and mutes[-1] is not None
    assert log.muted(1, 10.0) and not log.muted(2, 10.0)
    log.reported(1, 0.0)
    assert log.report_wait(1, 30.0) == 30.0 and log.report_wait(1, 60.0) is None
    log.clean(10_000.0, lambda scope: scope != 0)
    assert not log.muted(1, 10.0) and log.history(0)  # the lobby's history stays


def test_presence_ends_with_the_connection() -> None:
    presence = Presence()
    presence.monitor(1, {2, 3})
    presence.subscribe(1)
    presence.switch(1, 7)

    def online(player_id: int) -> PresenceUpdate:
        return PresenceUpdate(player_id=player_id, presence="ONLINE")

    assert presence.batches(0.0, 1.0, online) == [(1, [online(2), online(3)])]
    presence.changed(2)
    assert presence.batches(0.5, 1.0, online) == []  # within the interval, and nothing new
    assert presence.forget(1) == 7
    presence.changed(2)
    assert presence.batches(5.0, 1.0, online) == [] and presence.switched(1) is None


def test_statistics_subscribers_get_only_changed_figures() -> None:
    statistics = Statistics()
    statistics.subscribe(1, (1, 1, 1), 0.0)
    statistics.subscribe(2, (2, 2, 2), 0.0)
    assert statistics.due(1.0, 2.0) == []
    due = statistics.due(2.0, 2.0)
    assert statistics.outdated(due, (2, 2, 2), 2.0) == [1]
    statistics.unsubscribe(1)
    assert statistics.due(10.0, 2.0) == [2]


def test_devices_keep_at_most_max_devices_per_account() -> None:
    devices = Devices()
    for number in range(MAX_DEVICES):
        assert devices.link(1, "FCM", f"t{number}", float(number)) == [
            DeviceRow(1, "FCM", f"t{number}", float(number))
        ]
    assert devices.link(1, "FCM", "t0", 99.0) == []  # linked already
    records = devices.link(1, "APNS", "new", 100.0)
    assert records == [DeviceGone(1, "FCM", "t0"), DeviceRow(1, "APNS", "new", 100.0)]
    devices.unlink(1, "APNS", "new")
    assert len(devices.linked(1)) == MAX_DEVICES - 1 and devices.linked(1)[0] == ("FCM", "t1")


def test_the_lobby_tells_which_lists_a_session_was_not_sent() -> None:
    sessions, lobby = Sessions(), Lobby()
    ann = signed_in(sessions, 1, 10)
    lobby.move(ann, True)
    assert lobby.unsent(ann, "p1", "g1") == ("p1", "g1")
    assert lobby.unsent(ann, "p1", "g2") == (None, "g2")
    assert lobby.unsent(ann, "p1", "g2") == (None, None)
    lobby.move(ann, False)
    lobby.move(ann, True)
    assert lobby.unsent(ann, "p1", "g2") == ("p1", "g2")  # coming back, it gets them again
