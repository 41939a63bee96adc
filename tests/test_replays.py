"""Recorded games replay, move by move, to the states their players saw (all three games), and
the records API lists them with filters and pages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from parlour.api import handle_api
from parlour.core.effects import Store
from parlour.replays import record_json
from parlour.storage import GameRow, SeatRow
from parlour.storage.sqlite import SQLiteStore
from tests.protocols.apologies_ws.harness import Server
from tests.protocols.fish_tcp.test_fish_service import Tables as FishTables
from tests.protocols.tsuro_tcp.test_tsuro_service import Tables as TsuroTables
from tests.recording import Recorder


def only_game(store: SQLiteStore) -> dict[str, Any]:
    games = store.list_games()
    assert len(games) == 1
    found = store.load_game(games[0].id)
    assert found is not None
    return record_json(*found)


def recorded_server(store: SQLiteStore, seed: int) -> Server:
    """An Apologies service with random robots, committing into ``store`` as it plays."""
    server = Server(seed=seed, robot="random")
    server.service.restore(store.load_live(), server.now)
    server._take = Recorder(store, server._take)  # type: ignore[method-assign]
    return server


def test_an_apologies_game_replays_to_every_state_its_player_saw(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "p.db")
    server = recorded_server(store, seed=11)
    alice = server.connect(1)
    alice.register("alice")
    alice.advertise(players=3, mode="ADULT")
    alice.request("START_GAME")
    for _ in range(2000):
        turn = server.last_turn()
        if turn is None:
            break
        alice.request("EXECUTE_MOVE", {"move_id": sorted(turn[1]["context"]["moves"])[-1]})
    assert alice.last("GAME_COMPLETED")
    record = only_game(store)
    assert record["state"] == "COMPLETED" and record["result"]["winners"]
    views = [record["initial"]] + [move["view"] for move in record["moves"]]
    seen = [m["context"] for m in alice.inbox if m["message"] == "GAME_STATE_CHANGE"]
    # One GAME_STATE_CHANGE at the start and one after every move: the same pawns each time.
    assert len(seen) == len(views) == len(record["moves"]) + 1
    for context, view in zip(seen, views, strict=True):
        saw = {part["color"]: part["pawns"] for part in [context["player"], *context["opponents"]]}
        assert saw == {player["color"]: player["pawns"] for player in view["players"]}
        assert context["recent_history"][-1]["action"] == (view["action"] or {}).get("action")
    colours = ["RED", "YELLOW", "GREEN", "BLUE"]
    assert views[-1]["winner"] == colours[record["result"]["winners"][0]]
    winner = record["seats"][record["result"]["winners"][0]]["handle"]
    assert alice.last("GAME_COMPLETED")["context"]["winner"] == winner
    assert store.check()["ok"]


def test_a_fish_table_with_a_kick_replays_to_the_final_state(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "p.db")
    tables = FishTables(3)
    tables.service.restore(store.load_live(), tables.now)
    tables.take = Recorder(store, tables.take)  # type: ignore[method-assign]
    for conn in (1, 2, 3):
        tables.join(conn, age=20 - conn)
    for _ in range(4):
        current = tables.state(1)["current_turn"]
        mover = next(c for c in (1, 2, 3) if tables.inbox[c][0]["player_id"] == current)
        tables.play_turn(mover)
    current = tables.state(1)["current_turn"]
    kicked = next(c for c in (1, 2, 3) if tables.inbox[c][0]["player_id"] == current)
    tables.send(kicked, {"type": "MovePenguin", "penguin_id": "x"})  # malformed: kicked
    live = [c for c in (1, 2, 3) if c != kicked]
    final = tables.play_to_the_end(live)
    record = only_game(store)
    assert [move["kind"] for move in record["moves"]].count("remove") == 1
    replayed = record["moves"][-1]["view"]
    for key in ("board", "players", "turn_order"):
        assert replayed[key] == final[key]
    assert record["result"]["winners"] == final["winning_players"]
    # Every state a remaining player was shown is one of the replayed ones.
    views = [record["initial"]] + [move["view"] for move in record["moves"]]
    shown = [m["state"] for m in tables.inbox[live[0]] if m["type"] == "NewGameState"]
    replayed_states = [{k: v[k] for k in ("board", "players", "current_turn")} for v in views]
    for state in shown[:-1]:
        assert {k: state[k] for k in ("board", "players", "current_turn")} in replayed_states


def test_a_tsuro_table_replays_to_the_final_state(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "p.db")
    tables = TsuroTables(3, tsuro_deal="random")
    tables.service.restore(store.load_live(), tables.now)
    tables.take = Recorder(store, tables.take)  # type: ignore[method-assign]
    for conn in (1, 2, 3):
        tables.join(conn)
    tables.play_to_the_end()
    record = only_game(store)
    assert record["state"] == "COMPLETED" and record["options"] == {"deal": "random"}
    boards = [view["board"] for view in [record["initial"], *(m["view"] for m in record["moves"])]]
    shown = [m["board"] for m in tables.inbox[1] if m["type"] == "RECEIVE_GAME_STATE"]
    for board in shown:
        assert board in boards
    end = next(m for c in (1, 2, 3) for m in tables.inbox[c] if m["type"] == "GAME_END")
    finals = sorted(
        json.dumps(entry[0], sort_keys=True) for place in end["results"].values() for entry in place
    )
    replayed = sorted(json.dumps(p, sort_keys=True) for p in record["moves"][-1]["view"]["players"])
    assert finals == replayed


def test_tables_in_progress_are_aborted_at_the_next_start(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "p.db")
    tables = FishTables(2)
    tables.service.restore(store.load_live(), tables.now)
    tables.take = Recorder(store, tables.take)  # type: ignore[method-assign]
    tables.join(1, age=9)
    tables.join(2, age=10)
    tables.play_turn(1)
    live = store.load_live()
    assert [game.state for game in live.games] == ["PLAYING"]
    again = FishTables(2)
    restored = again.service.restore(store.load_live(), tables.now + 60)
    store.commit([r for e in restored if isinstance(e, Store) for r in e.records])
    assert store.load_live().games == []
    record = only_game(store)
    assert record["state"] == "ABORTED" and len(record["moves"]) == 1
    assert record["result"]["reason"] == "ABORTED"


def finished(
    game_id: str, finished_at: float, game: str = "apologies", handles: tuple[str, ...] = ()
) -> GameRow:
    seats = [SeatRow(h, False, "FINISHED") for h in handles] + [SeatRow("Robot", True, "FINISHED")]
    return GameRow(
        id=game_id,
        protocol=game,
        game=game,
        name=game_id,
        state="COMPLETED",
        created=finished_at - 10,
        last_active=finished_at,
        seed=1,
        finished=finished_at,
        seats=seats,
    )


def api(store: SQLiteStore, target: str) -> tuple[int, Any]:
    answer = handle_api(store, target)
    return int(answer.status), msgspec.json.decode(answer.body)


def test_the_api_lists_newest_first_with_pages_and_filters(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "p.db")
    rows = [
        finished(
            f"g{i:02d}", 100.0 + i // 2, "apologies" if i % 3 else "tsuro", ("ann",) if i % 2 else ("bob",)
        )
        for i in range(25)
    ]
    store.commit(rows)
    expected = sorted(rows, key=lambda r: (r.finished or 0, r.id), reverse=True)
    pages: list[str] = []
    target = "/api/games?limit=7"
    while True:
        status, body = api(store, target)
        assert status == 200
        pages += [game["id"] for game in body["games"]]
        if body["next"] is None:
            break
        target = f"/api/games?limit=7&before={body['next']}"
    assert pages == [row.id for row in expected]
    status, body = api(store, "/api/games?game_type=tsuro&player=bob")
    assert {g["id"] for g in body["games"]} == {
        r.id for r in rows if r.game == "tsuro" and r.seats[0].handle == "bob"
    }
    status, body = api(store, "/api/games?player=Robot")
    assert body["games"] == []  # robots are not players one can look up
    assert api(store, "/api/games/g03")[1]["id"] == "g03"


@pytest.mark.parametrize(
    ("target", "status", "words"),
    [
        ("/api/games?limit=0", 400, "'limit'"),
        ("/api/games?limit=abc", 400, "'limit'"),
        ("/api/games?limit=201", 400, "'limit'"),
        ("/api/games?game_type=chess", 400, "'game_type'"),
        ("/api/games?before=yesterday", 400, "'before'"),
        ("/api/games?colour=red", 400, "unknown parameter 'colour'"),
        ("/api/games?limit=1&limit=2", 400, "once"),
        ("/api/games/nope", 404, "no game"),
        ("/api/nothing", 404, "no such"),
    ],
)
def test_the_api_refuses_bad_requests_in_words(tmp_path: Path, target: str, status: int, words: str) -> None:
    store = SQLiteStore(tmp_path / "p.db")
    got, body = api(store, target)
    assert got == status and words in body["error"]


def test_the_api_without_a_store() -> None:
    answer = handle_api(None, "/api/games")
    assert int(answer.status) == 503


def test_the_api_filters_by_how_games_ended(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "p.db")
    done = finished("done", 10.0, handles=("ann",))
    dropped = msgspec.structs.replace(finished("dropped", 11.0, handles=("ann",)), state="CANCELLED")
    store.commit([done, dropped])
    assert [g["id"] for g in api(store, "/api/games?state=COMPLETED")[1]["games"]] == ["done"]
    assert [g["id"] for g in api(store, "/api/games?state=CANCELLED&player=ann")[1]["games"]] == ["dropped"]
    assert api(store, "/api/games?state=PLAYING")[0] == 400


def test_an_apologies_record_names_each_seats_colour_and_each_move(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "p.db")
    server = recorded_server(store, seed=3)
    alice = server.connect(1)
    alice.register("alice")
    alice.advertise(players=2)
    alice.request("START_GAME")
    while (turn := server.last_turn()) is not None:
        alice.request("EXECUTE_MOVE", {"move_id": sorted(turn[1]["context"]["moves"])[0]})
    record = only_game(store)
    assert [seat["color"] for seat in record["seats"]] == ["RED", "YELLOW"]
    last = record["moves"][-1]["view"]
    assert last["action"]["action"].startswith("Game completed")
    # The winning move itself: its last action brings a pawn of the winner home.
    assert last["move"]["actions"][-1]["end"]["home"] is True
    assert last["move"]["actions"][-1]["end"]["color"] == last["winner"]
