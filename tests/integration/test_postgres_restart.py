"""A server on a PostgreSQL store keeps its games across a SIGKILL: the /async restart scenario
of test_async_restart.py, served with ``--store postgresql://...`` (its writer process commits
to the database) instead of a file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.integration import test_async_restart as restart
from tests.pg import PostgresServer
from tests.processes import RestartableServer


@pytest.fixture
def server(postgres_server: PostgresServer, tmp_path: Path) -> Iterator[RestartableServer]:
    server = RestartableServer(postgres_server.database(), tmp_path / "server.log")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_a_game_on_postgresql_survives_a_sigkill_in_the_middle_of_a_turn(server: RestartableServer) -> None:
    restart.test_sigkill_in_the_middle_of_a_turn(server)
    # The turns are in the database: the first before the kill, the second after it.
    assert isinstance(server.store, str)
    with psycopg.connect(server.store) as conn:
        turns = conn.execute("SELECT turn_index FROM async_turns ORDER BY turn_index").fetchall()
    assert [index for (index,) in turns][-2:] == [1, 2]
    assert "store postgresql://" in server.log.read_text()
