"""The Apologies service after a restart: players and games come back from the store, seated
humans keep their seats for ``restart_grace`` (and get their game and turn again when they
reregister), those who do not come back are replaced by robots, and idle clocks are not
charged for the downtime."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from parlour.games.apologies.model import Mode
from parlour.robots.levels import level_robot
from parlour.storage.sqlite import SQLiteStore
from tests.protocols.apologies_ws.harness import T0, Client, Server, kinds
from tests.recording import Recorder


def recorded(store: SQLiteStore, now: float, **settings: Any) -> Server:
    """A server restarted on ``store`` at ``now``, committing as it goes."""
    server = Server(seed=int(now) % 97, robot="random", **settings)
    server.now = now
    server._take = Recorder(store, server._take)  # type: ignore[method-assign]
    server._take(server.service.restore(store.load_live(), now))
    return server


def three_seats(server: Server) -> tuple[Client, Client, str]:
    """alice and bob at a 3-seat game with one robot, started: the game id."""
    alice, bob = server.connect(1), server.connect(2)
    alice.register("alice")
    bob.register("bob")
    game_id = alice.advertise(players=3)[0]["context"]["game_id"]
    bob.request("JOIN_GAME", {"game_id": game_id})
    alice.request("START_GAME")
    return alice, bob, game_id


def test_a_player_who_reregisters_within_the_grace_gets_its_game_and_turn_back(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "p.db")
    before = recorded(store, T0)
    alice, bob, game_id = three_seats(before)
    turn = before.last_turn()
    assert turn is not None
    mover = alice if turn[0] == alice.conn else bob
    shown = mover.last("GAME_STATE_CHANGE")
    store.heartbeat(before.now)
    # The process dies; a new one starts 30 s later on the same store.
    after = recorded(store, before.now + 30)
    back = after.connect(7)
    back.player_id = mover.player_id
    got = back.request("REREGISTER_PLAYER", {"handle": mover.inbox[0]["context"]["handle"]})
    assert kinds(got) == ["PLAYER_REGISTERED", "GAME_STATE_CHANGE", "GAME_PLAYER_TURN"]
    assert got[0]["player_id"] == mover.player_id
    assert got[1]["context"]["player"] == shown["context"]["player"]
    assert got[1]["context"]["opponents"] == shown["context"]["opponents"]
    assert got[1]["context"]["recent_history"] == shown["context"]["recent_history"]
    # The very move ids sent before the crash are still the ones to play.
    assert got[2]["context"]["moves"].keys() == turn[1]["context"]["moves"].keys()
    played = back.request("EXECUTE_MOVE", {"move_id": sorted(got[2]["context"]["moves"])[0]})
    assert "GAME_STATE_CHANGE" in kinds(played) and "REQUEST_FAILED" not in kinds(played)
    assert back.request("RETRIEVE_GAME_STATE")[0]["message"] == "GAME_STATE_CHANGE"
    assert game_id in after.service.lobby.games


def test_who_does_not_come_back_within_the_grace_is_replaced_by_a_robot(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "p.db")
    before = recorded(store, T0)
    alice, bob, game_id = three_seats(before)
    store.heartbeat(before.now)
    after = recorded(store, before.now + 10, restart_grace=120, check_delay=10_000)
    lobby = after.service.lobby
    game = lobby.games[game_id]
    back = after.connect(1)
    back.player_id = alice.player_id
    back.request("REREGISTER_PLAYER", {"handle": "alice"})
    after.tick(119)
    assert [seat.state.value for seat in game.seats][:2] == ["PLAYING", "PLAYING"]
    after.tick(1)  # the grace is over: bob has not come back
    assert [seat.state.value for seat in game.seats][:2] == ["PLAYING", "QUIT"]
    assert lobby.players[bob.player_id or ""].game is None
    changes = [m for m in back.inbox if m["message"] == "GAME_PLAYER_CHANGE"]
    assert changes[-1]["context"]["comment"] == "Player bob disconnected"
    # The game goes on: alice plays, robots play bob's seat; and the store knows it.
    for _ in range(500):
        turn = after.last_turn()
        if turn is None:
            break
        assert turn[0] == back.conn
        back.request("EXECUTE_MOVE", {"move_id": sorted(turn[1]["context"]["moves"])[0]})
    assert back.last("GAME_COMPLETED")
    stored = store.load_game(game_id)
    assert stored is not None and stored[0].state == "COMPLETED"
    assert [seat.state for seat in stored[0].seats][1] == "QUIT"
    assert store.check()["ok"]


def test_an_advertised_game_waits_for_its_advertiser_through_the_grace(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "p.db")
    before = recorded(store, T0)
    alice = before.connect(1)
    alice.register("alice")
    game_id = alice.advertise(players=4, name="waiting")[0]["context"]["game_id"]
    store.heartbeat(before.now)
    after = recorded(store, before.now + 5, restart_grace=60, check_delay=10_000)
    carol = after.connect(2)
    carol.register("carol")
    listed = carol.request("LIST_AVAILABLE_GAMES")[0]["context"]["games"]
    assert [game["game_id"] for game in listed] == [game_id]
    after.tick(60)
    assert carol.request("LIST_AVAILABLE_GAMES")[0]["context"]["games"] == []
    stored = store.load_game(game_id)
    assert stored is not None and stored[0].state == "CANCELLED"


def test_idle_clocks_are_not_charged_for_the_downtime(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "p.db")
    before = recorded(store, T0)
    _, _, game_id = three_seats(before)
    last_active = before.service.lobby.games[game_id].last_active
    store.heartbeat(before.now + 100)  # alive, and quiet, for 100 s more
    after = recorded(store, before.now + 100 + 3600)  # down for an hour
    game = after.service.lobby.games[game_id]
    assert game.last_active == last_active + 3600
    for player in after.service.lobby.players.values():
        assert player.last_active == after.now


def test_a_graceful_shutdown_keeps_games_for_the_next_start(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "p.db")
    before = recorded(store, T0)
    alice, _, game_id = three_seats(before)
    before._take(before.service.shutdown(before.now))
    assert alice.last("SERVER_SHUTDOWN")
    stored = store.load_game(game_id)
    assert stored is not None and stored[0].state == "PLAYING"
    after = recorded(store, before.now + 5)
    assert after.service.lobby.games[game_id].state.value == "PLAYING"
    assert after.service.lobby.ledger.in_progress == 1


def test_without_a_store_a_shutdown_cancels_games_as_before() -> None:
    server = Server(robot="random")
    alice, _, game_id = three_seats(server)
    server._take(server.service.shutdown(server.now))
    assert server.service.lobby.games[game_id].state.value == "CANCELLED"
    assert alice.last("SERVER_SHUTDOWN")


def test_a_games_robot_level_survives_a_restart(tmp_path: Path) -> None:
    """ADVERTISE_GAME's ``robot_level`` (a Parlour extension) is stored with the game."""
    store = SQLiteStore(tmp_path / "p.db")
    before = recorded(store, T0)
    alice = before.connect(1)
    alice.register("alice")
    got = alice.request(
        "ADVERTISE_GAME",
        {
            "name": "G",
            "mode": "ADULT",
            "players": 3,
            "visibility": "PUBLIC",
            "invited_handles": [],
            "robot_level": "hard",
        },
    )
    game_id = got[0]["context"]["game_id"]
    alice.request("START_GAME")
    lobby = before.service.lobby
    assert lobby.turns.robot_for(lobby.games[game_id]) is level_robot("apologies", "hard")
    store.heartbeat(before.now)
    after = recorded(store, before.now + 5)
    lobby = after.service.lobby
    game = lobby.games[game_id]
    assert game.options == {"mode": Mode.ADULT, "robot_level": "hard"}
    assert lobby.turns.robot_for(game) is level_robot("apologies", "hard")
    bob = after.connect(9)
    bob.register("bob")
    refused = bob.request(
        "ADVERTISE_GAME",
        {
            "name": "G",
            "mode": "ADULT",
            "players": 3,
            "visibility": "PUBLIC",
            "invited_handles": [],
            "robot_level": "expert",
        },
    )
    assert refused[0]["message"] == "REQUEST_FAILED", refused
    assert "robot_level" in str(refused[0]["context"]), refused
