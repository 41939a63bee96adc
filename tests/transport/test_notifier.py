"""The push notifier (docs/async-decisions.md S16) against a receiver on the loopback, with a real
SQLite store: delivery, retries with backoff on an injected clock, at-least-once after a crash,
giving up."""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import msgspec
import pytest

from parlour.settings import SettingError, Settings
from parlour.storage import Record, StoreFailure
from parlour.storage.records import AccountRow, NotificationRow
from parlour.storage.sqlite import SQLiteStore
from parlour.transport.notifier import (
    GIVEN_UP,
    Notifier,
    NotifyPolicy,
    redacted,
    run_notifier,
    start_notifier,
    stop_notifier,
)
from parlour.transport.runtime import Runtime

TOKEN = "secret-device-token"
T0 = 1_000_000.0


class Receiver:
    """A tiny HTTP/1.1 server: answers each POST with the next scripted status (then 200)."""

    def __init__(self, statuses: list[int] | None = None) -> None:
        self.statuses = list(statuses or [])
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self.arrived = asyncio.Event()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/push?key=webhook-secret"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
            headers = {
                name.strip().lower(): value.strip()
                for name, value in (line.split(":", 1) for line in head[1:] if line)
            }
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            self.requests.append((head[0], headers, body))
            self.arrived.set()
            status = self.statuses.pop(0) if self.statuses else 200
            writer.write(
                f"HTTP/1.1 {status} Scripted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode()
            )
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    @property
    def keys(self) -> list[str]:
        return [headers["idempotency-key"] for _, headers, _ in self.requests]

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[Receiver]:
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        async with server:
            yield self


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def row(number: int, at: float = T0) -> NotificationRow:
    notification_id = f"n{number:031d}"
    payload = msgspec.json.encode(
        {
            "id": notification_id,
            "action-loc-key": "YOUR_TURN_ACTION",
            "loc-key": "YOUR_TURN",
            "loc-args": [],
            "async": {"game_id": number, "type": "YOUR_TURN", "player_id": 3, "turn_index": 1},
            "device_type": "FCM",
            "token": TOKEN,
        }
    )
    return NotificationRow(
        id=notification_id,
        account_id=3,
        device_type="FCM",
        token=TOKEN,
        payload=payload,
        created=at,
        attempts=0,
        next_attempt=at,
        delivered=None,
    )


def stored(store: SQLiteStore) -> dict[str, NotificationRow]:
    """Every notification row the store holds, by id (from its export)."""
    found: dict[str, NotificationRow] = {}
    for kind, fields in store.export():
        if kind == "notification":
            fields = {**fields, "payload": base64.b64decode(fields["payload"])}
            found[fields["id"]] = NotificationRow(**fields)
    return found


Scenario = Callable[[Runtime, SQLiteStore], Awaitable[None]]


def run(
    path: Path, scenario: Scenario, *rows: NotificationRow, kind: type[SQLiteStore] = SQLiteStore
) -> None:
    """``scenario`` on a runtime over a store at ``path`` holding ``rows``."""

    async def main() -> None:
        store = kind(path)
        runtime = Runtime(clock=Clock(), store=store, store_writer="thread")
        try:
            # Notifications belong to an account.
            account = AccountRow(id=3, name="ann", password_hash="", created=T0)
            await runtime.in_store_thread(lambda: store.commit([account, *rows]))
            await scenario(runtime, store)
        finally:
            await runtime.close_store()
            store.close()

    asyncio.run(asyncio.wait_for(main(), 30))


def test_delivery_end_to_end_over_the_loopback(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    async def scenario(runtime: Runtime, store: SQLiteStore) -> None:
        async with Receiver().serving() as receiver:
            policy = NotifyPolicy(poll=0.005)
            task = asyncio.create_task(run_notifier(runtime, store, receiver.url, Clock(T0 + 1), policy))
            while len(receiver.requests) < 2 or await runtime.in_store_thread(
                lambda: store.pending_notifications(T0 + 1, 10)
            ):
                await asyncio.sleep(0.005)
            await stop_notifier(task)
        first, second = row(1), row(2)
        assert sorted(receiver.keys) == [first.id, second.id]
        for line, headers, body in receiver.requests:
            assert line == "POST /push?key=webhook-secret HTTP/1.1"
            assert headers["content-type"] == "application/json"
            assert body == {first.id: first, second.id: second}[headers["idempotency-key"]].payload
            assert msgspec.json.decode(body)["id"] == headers["idempotency-key"]
        rows = await runtime.in_store_thread(lambda: stored(store))
        assert {(found.attempts, found.delivered) for found in rows.values()} == {(1, T0 + 1)}

    with caplog.at_level(logging.DEBUG, logger="parlour.notify"):
        run(tmp_path / "p.db", scenario, row(1), row(2))
    assert "webhook-secret" not in caplog.text and "/push" not in caplog.text
    assert "http://127.0.0.1:" in caplog.text and TOKEN not in caplog.text


def test_a_receiver_that_fails_twice_is_tried_again_with_backoff(tmp_path: Path) -> None:
    clock = Clock(T0)

    async def scenario(runtime: Runtime, store: SQLiteStore) -> None:
        async with Receiver([503, 500]).serving() as receiver:
            notifier = Notifier(runtime, store, receiver.url, clock, NotifyPolicy(retries=8, backoff=2.0))
            async with httpx.AsyncClient() as client:
                steps = [(T0, 1), (T0 + 1.9, 0), (T0 + 2, 1), (T0 + 5.9, 0), (T0 + 6, 1), (T0 + 100, 0)]
                seen: list[tuple[int, int]] = []
                for at, _ in steps:
                    clock.now = at
                    due = await notifier.deliver_due(client)
                    seen.append((due, len(receiver.requests)))
                    if at == T0:
                        found = (await runtime.in_store_thread(lambda: stored(store)))[row(1).id]
                        assert (found.attempts, found.next_attempt, found.delivered) == (1, T0 + 2, None)
            assert [due for due, _ in seen] == [due for _, due in steps]
            assert receiver.keys == [row(1).id] * 3  # the same id every time
            found = (await runtime.in_store_thread(lambda: stored(store)))[row(1).id]
            assert (found.attempts, found.delivered) == (3, T0 + 6)

    run(tmp_path / "p.db", scenario, row(1))


def test_a_crash_between_the_post_and_the_mark_sends_it_again_with_the_same_id(tmp_path: Path) -> None:
    class Crashing(Notifier):
        async def _write(self, rows: list[NotificationRow]) -> None:
            """The process dies after its POST, before it could record it."""

    path = tmp_path / "p.db"
    receiver = Receiver()

    async def first_run(runtime: Runtime, store: SQLiteStore) -> None:
        async with receiver.serving(), httpx.AsyncClient() as client:
            assert await Crashing(runtime, store, receiver.url, Clock(T0)).deliver_due(client) == 1

    async def second_run(runtime: Runtime, store: SQLiteStore) -> None:
        async with receiver.serving(), httpx.AsyncClient() as client:
            notifier = Notifier(runtime, store, receiver.url, Clock(T0 + 30))
            assert await notifier.deliver_due(client) == 1
            assert await notifier.deliver_due(client) == 0  # marked this time
        found = (await runtime.in_store_thread(lambda: stored(store)))[row(1).id]
        assert (found.attempts, found.delivered) == (1, T0 + 30)

    run(path, first_run, row(1))
    run(path, second_run)
    assert receiver.keys == [row(1).id, row(1).id]
    assert receiver.requests[0][2] == receiver.requests[1][2]


def test_while_the_store_cannot_mark_rows_they_are_sent_again_but_not_in_a_hot_loop(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    class Full(SQLiteStore):
        def commit(self, records: Sequence[Record]) -> None:
            if any(isinstance(record, NotificationRow) and record.attempts for record in records):
                raise StoreFailure("disk full")
            super().commit(records)

    class Stop(Exception):
        pass

    pauses: list[float] = []

    async def sleep(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) == 3:
            raise Stop

    async def scenario(runtime: Runtime, store: SQLiteStore) -> None:
        async with Receiver().serving() as receiver:
            notifier = Notifier(runtime, store, receiver.url, Clock(T0), NotifyPolicy(batch=1, poll=0.5))
            with pytest.raises(Stop):
                await notifier.run(sleep=sleep)
        assert receiver.keys == [row(1).id] * 3 and pauses == [0.5] * 3

    with caplog.at_level(logging.WARNING, logger="parlour.notify"):
        run(tmp_path / "p.db", scenario, row(1), kind=Full)
    assert [record.getMessage() for record in caplog.records] == [
        "push notifications: cannot record the push notifications sent: disk full"
    ]


def test_giving_up_after_the_retries(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock(T0)

    async def scenario(runtime: Runtime, store: SQLiteStore) -> None:
        async with Receiver([500] * 10 + [400]).serving() as receiver:
            policy = NotifyPolicy(retries=2, backoff=1.0, max_backoff=1.5)
            notifier = Notifier(runtime, store, receiver.url, clock, policy)
            async with httpx.AsyncClient() as client:
                for step in range(6):
                    clock.now = T0 + 10 * step  # every attempt is due, as long as it is not given up
                    await notifier.deliver_due(client)
            assert receiver.keys == [row(1).id] * 3  # 1 + 2 retries
            found = (await runtime.in_store_thread(lambda: stored(store)))[row(1).id]
            assert (found.attempts, found.next_attempt, found.delivered) == (3, GIVEN_UP, None)
            assert await runtime.in_store_thread(lambda: store.pending_notifications(GIVEN_UP - 1, 10)) == []

    with caplog.at_level(logging.DEBUG, logger="parlour.notify"):
        run(tmp_path / "p.db", scenario, row(1))
    warnings = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "given up after 3 attempts: HTTP 500" in warnings[0].getMessage()
    assert TOKEN not in caplog.text and "YOUR_TURN" not in caplog.text


def test_a_refusal_gives_up_at_once_and_a_network_error_is_tried_again(tmp_path: Path) -> None:
    clock = Clock(T0)

    async def scenario(runtime: Runtime, store: SQLiteStore) -> None:
        async with Receiver([400]).serving() as receiver, httpx.AsyncClient() as client:
            await Notifier(runtime, store, receiver.url, clock).deliver_due(client)
        # Nothing listens on the receiver's port once it is closed.
        clock.now = T0 + 1
        async with httpx.AsyncClient() as client:
            await Notifier(runtime, store, receiver.url, clock).deliver_due(client)
        rows = await runtime.in_store_thread(lambda: stored(store))
        refused, unreachable = rows[row(1).id], rows[row(2).id]
        assert (refused.attempts, refused.next_attempt) == (1, GIVEN_UP)
        assert (unreachable.attempts, unreachable.next_attempt, unreachable.delivered) == (2, T0 + 5, None)
        assert receiver.keys == [row(1).id]

    # Row 2 (tried once already) becomes due only once the receiver is gone: its connection is
    # refused, a failure like any other (the second: 4 s until the next attempt).
    unreachable = msgspec.structs.replace(row(2), attempts=1, next_attempt=T0 + 1)
    run(tmp_path / "p.db", scenario, row(1), unreachable)


def test_the_policy_and_the_logged_url() -> None:
    policy = NotifyPolicy(backoff=2.0, max_backoff=3600.0)
    assert [policy.delay(attempts) for attempts in (1, 2, 3, 4)] == [2.0, 4.0, 8.0, 16.0]
    assert policy.delay(12) == 3600.0 and policy.delay(10_000) == 3600.0
    assert redacted("https://user:pw@hooks.example:8443/p/x?key=s") == "https://hooks.example:8443/..."
    assert redacted("http://hooks.example/p") == "http://hooks.example/..."


def test_settings_and_when_the_notifier_starts(tmp_path: Path) -> None:
    assert Settings().notify_webhook_url == ""
    assert (Settings().notify_retries, Settings().notify_backoff) == (8, 2.0)
    for bad in (
        {"notify_webhook_url": "ftp://hooks.example/"},
        {"notify_webhook_url": "hooks.example"},
        {"notify_backoff": 0.0},
        {"notify_poll": 0.0},
        {"notify_batch": 0},
        {"notify_retries": -1},
    ):
        with pytest.raises(SettingError) as refused:
            Settings(**bad)
        assert "hooks.example" not in str(refused.value)
    assert "secret" not in repr(Settings(notify_webhook_url="https://hooks.example/?k=secret"))

    async def scenario(runtime: Runtime, store: SQLiteStore) -> None:
        with_url = Settings(notify_webhook_url="http://127.0.0.1:9/", notify_poll=0.01)
        assert start_notifier(runtime, store, Settings()) is None
        assert start_notifier(runtime, None, with_url) is None  # no store, no outbox
        task = start_notifier(runtime, store, with_url)
        assert task is not None
        await asyncio.sleep(0.02)
        await stop_notifier(task)
        assert task.cancelled()

    run(tmp_path / "p.db", scenario)
