"""Fish and Tsuro tables whose slow robots think away from the event loop: a robot's turn is a
Think effect, and its answer comes back as an input of its own (StreamedService.thought), played
only if the table still stands where it was asked."""

from __future__ import annotations

import pickle
from typing import Any

from parlour.core.effects import Effect, Think
from parlour.games.fish import PLUGIN as FISH
from parlour.games.tsuro import PLUGIN as TSURO
from parlour.protocols.streamed import StreamedService, Table
from tests.protocols.fish_tcp.test_fish_service import Tables as FishTables
from tests.protocols.tsuro_tcp.test_tsuro_service import Tables as TsuroTables


def offloaded(tables: Any) -> list[Think]:
    """Turn offloading on and keep the table's Think effects aside (run by hand)."""
    tables.service.offload = True
    thinks: list[Think] = []
    take = tables.take

    def taking(effects: list[Effect]) -> None:
        thinks.extend(effect for effect in effects if isinstance(effect, Think))
        take([effect for effect in effects if not isinstance(effect, Think)])

    tables.take = taking
    return thinks


def answer(tables: Any, think: Think, choice: int | None) -> None:
    service: StreamedService = tables.service
    tables.take(service.thought(think.token, choice, tables.now))


def only(thinks: list[Think]) -> Think:
    assert len(thinks) == 1, thinks
    return thinks.pop()


def played(table: Table, plugin: Any, choice: int) -> Any:
    """The table's state once the robot to move plays its ``choice``-th legal move (on a copy)."""
    state = pickle.loads(pickle.dumps(table.state))
    seat = plugin.to_move(state)
    return plugin.apply(
        state, plugin.legal_moves(state, seat)[choice], pickle.loads(pickle.dumps(table.log.rng))
    )


def test_a_hard_fish_robot_thinks_off_the_loop_for_a_whole_game() -> None:
    tables = FishTables(2, fish_robot="hard", fish_wait=30)
    thinks = offloaded(tables)
    tables.join(1, age=50)
    tables.now += 30
    tables.take(tables.service.tick(tables.now))  # a robot takes the empty seat: youngest, it starts
    table = tables.service.tables[0]
    assert table.log is not None
    think = only(thinks)
    assert think.token == (table.log.id, 0) and table.thinking == 0
    choice = think.job()
    assert table.log.moves == 0  # nothing moved while the robot thought
    expected = played(table, FISH, choice)
    answer(tables, think, choice)
    assert table.log.moves == 1 and table.state == expected
    answer(tables, think, choice)  # the same answer again: the table has moved on
    assert table.log.moves == 1 and not thinks
    for _ in range(100):  # to the end: the human's turns and the robot's answers
        if 1 in tables.closed:
            break
        if thinks:
            think = only(thinks)
            answer(tables, think, think.job())
        else:
            tables.play_turn(1)
    assert 1 in tables.closed and table.over
    assert tables.state(1)["winning_players"]


def test_a_stale_fish_decision_is_dropped_and_a_broken_pool_falls_back() -> None:
    """A player kicked while the robot thinks moves the table on: the robot is asked again for
    the new position, and the old answer is dropped. An answer of None (the robots' process
    died) has the robot decide on the loop."""
    tables = FishTables(3, fish_robot="hard", fish_wait=30)
    thinks = offloaded(tables)
    tables.join(1, age=50)
    tables.join(2, age=60)
    tables.now += 30
    tables.take(tables.service.tick(tables.now))
    table = tables.service.tables[0]
    assert table.log is not None
    first = only(thinks)
    tables.send(2, {"type": "PlacePenguin", "tile_id": 0})  # out of turn: kicked
    assert 2 in tables.closed and table.log.moves == 1  # its removal is a move of the table
    second = only(thinks)  # asked again, for where the table stands
    assert second.token == (table.log.id, 1)
    answer(tables, first, first.job())
    assert table.log.moves == 1 and not thinks  # dropped
    answer(tables, second, None)
    assert table.log.moves == 2 and table.thinking is None
    assert tables.state(1)["current_turn"] == 0  # the human's turn: the robot did move


def test_a_hard_tsuro_robot_thinks_off_the_loop_and_stale_answers_are_asked_again() -> None:
    tables = TsuroTables(3, tsuro_robot="hard", tsuro_wait=30)
    thinks = offloaded(tables)
    tables.join(1)
    tables.join(2)
    tables.now += 30
    tables.take(tables.service.tick(tables.now))  # the robot sits third
    table = tables.service.tables[0]
    assert table.log is not None
    for conn in (1, 2):
        assert tables.asked() == conn and not thinks
        tables.send(conn, tables.request(conn))
    first = only(thinks)
    assert first.token == (table.log.id, 2) and tables.asked() is None
    tables.send(1, {"type": "DANCE"})  # ejected while the robot thinks (not its turn)
    assert 1 in tables.closed and table.log.moves == 3 and not thinks
    answer(tables, first, first.job())  # stale: dropped, and the robot is asked again
    again = only(thinks)
    assert again.token == (table.log.id, 3) and table.log.moves == 3
    choice = again.job()
    expected = played(table, TSURO, choice)
    answer(tables, again, choice)
    assert table.log.moves == 4 and table.state == expected
    assert tables.asked() == 2  # the game goes on with the human left
