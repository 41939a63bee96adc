"""Requests and the exact event sequences they produce, with Parlour's fixes of the reference
server (docs/apologies-protocol.md). No sockets: the service is driven directly."""

from __future__ import annotations

import re

from .harness import Server, failure, kinds


def two_players(players: int = 2, visibility: str = "PUBLIC", invited: list[str] | None = None):  # type: ignore[no-untyped-def]
    server = Server()
    leela, bender = server.connect(1), server.connect(2)
    leela.register("leela")
    bender.register("bender")
    got = leela.advertise(players=players, visibility=visibility, invited=invited)
    game_id = got[0]["context"]["game_id"]
    return server, leela, bender, game_id


def test_register_and_reregister() -> None:
    server = Server()
    leela = server.connect(1)
    got = leela.register("leela")
    assert kinds(got) == ["PLAYER_REGISTERED"]
    assert re.fullmatch(
        r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", got[0]["player_id"]
    )
    assert got[0]["context"] == {"handle": "leela"}
    other = server.connect(2)
    assert failure(other.register("leela")) == ("DUPLICATE_USER", "Handle is already in use", "leela")
    # Reregistering from a new connection keeps the id and handle; the old one hears nothing more.
    moved = server.connect(3)
    got = moved.request("REREGISTER_PLAYER", {"handle": "ignored"}, player_id=leela.player_id)
    assert got[0]["player_id"] == leela.player_id and got[0]["context"]["handle"] == "leela"
    moved.player_id = leela.player_id
    assert kinds(moved.request("LIST_PLAYERS")) == ["REGISTERED_PLAYERS"]
    before = len(leela.inbox)
    leela.disconnect()
    listing = moved.request("LIST_PLAYERS")[0]["context"]["players"]
    assert listing[0]["connection_state"] == "CONNECTED" and len(leela.inbox) == before
    # An unknown id registers anew.
    fresh = server.connect(4)
    got = fresh.request("REREGISTER_PLAYER", {"handle": "fry"}, player_id="not-a-player")
    assert kinds(got) == ["PLAYER_REGISTERED"] and got[0]["player_id"] != "not-a-player"


def test_user_limit_and_list_players() -> None:
    server = Server(max_players=2)
    a, b, c = server.connect(1), server.connect(2), server.connect(3)
    a.register("a")
    b.register("b")
    assert failure(c.register("c")) == ("USER_LIMIT", "System user limit reached; try again later", "c")
    players = a.request("LIST_PLAYERS")[0]["context"]["players"]
    assert [p["handle"] for p in players] == ["a", "b"]
    assert set(players[0]) == {
        "handle",
        "registration_date",
        "last_active_date",
        "connection_state",
        "activity_state",
        "player_state",
        "game_id",
    }
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d,\d{3}\+0000", players[0]["registration_date"])
    assert players[0]["player_state"] == "WAITING" and players[0]["game_id"] is None


def test_unregister_frees_the_handle() -> None:
    server = Server()
    leela = server.connect(1)
    leela.register("leela")
    got = leela.request("UNREGISTER_PLAYER")
    assert kinds(got) == ["PLAYER_UNREGISTERED"] and got[0]["context"] == {"handle": "leela"}
    assert failure(leela.request("LIST_PLAYERS"))[0] == "INVALID_PLAYER"
    assert kinds(server.connect(2).register("leela")) == ["PLAYER_REGISTERED"]


def test_advertise_sequence_and_invitations() -> None:
    server = Server()
    leela, bender, fry = server.connect(1), server.connect(2), server.connect(3)
    leela.register("leela")
    bender.register("bender")
    fry.register("fry")
    got = leela.advertise(players=3, visibility="PRIVATE", invited=["bender", "nobody"])
    assert kinds(got) == ["GAME_JOINED", "GAME_PLAYER_CHANGE", "GAME_ADVERTISED"]
    game = got[2]["context"]["game"]
    assert game["available"] == 2 and game["invited_handles"] == ["bender", "nobody"]
    assert list(game) == [
        "game_id",
        "name",
        "mode",
        "advertiser_handle",
        "players",
        "available",
        "visibility",
        "invited_handles",
    ]
    assert got[1]["context"]["players"] == [
        {"handle": "leela", "player_color": None, "player_type": "HUMAN", "player_state": "JOINED"}
    ]
    assert kinds(bender.inbox[-1:]) == ["GAME_INVITATION"] and kinds(fry.inbox[-1:]) == ["PLAYER_REGISTERED"]
    assert [g["game_id"] for g in bender.request("LIST_AVAILABLE_GAMES")[0]["context"]["games"]] == [
        game["game_id"]
    ]
    assert fry.request("LIST_AVAILABLE_GAMES")[0]["context"]["games"] == []
    # The advertiser sees its own private game although it did not invite itself.
    assert [g["game_id"] for g in leela.request("LIST_AVAILABLE_GAMES")[0]["context"]["games"]] == [
        game["game_id"]
    ]
    assert failure(fry.request("JOIN_GAME", {"game_id": game["game_id"]}))[0] == "INVALID_GAME"
    assert failure(leela.advertise())[0] == "ALREADY_PLAYING"


def test_game_limit_on_advertise() -> None:
    server = Server(max_games=1)
    a, b = server.connect(1), server.connect(2)
    a.register("a")
    b.register("b")
    a.advertise()
    assert failure(b.advertise()) == ("GAME_LIMIT", "System game limit reached; try again later", "b")


def test_join_fills_and_starts_the_game() -> None:
    _server, leela, bender, game_id = two_players()
    got = bender.request("JOIN_GAME", {"game_id": game_id})
    # The joiner hears the start sequence (docs/apologies-protocol.md, "A turn"); then, if a robot
    # or it moves first, more state changes and perhaps its turn.
    assert kinds(got)[:5] == [
        "GAME_JOINED",
        "GAME_PLAYER_CHANGE",
        "GAME_STARTED",
        "GAME_PLAYER_CHANGE",
        "GAME_STATE_CHANGE",
    ]
    started = got[3]["context"]
    assert started["comment"] == "Game started"
    assert [(p["handle"], p["player_color"], p["player_state"]) for p in started["players"]] == [
        ("leela", "RED", "PLAYING"),
        ("bender", "YELLOW", "PLAYING"),
    ]
    turns = [m for m in leela.inbox + bender.inbox if m["message"] == "GAME_PLAYER_TURN"]
    assert len(turns) == 1
    moves = turns[0]["context"]["moves"]
    assert all(
        re.fullmatch(r"[0-9a-f]{32}", move_id) and move["move_id"] == move_id
        for move_id, move in moves.items()
    )
    assert turns[0]["context"]["drawn_card"] is not None  # STANDARD: the drawn card


def test_full_game_cannot_be_joined() -> None:
    server = Server(max_in_progress_games=1)
    a, b, c, d = (server.connect(i) for i in range(1, 5))
    for client, name in ((a, "a"), (b, "b"), (c, "c"), (d, "d")):
        client.register(name)
    game_id = a.advertise(players=2)[0]["context"]["game_id"]
    d.advertise(players=2)  # a second game in progress: the limit now stops auto-start
    b.request("JOIN_GAME", {"game_id": game_id})
    assert "GAME_STARTED" not in kinds(a.inbox)
    assert failure(c.request("JOIN_GAME", {"game_id": game_id})) == ("INVALID_GAME", "Game is full", "c")
    assert failure(a.request("START_GAME")) == (
        "GAME_LIMIT",
        "System game limit reached; try again later",
        "a",
    )
    d.request("CANCEL_GAME")
    a.request("START_GAME")
    assert "GAME_STARTED" in kinds(a.inbox)


def test_lifecycle_failures() -> None:
    server, leela, bender, game_id = two_players(players=3)
    for request in ("START_GAME", "QUIT_GAME", "CANCEL_GAME", "OPTIMAL_MOVE", "RETRIEVE_GAME_STATE"):
        assert failure(bender.request(request)) == ("NOT_PLAYING", "Player is not playing a game", "bender")
    assert failure(bender.request("EXECUTE_MOVE", {"move_id": "x"}))[0] == "NOT_PLAYING"
    bender.request("JOIN_GAME", {"game_id": game_id})
    assert failure(bender.request("START_GAME"))[0] == "NOT_ADVERTISER"
    assert failure(bender.request("CANCEL_GAME"))[0] == "NOT_ADVERTISER"
    assert failure(leela.request("QUIT_GAME")) == (
        "ADVERTISER_MAY_NOT_QUIT",
        "Advertiser may not quit a game (cancel instead)",
        "leela",
    )
    assert failure(bender.request("EXECUTE_MOVE", {"move_id": "x"})) == (
        "INVALID_GAME",
        "Game is not being played",
        "bender",
    )
    assert failure(bender.request("JOIN_GAME", {"game_id": game_id}))[0] == "ALREADY_PLAYING"
    assert (
        failure(server.connect(9).request("JOIN_GAME", {"game_id": "nope"}, player_id=None))[0]
        == "INVALID_REQUEST"
    )


def test_turns_execute_optimal_retrieve() -> None:
    server, leela, bender, game_id = two_players()
    bender.request("JOIN_GAME", {"game_id": game_id})
    clients = {leela.conn: leela, bender.conn: bender}
    played = 0
    while (found := server.last_turn()) is not None:
        conn, turn = found
        mover = clients[conn]
        waiting = bender if mover is leela else leela
        assert turn["context"]["handle"] == ("leela" if mover is leela else "bender")
        assert failure(waiting.request("OPTIMAL_MOVE"))[0] == "NO_MOVE_PENDING"
        assert failure(mover.request("EXECUTE_MOVE", {"move_id": "0" * 32}))[0] == "ILLEGAL_MOVE"
        if played % 2:
            got = mover.request("OPTIMAL_MOVE")
        else:
            got = mover.request("EXECUTE_MOVE", {"move_id": next(iter(turn["context"]["moves"]))})
        assert kinds(got)[0] == "GAME_STATE_CHANGE"
        played += 1
        if played == 40:
            break
    state = leela.request("RETRIEVE_GAME_STATE")
    assert kinds(state) == ["GAME_STATE_CHANGE"]
    context = state[0]["context"]
    assert list(context) == ["game_id", "recent_history", "player", "opponents"]
    assert context["player"]["color"] == "RED" and [o["color"] for o in context["opponents"]] == ["YELLOW"]
    assert all(o["hand"] == [] for o in context["opponents"])
    assert len(context["recent_history"]) == 10
    assert list(context["recent_history"][0]) == ["action", "color", "card", "timestamp"]
    assert list(context["player"]["pawns"][0]) == ["color", "id", "start", "home", "safe", "square"]


def test_quit_before_start_removes_the_seat() -> None:
    _server, leela, bender, game_id = two_players(players=3)
    bender.request("JOIN_GAME", {"game_id": game_id})
    got = bender.request("QUIT_GAME")
    assert kinds(got) == ["GAME_PLAYER_QUIT"]
    change = leela.last("GAME_PLAYER_CHANGE")["context"]
    assert change["comment"] == "Player bender quit" and [p["handle"] for p in change["players"]] == ["leela"]


def test_quit_after_start_robot_takes_the_seat_and_the_quitter_hears_nothing_more() -> None:
    _server, leela, bender, game_id = two_players(players=3)
    bender.request("JOIN_GAME", {"game_id": game_id})
    leela.request("START_GAME")
    got = bender.request("QUIT_GAME")
    assert kinds(got) == ["GAME_PLAYER_QUIT"]
    change = leela.last("GAME_PLAYER_CHANGE")["context"]
    assert change["comment"] == "Player bender quit"
    assert [p["player_state"] for p in change["players"]] == ["PLAYING", "QUIT", "PLAYING"]
    heard = len(bender.inbox)
    while "GAME_COMPLETED" not in kinds(leela.inbox):
        leela.request("OPTIMAL_MOVE")
    assert len(bender.inbox) == heard
    assert bender.request("LIST_PLAYERS")[0]["context"]["players"][1]["player_state"] == "WAITING"


def test_advertiser_leaving_cancels_and_not_viable_cancels() -> None:
    _server, leela, bender, game_id = two_players(players=3)
    bender.request("JOIN_GAME", {"game_id": game_id})
    leela.disconnect()
    cancelled = bender.last("GAME_CANCELLED")["context"]
    assert cancelled == {"game_id": game_id, "reason": "CANCELLED", "comment": "Player leela disconnected"}
    # Two humans, no robots: one leaving leaves a game that is no longer viable.
    _server, leela, bender, game_id = two_players(players=2)
    bender.request("JOIN_GAME", {"game_id": game_id})
    bender.request("UNREGISTER_PLAYER")
    assert leela.last("GAME_CANCELLED")["context"]["reason"] == "NOT_VIABLE"
    assert leela.last("GAME_CANCELLED")["context"]["comment"] == "Player bender unregistered"


def test_cancel_and_chat() -> None:
    server, leela, bender, game_id = two_players(players=3)
    bender.request("JOIN_GAME", {"game_id": game_id})
    got = leela.request("CANCEL_GAME")
    assert got[-1] == {
        "message": "GAME_CANCELLED",
        "context": {"game_id": game_id, "reason": "CANCELLED", "comment": None},
    }
    assert bender.inbox[-1] == got[-1]
    assert bender.request("LIST_PLAYERS")[0]["context"]["players"][1]["player_state"] == "WAITING"
    fry = server.connect(1)  # a second player on leela's connection
    fry.register("fry")
    leela_before, fry_conn_before = len(bender.inbox), len(leela.inbox)
    bender.request("SEND_MESSAGE", {"message": "hi", "recipient_handles": ["leela", "fry", "ghost", "leela"]})
    assert len(bender.inbox) == leela_before  # the sender is not a recipient
    got = leela.inbox[fry_conn_before:]
    assert kinds(got) == ["PLAYER_MESSAGE_RECEIVED"]  # once per connection
    assert got[0]["context"] == {
        "sender_handle": "bender",
        "recipient_handles": ["leela", "fry", "ghost", "leela"],
        "message": "hi",
    }


def test_connection_limit_and_shutdown() -> None:
    server = Server(max_connections=1)
    a = server.connect(1)
    b = server.connect(2)
    assert failure(b.inbox) == ("WEBSOCKET_LIMIT", "Connection limit reached; try again later", None)
    assert server.closed[2].code == 1013
    a.register("a")
    a.advertise()
    server._take(server.service.shutdown(server.now))
    assert a.inbox[-1] == {"message": "SERVER_SHUTDOWN"} and server.closed[1].code == 1001
