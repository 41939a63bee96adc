"""Periodic checks with an injected clock (never sleeping), robot-only games in both modes, and a
long scripted session whose every message parses with the reference client's Message.for_json."""

from __future__ import annotations

import pytest

from .harness import Server, kinds

MINUTE = 60.0


def test_no_check_runs_before_the_first_delay() -> None:
    server = Server()
    idle = server.connect(1)
    server.tick(299)
    assert idle.inbox == []


def test_websocket_idle_then_inactive_and_closed() -> None:
    server = Server()
    server.tick()  # the server starts; no check runs before the first delay (300 s)
    server.tick(100)
    quiet = server.connect(1)
    busy = server.connect(2)
    busy.register("busy")
    server.tick(200)  # the first run: quiet for 200 s, past idle (2 min), not inactive (5 min)
    assert quiet.inbox == [{"message": "WEBSOCKET_IDLE"}] and busy.inbox[-1]["message"] == "PLAYER_REGISTERED"
    server.tick(1)
    assert quiet.inbox == [{"message": "WEBSOCKET_IDLE"}]  # not repeated: the next run is a period later
    server.tick(120)
    assert quiet.inbox == [{"message": "WEBSOCKET_IDLE"}, {"message": "WEBSOCKET_INACTIVE"}]
    assert server.closed[1].code == 1000 and 2 not in server.closed


def test_player_idle_once_then_inactive_and_unregistered() -> None:
    server = Server()
    leela = server.connect(1)
    leela.register("leela")
    server.tick(16 * MINUTE)
    assert kinds(leela.inbox) == ["PLAYER_REGISTERED", "PLAYER_IDLE"]
    server.tick(2 * MINUTE)
    assert kinds(leela.inbox) == ["PLAYER_REGISTERED", "PLAYER_IDLE"]
    server.tick(14 * MINUTE)
    assert kinds(leela.inbox)[-2:] == ["PLAYER_INACTIVE", "PLAYER_UNREGISTERED"]
    assert leela.request("LIST_PLAYERS")[0]["context"]["reason"] == "INVALID_PLAYER"


def test_activity_resets_the_player_clock() -> None:
    server = Server()
    leela = server.connect(1)
    leela.register("leela")
    for _ in range(10):
        server.now += 10 * MINUTE
        leela.request("LIST_PLAYERS")
        server.tick()
    assert "PLAYER_IDLE" not in kinds(leela.inbox)


def test_disconnected_idle_player_is_dropped_silently() -> None:
    server = Server()
    leela = server.connect(1)
    leela.register("leela")
    watcher = server.connect(2)
    watcher.register("watcher")
    leela.disconnect()
    server.now += 16 * MINUTE
    watcher.request("LIST_PLAYERS")
    assert [p["connection_state"] for p in watcher.inbox[-1]["context"]["players"]] == [
        "DISCONNECTED",
        "CONNECTED",
    ]
    server.tick()
    server.tick(300)
    assert [p["handle"] for p in watcher.request("LIST_PLAYERS")[0]["context"]["players"]] == ["watcher"]


def test_game_idle_once_per_spell_then_inactive() -> None:
    server = Server(player_idle=10_000 * MINUTE, player_inactive=20_000 * MINUTE)
    leela = server.connect(1)
    leela.register("leela")
    game_id = leela.advertise(players=3)[0]["context"]["game_id"]
    server.tick(11 * MINUTE)
    server.tick(2 * MINUTE)
    server.tick(2 * MINUTE)
    assert kinds(leela.inbox).count("GAME_IDLE") == 1  # Parlour: once per idle spell
    server.tick(6 * MINUTE)
    assert kinds(leela.inbox)[-2:] == ["GAME_INACTIVE", "GAME_CANCELLED"]
    assert leela.inbox[-1]["context"] == {"game_id": game_id, "reason": "INACTIVE", "comment": None}


def test_obsolete_games_are_forgotten() -> None:
    server = Server()
    leela = server.connect(1)
    leela.register("leela")
    leela.advertise()
    leela.request("CANCEL_GAME")
    assert len(server.service.lobby.games) == 1
    server.now += 2880 * MINUTE - 400
    leela.request("LIST_PLAYERS")
    server.tick()
    assert len(server.service.lobby.games) == 1
    server.tick(400)
    assert len(server.service.lobby.games) == 0


@pytest.mark.parametrize("mode", ["STANDARD", "ADULT"])
@pytest.mark.parametrize("players", [2, 4])
def test_robot_only_games_to_completion(mode: str, players: int) -> None:
    server = Server(seed=players)
    leela = server.connect(1)
    leela.register("leela")
    leela.advertise(players=players, mode=mode)
    leela.request("START_GAME")
    while server.last_turn() is not None:
        leela.request("OPTIMAL_MOVE")
    completed = leela.last("GAME_COMPLETED")["context"]
    assert completed["comment"].startswith(f"Player {completed['winner']} won after ")
    robots = {p["handle"] for p in leela.last("GAME_PLAYER_CHANGE")["context"]["players"]} - {"leela"}
    assert len(robots) == players - 1
    assert leela.request("LIST_PLAYERS")[0]["context"]["players"][0]["player_state"] == "WAITING"


def test_a_long_scripted_session_speaks_the_reference_wire() -> None:
    """Every request and failure reason, both modes, quit/disconnect/reregister paths; the harness
    parses every message sent with apologiesserver's Message.for_json."""
    server = Server(seed=3, max_players=6)
    a, b, c, d = (server.connect(i) for i in range(1, 5))
    for client, name in ((a, "ann"), (b, "ben"), (c, "cat"), (d, "dan")):
        client.register(name)
    server.connect(5).register("ann")  # DUPLICATE_USER
    game = a.advertise(players=4, visibility="PRIVATE", invited=["ben", "cat"], mode="ADULT")[0]["context"][
        "game_id"
    ]
    b.request("LIST_AVAILABLE_GAMES")
    d.request("JOIN_GAME", {"game_id": game})  # INVALID_GAME: not invited
    b.request("JOIN_GAME", {"game_id": game})
    c.request("JOIN_GAME", {"game_id": game})
    c.request("START_GAME")  # NOT_ADVERTISER
    a.request("QUIT_GAME")  # ADVERTISER_MAY_NOT_QUIT
    a.request("START_GAME")
    d.request("OPTIMAL_MOVE")  # NOT_PLAYING
    d.request("SEND_MESSAGE", {"message": "héllo ☃", "recipient_handles": ["ann", "ben"]})
    b.request("QUIT_GAME")
    c.disconnect()
    c2 = server.connect(6)
    c2.request("REREGISTER_PLAYER", {"handle": "cat"}, player_id=c.player_id)
    a.request("RETRIEVE_GAME_STATE")
    for _ in range(400):
        found = server.last_turn()
        if found is None:
            break
        a.request("EXECUTE_MOVE", {"move_id": "nope"})  # ILLEGAL_MOVE
        a.request("OPTIMAL_MOVE")
    d.advertise(players=2, mode="STANDARD")
    b.request("JOIN_GAME", {"game_id": d.inbox[-1]["context"]["game"]["game_id"]})
    for _ in range(400):
        found = server.last_turn()
        if found is None:
            break
        conn, turn = found
        mover = b if conn == b.conn else d
        mover.request("EXECUTE_MOVE", {"move_id": list(turn["context"]["moves"])[-1]})
    d.request("LIST_PLAYERS")
    d.request("UNREGISTER_PLAYER")
    server.tick(300)
    server._take(server.service.shutdown(server.now))
    seen = {message["message"] for _, message in server.log}
    reasons = {m["context"]["reason"] for _, m in server.log if m["message"] == "REQUEST_FAILED"}
    assert {
        "DUPLICATE_USER",
        "INVALID_GAME",
        "NOT_ADVERTISER",
        "ADVERTISER_MAY_NOT_QUIT",
        "NOT_PLAYING",
        "ILLEGAL_MOVE",
    } <= reasons
    assert {
        "PLAYER_REGISTERED",
        "REGISTERED_PLAYERS",
        "AVAILABLE_GAMES",
        "PLAYER_UNREGISTERED",
        "PLAYER_MESSAGE_RECEIVED",
        "GAME_ADVERTISED",
        "GAME_INVITATION",
        "GAME_JOINED",
        "GAME_STARTED",
        "GAME_COMPLETED",
        "GAME_PLAYER_QUIT",
        "GAME_PLAYER_CHANGE",
        "GAME_STATE_CHANGE",
        "GAME_PLAYER_TURN",
        "SERVER_SHUTDOWN",
        "REQUEST_FAILED",
    } <= seen
    assert server.sent > 300
