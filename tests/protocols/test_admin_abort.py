"""An admin aborts an Apologies game or a Fish table: the services' own part, without
sockets (the admin route itself is tests/protocols/async_ws/test_admin_routes.py)."""

from __future__ import annotations

from typing import Any

from parlour.core.effects import Store
from parlour.storage import GameRow, Snapshot
from tests.protocols.apologies_ws.harness import Server, kinds
from tests.protocols.fish_tcp.test_fish_service import Tables


def test_an_apologies_game_aborted_by_an_admin_is_cancelled_with_the_reason() -> None:
    server = Server()
    leela, fry = server.connect(1), server.connect(2)
    leela.register("leela")
    fry.register("fry")
    leela.advertise(players=2)
    (listed,) = server.service.live_games()
    assert (listed["protocol"], listed["state"], listed["players"]) == ("apologies", "ADVERTISED", ["leela"])
    effects, problem = server.service.abort_game(listed["game_id"], "stuck", server.now)
    assert problem is None
    server._take(effects)
    cancelled = leela.last("GAME_CANCELLED")["context"]
    assert (cancelled["reason"], cancelled["comment"]) == ("CANCELLED", "An admin aborted this game: stuck")
    assert server.service.live_games() == []
    assert server.service.abort_game(listed["game_id"], "again", server.now)[1] is not None
    assert "GAME_CANCELLED" not in kinds(fry.inbox)  # not at the table: not told


def test_a_fish_table_aborted_by_an_admin_removes_its_players_and_is_stored_aborted() -> None:
    tables = Tables()
    tables.take(tables.service.restore(Snapshot([], [], {}, None), tables.now))
    tables.join(1)
    tables.join(2)
    (listed,) = tables.service.live_tables()
    assert listed["protocol"] == "fish" and listed["state"] == "PLAYING"
    assert tables.service.abort_table("no-such-table", "x", tables.now)[1] is not None
    effects, problem = tables.service.abort_table(listed["game_id"], "stuck", tables.now)
    assert problem is None
    rows: list[Any] = [
        r for e in effects if isinstance(e, Store) for r in e.records if isinstance(r, GameRow)
    ]
    assert [(row.id, row.state, row.result) for row in rows] == [
        (listed["game_id"], "ABORTED", {"reason": "ABORTED", "comment": "an admin aborted this table: stuck"})
    ]
    tables.take(effects)
    assert tables.closed == {1, 2} and tables.service.live_tables() == []
    assert tables.service.ledger.in_progress == 0
