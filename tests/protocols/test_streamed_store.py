"""Fish and Tsuro tables when the store fails: a table whose moves cannot be stored ends, its
players are removed the protocol's way; a sender at another table is removed too, and that
removal is itself a move of its table, handed back to be stored."""

from __future__ import annotations

from parlour.core.effects import Store
from parlour.storage import MoveRow
from tests.protocols.fish_tcp.test_fish_service import Tables as FishTables
from tests.protocols.tsuro_tcp.test_tsuro_service import Tables as TsuroTables


def test_a_tsuro_table_that_cannot_be_stored_ejects_everyone_with_a_reason() -> None:
    tables = TsuroTables(3)
    service = tables.service
    service.recording = True
    for conn in (1, 2, 3, 4, 5, 6):
        tables.join(conn)
    first, second = service.tables
    assert first.log is not None and second.log is not None
    failed = [MoveRow(first.log.id, 0, 0, "move", 0, tables.now)]
    effects = service.store_failed(failed, [1, 4], None, tables.now)
    tables.take([e for e in effects if not isinstance(e, Store)])
    for conn in (1, 2, 3):
        assert tables.inbox[conn][-1] == {"type": "EJECTED", "reason": "the server could not save the game"}
        assert conn in tables.closed
    assert service.tables == [second] and service.ledger.in_progress == 1
    # conn 4 sat at the other table: removed, and its removal is a move to store.
    assert 4 in tables.closed and tables.inbox[4][-1]["type"] == "EJECTED"
    stored = [r for e in effects if isinstance(e, Store) for r in e.records]
    assert any(isinstance(r, MoveRow) and r.game_id == second.log.id and r.kind == "remove" for r in stored)


def test_a_fish_table_that_cannot_be_stored_closes_every_connection() -> None:
    tables = FishTables(2)
    service = tables.service
    service.recording = True
    tables.join(1, age=8)
    tables.join(2, age=9)
    (table,) = service.tables
    assert table.log is not None
    effects = service.store_failed([MoveRow(table.log.id, 0, 0, "move", 0, tables.now)], [], None, tables.now)
    tables.take([e for e in effects if not isinstance(e, Store)])
    assert tables.closed == {1, 2} and service.tables == [] and service.ledger.in_progress == 0
