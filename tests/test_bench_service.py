"""bench/service.py on a short seeded slice: games are played to their end, the records are made
only when recording, and players are sent the same bytes either way."""

from __future__ import annotations

from bench.service import play


def test_records_change_nothing_players_are_sent() -> None:
    without = play(300, record=False, clients=4, hash_records=True)
    with_records = play(300, record=True, clients=4, hash_records=True)
    assert without.moves == with_records.moves >= 300
    assert without.games == with_records.games >= 1
    assert without.records == 0 < with_records.records
    assert with_records.digest == without.digest
    assert with_records.rows != without.rows
    assert with_records.cpu > 0 and without.cpu > 0
