"""The store suite runs against both backends: ``store_location`` and ``store`` are
parametrized over SQLite (a file in the test's folder) and PostgreSQL (a new database on a
server started once for the whole session: ``postgres_server`` in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from parlour.storage import open_store
from parlour.storage.sql import SQLStore
from tests.pg import PostgresServer

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def new_location(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Callable[[], str]:
    """Makes the location of a new, empty store of the test's backend at each call."""
    if backend == "sqlite":
        made = iter(range(1, 1000))
        return lambda: str(tmp_path / f"parlour-{next(made)}.db")
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return server.database


@pytest.fixture
def store_location(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """Where the test's store is: a new file, or a PostgreSQL store with no rows."""
    if backend == "sqlite":
        return str(tmp_path / "parlour.db")
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return server.emptied()


def open_at(location: str) -> SQLStore:
    store = open_store(location)
    assert isinstance(store, SQLStore)
    return store


@pytest.fixture
def store(store_location: str) -> Iterator[SQLStore]:
    opened = open_at(store_location)
    yield opened
    opened.close()
