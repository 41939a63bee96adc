"""Redis for the cluster tests: started per test in its temporary folder, or the tests are
skipped (with the reason) when redis-server cannot be installed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pg import PostgresServer
from tests.redisserver import RestartableRedis, redis_binary, redis_server


@pytest.fixture(scope="session")
def redis_bin() -> str:
    binary = redis_binary()
    if binary is None:
        pytest.skip("redis-server is not installed and cannot be (apt-get install redis-server)")
    return binary


@pytest.fixture(params=["sqlite", "postgresql"])
def shared_store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The store every node of a test shares: an SQLite file, or a PostgreSQL database (the
    session's throwaway server, tests/pg.py)."""
    if request.param == "sqlite":
        return str(tmp_path / "parlour.db")
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return server.database()


@pytest.fixture
def redis_url(tmp_path: Path, redis_bin: str) -> Iterator[str]:
    with redis_server(tmp_path / "redis", redis_bin) as url:
        yield url


@pytest.fixture
def own_redis(tmp_path: Path, redis_bin: str) -> Iterator[RestartableRedis]:
    """A Redis of the test's own, which it may kill, start again or freeze (SIGSTOP); killed at
    the end, frozen or not."""
    redis = RestartableRedis(tmp_path / "redis", redis_bin)
    redis.start()
    try:
        yield redis
    finally:
        redis.kill()
