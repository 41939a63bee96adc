"""A commit whose answer is lost (the connection dropped during COMMIT, the store gone for a
while) is resolved by reading the store back before anyone is told anything: the runtime's
commit mark says whether it was stored. Stored: it is shown as if committed, and what was held
meanwhile goes on to the store. Not stored: each request is refused once, with its own answer.
A real SQLite store whose commits and reads fail on demand stands for a database server."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from parlour.core.effects import ConnId, Effect, Send, Store
from parlour.storage import Record, StoreFailure
from parlour.storage.sqlite import SQLiteStore
from parlour.transport.runtime import Runtime
from tests.storage.rows import account
from tests.transport.wire import Wire


class Flaky(SQLiteStore):
    """A store whose server goes away when told: a commit then fails after it was written
    (``lose_answer``) or before (``refuse``), and reads fail while ``reachable`` is clear."""

    lose_answer = False
    refuse = False

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.reachable = threading.Event()
        self.reachable.set()
        self.failed_reads = 0

    def process_writer(self) -> tuple[str, str] | None:
        return None  # commits on this process's store thread, where the faults are

    def commit(self, records: Sequence[Record]) -> None:
        if self.refuse:
            raise StoreFailure(f"{self.location}: connection refused")
        super().commit(records)
        if self.lose_answer:
            raise StoreFailure(f"{self.location}: server closed the connection unexpectedly")

    def meta(self, key: str) -> str | None:
        if not self.reachable.is_set():
            self.failed_reads += 1
            raise StoreFailure(f"{self.location}: connection refused")
        return super().meta(key)

    def settled_meta(self, key: str) -> str | None:
        if not self.reachable.is_set():
            self.failed_reads += 1
            raise StoreFailure(f"{self.location}: connection refused")
        return super().settled_meta(key)


class Service:
    """Records what it is told after a refusal, and the refusals its requests get."""

    def __init__(self) -> None:
        self.told: list[tuple[list[Record], list[ConnId], Any]] = []
        self.refused: list[tuple[str, bool]] = []

    def reload(self, records: list[Record], store: Any) -> str:
        return "read back"

    def store_failed(
        self, records: list[Record], origins: list[ConnId], reload: Any, now: float
    ) -> list[Effect]:
        self.told.append((records, origins, reload))
        return [Send(conn, b"nothing changed") for conn in origins]

    def request(self, conn: ConnId, number: int, *shown: Effect) -> list[Effect]:
        """A request of ``conn`` storing account ``number``: its own refusal, then ``shown``."""

        def refused(confirmed: bool) -> None:
            self.refused.append((f"request {number}", confirmed))

        return [Store([account(number)], refused), *shown]

    def read(self, conn: ConnId, name: str, *shown: Effect) -> list[Effect]:
        """A request of ``conn`` that stores nothing: its refusal alone, in a Store without
        records, then ``shown``."""

        def refused(confirmed: bool) -> None:
            self.refused.append((name, confirmed))

        return [Store([], refused), *shown]


async def until(condition: Any, what: str) -> None:
    """Until ``condition()`` holds (the store thread's retries take a few milliseconds)."""
    for _ in range(2000):
        if condition():
            return
        await asyncio.sleep(0.001)
    raise AssertionError(f"never: {what}")


async def setup(tmp_path: Path) -> tuple[Flaky, Runtime, Wire, Service]:
    store = Flaky(tmp_path / "flaky.db")
    runtime = Runtime(store=store, store_writer="thread")
    runtime.resolve_backoff = (0.001, 0.004)
    wire = Wire(runtime)
    for conn in (1, 2):
        wire.add(conn, framed=False)
    return store, runtime, wire, Service()


def shown(wire: Wire, conn: ConnId) -> list[bytes]:
    return [chunk for write in wire.writes[conn] for chunk in write]


def test_a_commit_stored_but_unconfirmed_is_shown_once_the_store_answers(tmp_path: Path) -> None:
    async def scenario() -> None:
        store, runtime, wire, service = await setup(tmp_path)
        store.lose_answer = True
        store.reachable.clear()
        runtime.execute(
            service.request(1, 1, Send(1, b"ack 1"), Send(2, b"your turn")),
            service,  # type: ignore[arg-type]
            1,
        )
        await until(lambda: store.failed_reads >= 3, "the store was asked for the outcome")
        store.lose_answer = False
        # Commits pause: a request made meanwhile is held, nothing is shown.
        runtime.execute(service.request(2, 2, Send(2, b"ack 2")), service, 2)  # type: ignore[arg-type]
        await wire.settle()
        assert shown(wire, 1) == shown(wire, 2) == []
        assert runtime.store_status == "failing"

        store.reachable.set()
        await runtime.drain_store(10)
        await wire.settle()
        # The first was stored: its ack and the other seat's turn, then the second's ack.
        assert shown(wire, 1) == [b"ack 1"]
        assert shown(wire, 2) == [b"your turn", b"ack 2"]
        assert service.refused == [] and service.told == []
        assert [row.id for row in store.accounts()] == [1, 2]
        assert runtime.store_status == "ok"
        wire.stop()
        await runtime.close_store()

    asyncio.run(scenario())


def test_a_commit_not_stored_is_refused_once_with_the_requests_own_answer(tmp_path: Path) -> None:
    async def scenario() -> None:
        store, runtime, wire, service = await setup(tmp_path)
        runtime.execute(service.request(1, 1, Send(1, b"ack 1")), service, 1)  # type: ignore[arg-type]
        await runtime.drain_store(10)
        store.refuse = True
        store.reachable.clear()
        runtime.execute(
            service.request(1, 2, Send(1, b"ack 2"), Send(2, b"your turn")),
            service,  # type: ignore[arg-type]
            1,
        )
        await until(lambda: store.failed_reads >= 3, "the store was asked for the outcome")
        store.refuse = False
        # Held meanwhile, built on what was not stored: refused too (an input of conn 2
        # without an answer of its own is among store_failed's connections).
        runtime.execute([Store([account(3)]), Send(2, b"ack 3")], service, 2)  # type: ignore[arg-type]
        store.reachable.set()
        await runtime.drain_store(10)
        await wire.settle()
        assert shown(wire, 1) == [b"ack 1"]
        assert shown(wire, 2) == [b"nothing changed"]
        assert service.refused == [("request 2", True)]
        assert service.told == [([account(2), account(3)], [2], "read back")]
        assert [row.id for row in store.accounts()] == [1]
        # The store works again: the next commit goes through.
        runtime.execute(service.request(1, 4, Send(1, b"ack 4")), service, 1)  # type: ignore[arg-type]
        await runtime.drain_store(10)
        await wire.settle()
        assert shown(wire, 1) == [b"ack 1", b"ack 4"]
        wire.stop()
        await runtime.close_store()

    asyncio.run(scenario())


def test_a_store_that_never_answers_leaves_the_outcome_unknown(tmp_path: Path) -> None:
    async def scenario() -> None:
        store, runtime, wire, service = await setup(tmp_path)
        runtime.resolve_seconds = 0.05
        store.lose_answer = True
        store.reachable.clear()
        runtime.execute(service.request(1, 1, Send(1, b"ack 1")), service, 1)  # type: ignore[arg-type]
        await runtime.drain_store(10)
        await wire.settle()
        # Nobody can say: not acknowledged, and the refusal says it may have been saved.
        assert shown(wire, 1) == []
        assert service.refused == [("request 1", False)]
        store.lose_answer = False
        store.reachable.set()
        wire.stop()
        await runtime.close_store()

    asyncio.run(scenario())


class Reading(Service):
    """Says which records each read-back was for."""

    def reload(self, records: list[Record], store: Any) -> str:
        return "read back " + " ".join(str(getattr(record, "id", "?")) for record in records)


def test_what_was_held_while_a_refused_commit_was_resolved_is_read_back_too(tmp_path: Path) -> None:
    """An input held during the outage changed its service's memory on top of what was not
    stored: it is refused with the rest, and its service returns to the store for its records
    as well, not only for the failed commit's (else the refused change stays in memory, and a
    later commit stores what the client was told was not)."""

    async def scenario() -> None:
        store, runtime, wire, _ = await setup(tmp_path)
        service = Reading()
        store.refuse = True
        store.reachable.clear()
        runtime.execute(service.request(1, 2, Send(1, b"ack 2")), service, 1)  # type: ignore[arg-type]
        await until(lambda: store.failed_reads >= 3, "the store was asked for the outcome")
        store.refuse = False
        runtime.execute(service.request(2, 3, Send(2, b"ack 3")), service, 2)  # type: ignore[arg-type]
        store.reachable.set()
        await runtime.drain_store(10)
        await wire.settle()
        assert shown(wire, 1) == shown(wire, 2) == []
        assert service.refused == [("request 2", True), ("request 3", True)]
        assert [reload for _, _, reload in service.told] == ["read back 2 3"]
        assert store.accounts() == []
        wire.stop()
        await runtime.close_store()

    asyncio.run(scenario())


def test_a_request_without_records_is_shown_at_once_or_refused_with_its_own_answer(tmp_path: Path) -> None:
    """A Store without records carries only a request's answer to a refusal: nothing held, the
    request's effects are carried out at once (no batch, no commit); held behind a commit that
    fails, its sends are dropped and that answer is its one reply (its connection is not among
    store_failed's)."""

    async def scenario() -> None:
        store, runtime, wire, service = await setup(tmp_path)
        runtime.execute(service.read(2, "read 1", Send(2, b"report 1")), service, 2)  # type: ignore[arg-type]
        # Written in the same call: never held for a loop iteration, nothing committed.
        assert shown(wire, 2) == [b"report 1"]
        assert runtime._batch is None and runtime.transactions == 0
        store.refuse = True
        store.reachable.clear()
        runtime.execute(service.request(1, 1, Send(1, b"ack 1")), service, 1)  # type: ignore[arg-type]
        await until(lambda: store.failed_reads >= 3, "the store was asked for the outcome")
        store.refuse = False
        # Held behind the failing commit, built on what may not be stored.
        runtime.execute(service.read(2, "read 2", Send(2, b"report 2")), service, 2)  # type: ignore[arg-type]
        store.reachable.set()
        await runtime.drain_store(10)
        await wire.settle()
        assert shown(wire, 1) == [] and shown(wire, 2) == [b"report 1"]
        assert service.refused == [("request 1", True), ("read 2", True)]
        assert service.told == [([account(1)], [], "read back")]
        # The store works again: a read goes out at once once more.
        runtime.execute(service.read(2, "read 3", Send(2, b"report 3")), service, 2)  # type: ignore[arg-type]
        assert shown(wire, 2) == [b"report 1", b"report 3"]
        wire.stop()
        await runtime.close_store()

    asyncio.run(scenario())
