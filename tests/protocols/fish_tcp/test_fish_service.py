"""Fish tables without sockets: joins, turns, robots after the wait, every kick path."""

from __future__ import annotations

import json
from dataclasses import replace
from random import Random
from typing import Any

import pytest

from parlour.core.effects import Close, Send
from parlour.protocols.fish_tcp import FishService
from parlour.protocols.fish_tcp.messages import Malformed, decode
from parlour.settings import Settings

T0 = 1000.0


class Tables:
    def __init__(self, players: int = 2, **settings: Any) -> None:
        self.service = FishService(
            replace(Settings(), fish_players=players, **settings),
            Random(3),
            board={"rows": 4, "columns": 4, "fish": 2},
        )
        self.now = T0
        self.inbox: dict[int, list[dict[str, Any]]] = {}
        self.closed: set[int] = set()

    def take(self, effects: list[Any]) -> None:
        for effect in effects:
            if isinstance(effect, Send):
                assert effect.data.endswith(b"\n") and effect.data.count(b"\n") == 1
                self.inbox.setdefault(effect.conn, []).append(json.loads(effect.data))
            elif isinstance(effect, Close):
                self.closed.add(effect.conn)

    def join(self, conn: int, age: int = 10) -> dict[str, Any]:
        self.take(self.service.connected(conn, self.now))
        self.send(conn, {"type": "PlayerConnect", "age": age})
        return self.inbox[conn][0]

    def send(self, conn: int, message: Any) -> None:
        data = message if isinstance(message, bytes) else (json.dumps(message) + "\n").encode()
        self.take(self.service.received(conn, data, self.now))

    def state(self, conn: int) -> dict[str, Any]:
        return next(m for m in reversed(self.inbox[conn]) if m["type"] == "NewGameState")["state"]

    def play_turn(self, conn: int) -> None:
        """The connection plays the first legal action it can see."""
        state = self.state(conn)
        me = state["current_turn"]
        player = next(p for p in state["players"] if p["player_id"] == me)
        taken = {g["tile_id"] for p in state["players"] for g in p["penguins"] if g["tile_id"] is not None}
        free = [t["tile_id"] for t in state["board"]["tiles"] if t["tile_id"] not in taken]
        unplaced = [g for g in player["penguins"] if g["tile_id"] is None]
        if unplaced:
            self.send(conn, {"type": "PlacePenguin", "tile_id": free[0]})
            return
        for penguin in player["penguins"]:
            for target in self.reachable(state, penguin["tile_id"], taken):
                self.send(
                    conn, {"type": "MovePenguin", "penguin_id": penguin["penguin_id"], "next_tile_id": target}
                )
                return
        raise AssertionError("no move although it is my turn")

    @staticmethod
    def reachable(state: dict[str, Any], tile: int, taken: set[int]) -> list[int]:
        tiles = {t["tile_id"]: t for t in state["board"]["tiles"]}
        found = []
        for direction in ("north", "northeast", "southeast", "south", "southwest", "northwest"):
            step = tiles[tile][direction]
            while step is not None and step not in taken:
                found.append(step)
                step = tiles[step][direction]
        return found

    def play_to_the_end(self, conns: list[int]) -> dict[str, Any]:
        for _ in range(200):
            live = [c for c in conns if c not in self.closed]
            if not live:
                break
            current = self.state(live[0])["current_turn"]
            mover = next((c for c in live if self.inbox[c][0].get("player_id") == current), None)
            if mover is None:
                break
            self.play_turn(mover)
        return self.state(conns[0])


@pytest.mark.parametrize("players", [2, 3, 4])
def test_humans_play_a_whole_game(players: int) -> None:
    tables = Tables(players)
    conns = list(range(1, players + 1))
    for conn in conns:
        assert tables.join(conn, age=20 - conn) == {"type": "PlayerConnected", "player_id": conn - 1}
    first = tables.state(1)
    assert first["turn_order"] == sorted(range(players), key=lambda p: (20 - (p + 1), p))  # youngest first
    assert first["winning_players"] == [] and len(first["players"][0]["penguins"]) == 6 - players
    tile = first["board"]["tiles"][0]
    assert tile["fish"] == tile["fish_count"] == 2 and "northwest" in tile
    final = tables.play_to_the_end(conns)
    assert final["winning_players"] and set(tables.closed) == set(conns)
    top = max(p["score"] for p in final["players"])
    assert sorted(final["winning_players"]) == sorted(
        p["player_id"] for p in final["players"] if p["score"] == top
    )


def test_robots_fill_empty_seats_after_the_wait_and_the_next_connection_opens_a_new_table() -> None:
    tables = Tables(3, fish_wait=30)
    tables.join(1)
    tables.now += 29
    tables.take(tables.service.tick(tables.now))
    assert len(tables.inbox[1]) == 1  # still waiting
    tables.now += 1
    tables.take(tables.service.tick(tables.now))
    state = tables.state(1)
    assert len(state["players"]) == 3
    assert tables.join(2) == {"type": "PlayerConnected", "player_id": 0}  # a new table
    final = tables.play_to_the_end([1])
    assert final["winning_players"] and 1 in tables.closed and 2 not in tables.closed


def kick_scene(message: Any, mover_sends: bool) -> Tables:
    tables = Tables(3)
    for conn in (1, 2, 3):
        tables.join(conn)
    current = tables.state(1)["current_turn"]
    mover = current + 1
    culprit = mover if mover_sends else (mover % 3) + 1
    tables.send(culprit, message)
    assert culprit in tables.closed
    assert tables.inbox[culprit][-1]["type"] != "Kicked"  # no message to the kicked player
    others = [c for c in (1, 2, 3) if c != culprit]
    final = tables.play_to_the_end(others)
    assert final["winning_players"] and culprit - 1 not in [p["player_id"] for p in final["players"]]
    return tables


@pytest.mark.parametrize(
    ("message", "mover_sends"),
    [
        ({"type": "PlacePenguin", "tile_id": 0}, False),  # out of turn
        ({"type": "MovePenguin", "penguin_id": 0, "next_tile_id": 1}, True),  # wrong phase
        ({"type": "PlacePenguin", "tile_id": 99}, True),  # illegal
        ({"type": "Dance"}, True),  # unknown
        ({"type": "PlacePenguin", "tile_id": "3"}, True),  # wrong type
        ([1, 2], True),  # not an object
        (b"{not json}\n", True),  # malformed JSON
        ({"type": "PlayerConnect", "age": 3}, True),  # connecting twice
    ],
)
def test_every_kick_path_and_the_others_play_on(message: Any, mover_sends: bool) -> None:
    kick_scene(message, mover_sends)


def test_timeout_kicks_the_player_to_move() -> None:
    tables = Tables(2, fish_timeout=30)
    tables.join(1)
    tables.join(2)
    mover = tables.state(1)["current_turn"] + 1
    tables.now += 30
    tables.take(tables.service.tick(tables.now))
    assert mover in tables.closed
    other = 3 - mover
    assert other not in tables.closed  # a lone player plays on until it cannot move
    final = tables.play_to_the_end([other])
    assert final["winning_players"] == [other - 1] and other in tables.closed


def test_split_and_coalesced_frames() -> None:
    tables = Tables(2)
    tables.take(tables.service.connected(1, T0))
    tables.take(tables.service.connected(2, T0))
    tables.send(1, b'{"type": "Player')
    tables.send(1, b'Connect", "age": 5}')
    assert tables.inbox[1] == [{"type": "PlayerConnected", "player_id": 0}]
    tables.send(2, b'{"type":"PlayerConnect","age":7}{"PlacePenguin":{"tile_id":0}}')
    # Seat 0 (younger) is first to place, so seat 1's coalesced placement came out of turn.
    assert 2 in tables.closed


def test_bad_player_connect_gets_an_error_message() -> None:
    tables = Tables(2)
    tables.take(tables.service.connected(1, T0))
    tables.send(1, {"type": "PlayerConnect", "age": -1})
    assert tables.inbox[1] == [
        {"type": "PlayerConnected", "error_message": "'age' must be a non-negative integer"}
    ]
    assert 1 in tables.closed


def test_decode_accepts_the_later_message_shapes() -> None:
    assert decode({"PlacePenguin": {"tile_id": 3}}).tile == 3  # type: ignore[union-attr]
    assert decode({"MovePenguin": {"penguin_id": 1, "tile_id": 4}}) == decode(
        {"type": "MovePenguin", "penguin_id": 1, "next_tile_id": 4}
    )
    with pytest.raises(Malformed):
        decode({"type": "MovePenguin", "penguin_id": True, "next_tile_id": 4})


def test_a_connection_after_the_start_is_refused_when_no_table_is_free() -> None:
    tables = Tables(2, max_in_progress_games=1)
    tables.join(1)
    tables.join(2)  # the only table allowed has started
    assert tables.join(3) == {"type": "PlayerConnected", "error_message": "no table is free; try again later"}
    assert 3 in tables.closed and 1 not in tables.closed


def test_a_silent_connection_is_closed_after_the_action_timeout() -> None:
    tables = Tables(2, fish_timeout=30)
    tables.take(tables.service.connected(7, tables.now))
    tables.now += 29
    tables.take(tables.service.tick(tables.now))
    assert 7 not in tables.closed
    tables.now += 1
    tables.take(tables.service.tick(tables.now))
    assert tables.inbox[7] == [{"type": "PlayerConnected", "error_message": "no PlayerConnect in time"}]
    assert 7 in tables.closed and 7 not in tables.service.streams
