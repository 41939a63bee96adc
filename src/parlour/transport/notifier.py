"""Delivery of push notifications to a deployment's webhook (docs/async-decisions.md S16).

The /async service stores every notification it produces as a ``NotificationRow`` with the rest of
its input (protocols/async_ws/players/notify.py): the store's table is the outbox. This task reads
the rows that are due, on the store's thread, POSTs each one's payload as JSON to
``notify_webhook_url`` with the header ``Idempotency-Key: <id>``, and writes back what became of it,
on the store's thread again: delivered (any 2xx answer), or tried again later, after ``backoff``
seconds doubling at each failure up to ``max_backoff``. After ``1 + retries`` attempts (or an answer
that says a retry cannot help: a 4xx other than 408, 425 and 429) it gives up: the row is kept, with
its next attempt set far in the future, and one WARNING says so.

At least once: a row is marked only after its POST, so a crash (or a stop) in between sends it
again; the id is the same, so the receiver can drop the duplicate.

Without a store there is no outbox and this task is not started: notifications are produced and
dropped with the other records.

Tokens and payloads are never logged (a payload carries the device's token), nor the webhook's
URL beyond its scheme, host and port (it may carry a secret).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final, TypeVar

import httpx
import msgspec

from parlour.settings import Settings
from parlour.storage import Store, StoreFailure
from parlour.storage.records import NotificationRow
from parlour.transport.runtime import Runtime

__all__ = [
    "GIVEN_UP",
    "Notifier",
    "NotifyPolicy",
    "notify_policy",
    "redacted",
    "run_notifier",
    "start_notifier",
    "stop_notifier",
]

log = logging.getLogger("parlour.notify")

T = TypeVar("T")

#: The next attempt of a row given up on: 9999-12-31, never due, but a finite number every
#: backend and every export can hold.
GIVEN_UP: Final = 253_402_300_799.0
#: 4xx answers that may go better later; any other 4xx says the request itself is refused.
TRANSIENT_4XX: Final = frozenset({408, 425, 429})


@dataclass(frozen=True, slots=True)
class NotifyPolicy:
    """How hard to try (settings ``notify_retries``, ``notify_backoff``, ``notify_batch``,
    ``notify_poll``)."""

    #: Attempts after the first before giving up.
    retries: int = 8
    #: Seconds before the first retry, doubling at each failure, up to ``max_backoff``.
    backoff: float = 2.0
    max_backoff: float = 3600.0
    #: Rows read per pass, and how long to wait when fewer were due.
    batch: int = 100
    poll: float = 1.0
    #: Seconds a POST may take, and how many are on their way at once.
    timeout: float = 5.0
    concurrency: int = 8

    def delay(self, attempts: int) -> float:
        """Seconds before the next attempt after ``attempts`` failed ones (1 or more)."""
        return float(min(self.max_backoff, self.backoff * 2 ** min(attempts - 1, 62)))


def redacted(url: str) -> str:
    """The webhook's URL as it may be logged: scheme, host and port only."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return "(an invalid URL)"
    port = f":{parsed.port}" if parsed.port is not None else ""
    return f"{parsed.scheme}://{parsed.host}{port}/..."


class Notifier:
    """One pass at a time over the due rows: ``deliver_due``; ``run`` repeats it for ever."""

    def __init__(
        self,
        runtime: Runtime,
        store: Store,
        url: str,
        clock: Callable[[], float] | None = None,
        policy: NotifyPolicy | None = None,
    ) -> None:
        self.runtime = runtime
        self.store = store
        self.url = url
        self.clock = clock or runtime.clock
        self.policy = policy or NotifyPolicy()
        self._store_failing = False

    async def run(
        self,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        """Deliver what is due, then wait ``poll`` seconds when there was less than a batch
        (or the store fails)."""
        policy = self.policy
        async with httpx.AsyncClient(
            timeout=policy.timeout,
            transport=transport,
            limits=httpx.Limits(max_connections=policy.concurrency),
            follow_redirects=False,
        ) as client:
            while True:
                try:
                    done = await self.deliver_due(client)
                except Exception:  # a failing pass must not stop deliveries for good
                    log.exception("push notifications: a delivery pass failed")
                    done = 0
                # A full batch may mean more are due; not while the store fails, though: the
                # rows it could not mark would be sent again at once, over and over.
                if done < policy.batch or self._store_failing:
                    await sleep(policy.poll)

    async def deliver_due(self, client: httpx.AsyncClient) -> int:
        """POST every row due now (up to a batch) and store what became of each; how many rows
        were due."""
        policy, store = self.policy, self.store
        now = self.clock()
        try:
            rows = await self._in_store(lambda: store.pending_notifications(now, policy.batch))
        except StoreFailure as failure:
            self._failing("cannot read the pending push notifications", failure)
            return 0
        if not rows:
            return 0
        updated: list[NotificationRow] = []
        gate = asyncio.Semaphore(policy.concurrency)

        async def attempt(row: NotificationRow) -> None:
            async with gate:
                outcome = await self._post(client, row)
            updated.append(self._after(row, outcome))

        try:
            async with asyncio.TaskGroup() as group:
                for row in rows:
                    group.create_task(attempt(row))
        finally:
            # Also when stopped halfway: what was delivered is not sent again.
            if updated:
                await self._write(updated)
        return len(rows)

    async def _post(self, client: httpx.AsyncClient, row: NotificationRow) -> int | str:
        """The answer's status code, or the name of what went wrong on the way."""
        try:
            response = await client.post(
                self.url,
                content=row.payload,
                headers={"Content-Type": "application/json", "Idempotency-Key": row.id},
            )
        except httpx.HTTPError as error:
            return type(error).__name__
        return response.status_code

    def _after(self, row: NotificationRow, outcome: int | str) -> NotificationRow:
        now = self.clock()
        attempts = row.attempts + 1
        if isinstance(outcome, int) and 200 <= outcome < 300:
            return msgspec.structs.replace(row, attempts=attempts, delivered=now)
        reason = f"HTTP {outcome}" if isinstance(outcome, int) else outcome
        refused = isinstance(outcome, int) and 400 <= outcome < 500 and outcome not in TRANSIENT_4XX
        if refused or attempts > self.policy.retries:
            # The id and the device type only: the token and the payload stay out of logs.
            log.warning(
                "push notification %s (%s) given up after %d attempt%s: %s",
                row.id,
                row.device_type,
                attempts,
                "" if attempts == 1 else "s",
                reason,
            )
            return msgspec.structs.replace(row, attempts=attempts, next_attempt=GIVEN_UP)
        log.debug("push notification %s: attempt %d failed (%s)", row.id, attempts, reason)
        return msgspec.structs.replace(row, attempts=attempts, next_attempt=now + self.policy.delay(attempts))

    async def _in_store(self, work: Callable[[], T]) -> T:
        """``work`` on the store's thread, carried to its end even if this task is cancelled
        meanwhile (a stop): the store's thread must never be handed a cancelled future."""
        return await asyncio.shield(self.runtime.in_store_thread(work))

    async def _write(self, rows: list[NotificationRow]) -> None:
        store = self.store
        try:
            await self._in_store(lambda: store.commit(rows))
        except StoreFailure as failure:
            # Not marked: these are sent again (at least once), with the same ids.
            self._failing("cannot record the push notifications sent", failure)
            return
        if self._store_failing:
            self._store_failing = False
            log.info("push notifications: the store works again")

    def _failing(self, what: str, failure: StoreFailure) -> None:
        if not self._store_failing:
            self._store_failing = True
            log.warning("push notifications: %s: %s", what, failure)
        else:
            log.debug("push notifications: %s: %s", what, failure)


async def run_notifier(
    runtime: Runtime,
    store: Store,
    url: str,
    clock: Callable[[], float] | None = None,
    policy: NotifyPolicy | None = None,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> None:
    """Deliver the stored push notifications to ``url`` until cancelled (the composition root
    starts it when ``notify_webhook_url`` is set and there is a store)."""
    log.info("push notifications are POSTed to %s", redacted(url))
    await Notifier(runtime, store, url, clock, policy).run(transport, sleep)


def notify_policy(settings: Settings) -> NotifyPolicy:
    return NotifyPolicy(
        retries=settings.notify_retries,
        backoff=settings.notify_backoff,
        batch=settings.notify_batch,
        poll=settings.notify_poll,
    )


def start_notifier(runtime: Runtime, store: Store | None, settings: Settings) -> asyncio.Task[None] | None:
    """The notifier's task, when ``notify_webhook_url`` is set and there is a store (the outbox)."""
    if not settings.notify_webhook_url:
        return None
    if store is None:
        log.warning(
            "notify_webhook_url is set but there is no store (no outbox): no push notification is sent"
        )
        return None
    return asyncio.create_task(
        run_notifier(runtime, store, settings.notify_webhook_url, policy=notify_policy(settings)),
        name="parlour-notifier",
    )


async def stop_notifier(task: asyncio.Task[None] | None) -> None:
    """Cancel the notifier and wait until it has recorded what it delivered (before the store
    closes)."""
    if task is None:
        return
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
