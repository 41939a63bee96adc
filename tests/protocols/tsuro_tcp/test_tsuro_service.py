"""Tsuro tables without sockets: joins, colours, turns, robots, GAME_END, every EJECTED reason."""

from __future__ import annotations

import json
from dataclasses import replace
from random import Random
from typing import Any

import pytest

from parlour.core.effects import Close, Send
from parlour.games.tsuro.rules import legal_moves
from parlour.games.tsuro.tiles import PORTS
from parlour.protocols.tsuro_tcp import TsuroService
from parlour.settings import Settings


class Tables:
    def __init__(self, players: int = 3, **settings: Any) -> None:
        self.service = TsuroService(replace(Settings(), tsuro_players=players, **settings), Random(5))
        self.now = 100.0
        self.inbox: dict[int, list[dict[str, Any]]] = {}
        self.closed: set[int] = set()

    def take(self, effects: list[Any]) -> None:
        for effect in effects:
            if isinstance(effect, Send):
                assert effect.data.endswith(b"\n")
                self.inbox.setdefault(effect.conn, []).append(json.loads(effect.data))
            elif isinstance(effect, Close):
                self.closed.add(effect.conn)

    def send(self, conn: int, message: Any) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.take(self.service.received(conn, data, self.now))

    def join(self, conn: int) -> None:
        self.take(self.service.connected(conn, self.now))
        assert self.inbox[conn] == [{"type": "ASK_FOR_PLAYER_INFO"}]
        self.send(conn, {"type": "JOIN", "name": f"p{conn}", "strategy": "dumb"})

    def color(self, conn: int) -> str:
        return next(m["color"] for m in self.inbox[conn] if m["type"] == "RECEIVE_COLOR")

    def request(self, conn: int, index: int = 0) -> dict[str, Any]:
        """A MOVE_REQUEST for one of the legal moves (the test's oracle is the rules module)."""
        table, seat = self.service.seated[conn]
        assert table.state is not None
        move = legal_moves(table.state, seat)[index]
        body = {
            "type": "MOVE_REQUEST",
            "placement_type": "INITIAL" if move.initial else "INTERMEDIATE",
            "index": move.tile,
            "rotation": move.rotation,
            "color": self.color(conn),
            "x": move.x,
            "y": move.y,
        }
        if move.initial:
            body["port"] = PORTS[move.port or 0]
        return body

    def asked(self) -> int | None:
        """The connection whose latest message is ASK_FOR_MOVE, if any."""
        for conn, messages in self.inbox.items():
            if conn not in self.closed and messages and messages[-1]["type"] == "ASK_FOR_MOVE":
                return conn
        return None

    def play_to_the_end(self) -> None:
        for _ in range(300):
            conn = self.asked()
            if conn is None:
                return
            before = len(self.inbox[conn])
            self.send(conn, self.request(conn))
            assert self.inbox[conn][before] == {"type": "MOVE_ACCEPTED"}


@pytest.mark.parametrize("players", [3, 4, 5])
def test_humans_play_a_whole_game(players: int) -> None:
    tables = Tables(players)
    conns = list(range(1, players + 1))
    for conn in conns:
        tables.join(conn)
    colours = [tables.color(c) for c in conns]
    assert colours == ["white", "black", "red", "green", "blue"][:players]
    first = tables.inbox[1]
    assert [m["type"] for m in first[:3]] == ["ASK_FOR_PLAYER_INFO", "RECEIVE_COLOR", "RECEIVE_GAME_STATE"]
    state = first[2]
    assert set(state) == {"type", "board", "players", "state", "tile", "port"} and state["state"] == "ALIVE"
    assert len(state["board"]) == 10 and all(len(row) == 10 for row in state["board"])
    assert first[3]["type"] == "ASK_FOR_MOVE" and len(first[3]["tiles"]) == 3
    tables.play_to_the_end()
    for conn in conns:
        if tables.inbox[conn][-1]["type"] == "GAME_END":
            results = tables.inbox[conn][-1]["results"]
            assert "0" in results and sum(len(v) for v in results.values()) == players
            assert conn in tables.closed
    assert any(tables.inbox[c][-1]["type"] == "GAME_END" for c in conns)


def test_robots_fill_the_table_after_the_wait() -> None:
    tables = Tables(4, tsuro_wait=30)
    tables.join(1)
    tables.now += 30
    tables.take(tables.service.tick(tables.now))
    assert tables.color(1) == "white"
    tables.play_to_the_end()
    end = tables.inbox[1][-1]
    assert end["type"] in ("GAME_END", "EJECTED") and 1 in tables.closed
    if end["type"] == "GAME_END":
        assert sum(len(v) for v in end["results"].values()) == 4


def scene() -> tuple[Tables, int, int]:
    tables = Tables(3)
    for conn in (1, 2, 3):
        tables.join(conn)
    mover = tables.asked()
    assert mover is not None
    other = 2 if mover != 2 else 3
    return tables, mover, other


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"rotation": 45}, "'rotation' must be 0, 90, 180 or 270"),
        ({"rotation": "90"}, "'rotation' must be 0, 90, 180 or 270"),
        ({"x": 10}, "'x' must be between 0 and 9"),
        ({"y": -1}, "'y' must be between 0 and 9"),
        ({"index": 35}, "'index' must be between 0 and 34"),
        ({"index": None}, "'index' must be an integer"),
        ({"port": "Z"}, "'port' must be one of A-H"),
        ({"placement_type": "SIDEWAYS"}, "'placement_type' must be INITIAL or INTERMEDIATE"),
        ({"color": "purple"}, "wrong color"),
        ({"index": 20}, "Played a tile not found in hand"),
        ({"placement_type": "INTERMEDIATE"}, "initial placements are first round only"),
        ({"x": 5, "y": 5}, "not_on_border"),
        ({"type": "DANCE"}, "unknown message type 'DANCE'"),
    ],
)
def test_ejected_with_a_reason_and_the_others_play_on(change: dict[str, Any], reason: str) -> None:
    tables, mover, _ = scene()
    request = {**tables.request(mover), **change}
    tables.send(mover, request)
    assert tables.inbox[mover][-1] == {"type": "EJECTED", "reason": reason}
    assert mover in tables.closed
    tables.play_to_the_end()
    assert any(m["type"] == "GAME_END" for c in (1, 2, 3) if c != mover for m in tables.inbox[c])


def test_more_rule_reasons() -> None:
    tables, mover, _ = scene()
    first = tables.request(mover)
    tables.send(mover, first)
    second = tables.asked()
    assert second is not None
    request = tables.request(second)
    tables.send(second, {**request, "x": first["x"], "y": first["y"]})
    assert tables.inbox[second][-1] == {"type": "EJECTED", "reason": "space occupied"}
    third = tables.asked()
    assert third is not None
    request = tables.request(third)
    # Next to the first tile, on the border, with a port facing off the board.
    x, y = first["x"], first["y"]
    beside = [(x + dx, y + dy) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))]
    bx, by = next((a, b) for a, b in beside if 0 <= a <= 9 and 0 <= b <= 9 and (a in (0, 9) or b in (0, 9)))
    port = "A" if by == 0 else "E" if by == 9 else "H" if bx == 0 else "C"
    tables.send(third, {**request, "x": bx, "y": by, "port": port})
    assert tables.inbox[third][-1] == {"type": "EJECTED", "reason": "has neighbor"}


def test_out_of_turn_malformed_and_timeouts() -> None:
    tables, mover, other = scene()
    tables.send(other, tables.request(mover) | {"color": tables.color(other)})
    assert tables.inbox[other][-1] == {"type": "EJECTED", "reason": "not your turn"}
    tables.send(mover, b"{nope")
    assert (
        tables.inbox[mover][-1]["type"] == "EJECTED" and "malformed JSON" in tables.inbox[mover][-1]["reason"]
    )
    tables = Tables(3, tsuro_timeout=30)
    tables.take(tables.service.connected(9, tables.now))
    tables.now += 30
    tables.take(tables.service.tick(tables.now))
    assert tables.inbox[9][-1] == {"type": "EJECTED", "reason": "timeout"}  # no JOIN in time
    tables, mover, _ = scene()
    tables.now += 31
    tables.take(tables.service.tick(tables.now))
    assert tables.inbox[mover][-1] == {"type": "EJECTED", "reason": "timeout"}  # no move in time


def test_coalesced_frames() -> None:
    tables = Tables(3)
    tables.take(tables.service.connected(1, tables.now))
    tables.send(1, b'{"type":"JOIN","name":"a","strategy":"x"}{"type":"JOIN","name":"again"}')
    assert tables.inbox[1][-1] == {"type": "EJECTED", "reason": "not your turn"}
    tables = Tables(3)
    tables.take(tables.service.connected(1, tables.now))
    tables.send(1, b'{"type":"JO')
    tables.send(1, b'IN","name":"a","strategy":"x"}\n')
    assert 1 not in tables.closed and 1 in tables.service.seated


def test_the_remaining_rule_reasons() -> None:
    tables, mover, _ = scene()
    request = tables.request(mover)
    tables.send(mover, {**request, "x": 4, "y": 0, "port": "E"})
    assert tables.inbox[mover][-1] == {"type": "EJECTED", "reason": "port not on outside edge"}
    tables = Tables(3)
    for conn in (1, 2, 3):
        tables.join(conn)
    for _ in range(3):  # everyone places a first tile
        conn = tables.asked()
        assert conn is not None
        tables.send(conn, tables.request(conn))
    conn = tables.asked()
    assert conn is not None
    request = tables.request(conn)
    tables.send(conn, {**request, "x": (request["x"] + 5) % 10})
    assert tables.inbox[conn][-1] == {"type": "EJECTED", "reason": "not adjacent to occupied port"}


def test_a_suicidal_move_is_refused_while_another_survives() -> None:
    from parlour.games.tsuro.rules import Placement, check

    for seed in range(30):
        tables = Tables(3)
        tables.service.rng = Random(seed)
        for conn in (1, 2, 3):
            tables.join(conn)
        for _ in range(60):
            conn = tables.asked()
            if conn is None:
                break
            table, seat = tables.service.seated[conn]
            state = table.state
            assert state is not None
            player = state.players[seat]
            if player.at is not None:
                x, y = tables.request(conn)["x"], tables.request(conn)["y"]
                for tile in state.hand:
                    for rotation in (0, 90, 180, 270):
                        if (
                            check(state, seat, Placement(False, tile, rotation, x, y))
                            == "player does not survive"
                        ):
                            body = {
                                "type": "MOVE_REQUEST",
                                "placement_type": "INTERMEDIATE",
                                "index": tile,
                                "rotation": rotation,
                                "color": tables.color(conn),
                                "x": x,
                                "y": y,
                            }
                            tables.send(conn, body)
                            assert tables.inbox[conn][-1] == {
                                "type": "EJECTED",
                                "reason": "player does not survive",
                            }
                            return
            tables.send(conn, tables.request(conn, index=-1))
    raise AssertionError("no position with a refusable suicide was found")
