"""The owners of the /async social side's state (docs/async-decisions.md S14-S16): buddy and ignore
lists, chat history and moderation, presence monitoring, statistics subscriptions and push devices.
One of each per service, made with the hub (hub.py) and passed to the handlers through it; the
requests are those of players/: chat.py's, presence.py's, social.py's and devices.py's.

These classes hold data and keep their own invariants (both directions of a relation, the
history's length, a connection's monitoring ended in one call); they send nothing and store
nothing: their callers turn what they return into messages and records.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Final, Literal

import msgspec

from parlour.protocols.async_ws.state.profanity import ProfanityFilter, default_filter
from parlour.protocols.async_ws.wire.messages import PresenceUpdate
from parlour.storage import ChatRow, DeviceGone, DeviceRow, RelationRow, ReportRow

__all__ = [
    "BLOCKS_TO_MUTE",
    "BLOCK_WINDOW",
    "HISTORY",
    "MAX_DEVICES",
    "MUTE_SECONDS",
    "REFUSED",
    "REPORT_COOLDOWN",
    "ChatLog",
    "Devices",
    "Kind",
    "Presence",
    "Relations",
    "Statistics",
]

#: S14: the chat history of a scope is its last 50 public lines.
HISTORY: Final = 50
#: S14: three blocked lines within ten minutes mute the sender for five.
BLOCKS_TO_MUTE: Final = 3
BLOCK_WINDOW: Final = 600.0
MUTE_SECONDS: Final = 300.0
#: S14: one report a minute per reporter.
REPORT_COOLDOWN: Final = 60.0
#: The most devices one account keeps: a sign-in with one more unlinks the one linked longest
#: ago, so that a client signing in with ever new tokens cannot grow the table without bound.
MAX_DEVICES: Final = 16
#: Refused device types, with why (the text's note: Google no longer runs GCM).
REFUSED: Final = {"GCM": "GCM is no longer supported; use FCM"}

Kind = Literal["buddy", "ignore"]


class Relations:
    """Buddy and ignore lists: owner -> other -> when added, one-way; and who ignores each
    player (a lobby line skips them without reading every member's list)."""

    __slots__ = ("_buddies", "_ignored", "_ignorers")

    def __init__(self) -> None:
        self._buddies: dict[int, dict[int, float]] = {}
        self._ignored: dict[int, dict[int, float]] = {}
        self._ignorers: dict[int, set[int]] = {}

    def is_buddy(self, owner: int, other: int) -> bool:
        return other in self._buddies.get(owner, ())

    def is_ignored(self, ignorer: int, other: int) -> bool:
        return other in self._ignored.get(ignorer, ())

    def ignorers(self, player_id: int) -> Collection[int]:
        return self._ignorers.get(player_id, ())

    def listed(self, kind: str, owner: int) -> Mapping[int, float]:
        """``owner``'s ``kind`` list: other -> when added."""
        return self._table(kind).get(owner, {})

    def _table(self, kind: str) -> dict[int, dict[int, float]]:
        return self._buddies if kind == "buddy" else self._ignored

    def add(self, kind: str, owner: int, other: int, added: float) -> None:
        self._table(kind).setdefault(owner, {})[other] = added
        if kind == "ignore":
            self._ignorers.setdefault(other, set()).add(owner)

    def remove(self, kind: str, owner: int, other: int) -> None:
        table = self._table(kind)
        entries = table.get(owner, {})
        entries.pop(other, None)
        if not entries:
            table.pop(owner, None)
        if kind == "ignore":
            ignorers = self._ignorers.get(other, set())
            ignorers.discard(owner)
            if not ignorers:
                self._ignorers.pop(other, None)

    def restore(self, rows: Iterable[RelationRow]) -> None:
        for row in rows:
            self.add(row.kind, row.owner, row.other, row.added)

    def reload(self, stored: Mapping[tuple[int, int, str], RelationRow | None]) -> None:
        """The relations a failed commit touched, as the store holds them."""
        for (owner, other, kind), row in stored.items():
            if row is None:
                self.remove(kind, owner, other)
            else:
                self.add(kind, owner, other, row.added)


class ChatLog:
    """Each scope's last HISTORY public lines and next line number; blocked lines, mutes and
    report cooldowns; the profanity filter."""

    __slots__ = ("_blocks", "_history", "_muted_until", "_next_seq", "_reported", "cleaned", "words")

    def __init__(self) -> None:
        self._history: dict[int, deque[ChatRow]] = {}
        self._next_seq: dict[int, int] = {}
        #: When each player's lines were last blocked (within BLOCK_WINDOW), and mutes' ends.
        self._blocks: dict[int, deque[float]] = {}
        self._muted_until: dict[int, float] = {}
        #: Each reporter's last report.
        self._reported: dict[int, float] = {}
        self.words: ProfanityFilter = default_filter()
        self.cleaned = -math.inf

    def history(self, scope: int) -> Sequence[ChatRow]:
        return self._history.get(scope, ())

    def rename_sender(self, sender: int, name: str) -> None:
        """A deleted account's lines kept for the history are signed ``name`` from now on."""
        for scope, lines in self._history.items():
            if any(row.sender == sender for row in lines):
                self._history[scope] = deque(
                    (
                        msgspec.structs.replace(row, sender_name=name) if row.sender == sender else row
                        for row in lines
                    ),
                    maxlen=lines.maxlen,
                )

    def next_seq(self, scope: int) -> int:
        """The number of the scope's next line, taken."""
        seq = self._next_seq.get(scope, 1)
        self._next_seq[scope] = seq + 1
        return seq

    def keep(self, row: ChatRow) -> None:
        self._history.setdefault(row.scope, deque(maxlen=HISTORY)).append(row)

    def muted(self, player_id: int, now: float) -> bool:
        until = self._muted_until.get(player_id)
        return until is not None and now < until

    def blocked(self, player_id: int, now: float) -> str | None:
        """A line of ``player_id`` was blocked. If that mutes it (the BLOCKS_TO_MUTE-th within
        BLOCK_WINDOW), the mutes in force as JSON, to store; else None."""
        times = self._blocks.setdefault(player_id, deque())
        times.append(now)
        while times and times[0] <= now - BLOCK_WINDOW:
            times.popleft()
        if len(times) < BLOCKS_TO_MUTE:
            return None
        self._muted_until[player_id] = now + MUTE_SECONDS
        del self._blocks[player_id]  # a mute served starts a clean slate
        mutes = {str(player): until for player, until in self._muted_until.items() if until > now}
        return msgspec.json.encode(mutes).decode()

    def mute(self, player_id: int, until: float, now: float) -> str:
        """An admin mutes ``player_id`` until ``until`` (at or before ``now``: unmutes it); the
        mutes in force as JSON, to store (as ``blocked`` returns them)."""
        if until > now:
            self._muted_until[player_id] = until
        else:
            self._muted_until.pop(player_id, None)
        mutes = {str(player): end for player, end in self._muted_until.items() if end > now}
        return msgspec.json.encode(mutes).decode()

    def muted_until(self, player_id: int, now: float) -> float | None:
        """When ``player_id``'s mute ends, if one is in force."""
        until = self._muted_until.get(player_id)
        return until if until is not None and until > now else None

    def report_wait(self, player_id: int, now: float) -> float | None:
        """Seconds before ``player_id`` may report again, or None if it may now."""
        last = self._reported.get(player_id)
        if last is not None and now - last < REPORT_COOLDOWN:
            return REPORT_COOLDOWN - (now - last)
        return None

    def reported(self, player_id: int, now: float) -> None:
        self._reported[player_id] = now

    def clean(self, now: float, closed: Callable[[int], bool]) -> None:
        """Forget expired mutes, old blocks and cooldowns, and the history of ``closed`` scopes
        (their lines stay stored; their next line number stays, so none is given twice)."""
        for player_id in [p for p, until in self._muted_until.items() if until <= now]:
            del self._muted_until[player_id]
        for player_id in [p for p, times in self._blocks.items() if times[-1] <= now - BLOCK_WINDOW]:
            del self._blocks[player_id]
        for player_id in [p for p, at in self._reported.items() if now - at >= REPORT_COOLDOWN]:
            del self._reported[player_id]
        for scope in [scope for scope in self._history if closed(scope)]:
            del self._history[scope]

    def restore(
        self, chat: Mapping[int, list[ChatRow]], mutes: str | None, reports: Iterable[ReportRow], now: float
    ) -> None:
        """After a restart: the scopes' last lines, the mutes in force and the cooldowns."""
        if mutes:
            try:
                stored = msgspec.json.decode(mutes, type=dict[int, float])
            except msgspec.DecodeError:
                stored = {}  # unreadable: nobody is kept muted (mutes last minutes)
            self._muted_until.update({player: until for player, until in stored.items() if until > now})
        for report in reports:
            if now - report.at < REPORT_COOLDOWN:
                self._reported[report.reporter] = max(
                    report.at, self._reported.get(report.reporter, report.at)
                )
        for scope, rows in chat.items():
            if not rows:
                continue
            self._history[scope] = deque(rows[-HISTORY:], maxlen=HISTORY)
            self._next_seq[scope] = max(self._next_seq.get(scope, 1), max(row.seq for row in rows) + 1)

    def reload(self, chat: Mapping[int, list[ChatRow]], records: Iterable[object]) -> None:
        """After a failed commit: the scopes it touched as stored, its reports' cooldowns lifted."""
        for scope, rows in chat.items():
            self._history[scope] = deque(rows[-HISTORY:], maxlen=HISTORY)
            self._next_seq[scope] = max((row.seq for row in rows), default=0) + 1
        for record in records:
            if isinstance(record, ReportRow) and self._reported.get(record.reporter) == record.at:
                del self._reported[record.reporter]


class Presence:
    """What belongs to each signed-in connection about presence (S15): the game its UI switched
    to, whom it monitors (both ways), whether it subscribed, and what each subscriber is due and
    was last told."""

    __slots__ = ("_monitoring", "_pending", "_pushed", "_subscribed", "_switched", "_told", "_watchers")

    def __init__(self) -> None:
        self._switched: dict[int, int] = {}
        self._monitoring: dict[int, set[int]] = {}
        self._watchers: dict[int, set[int]] = {}
        self._subscribed: set[int] = set()
        #: The monitored players whose presence may have changed since each subscriber's batch.
        self._pending: dict[int, set[int]] = {}
        self._told: dict[int, dict[int, PresenceUpdate]] = {}
        self._pushed: dict[int, float] = {}

    def switched(self, player_id: int) -> int | None:
        """The game ``player_id``'s UI is in, if any."""
        return self._switched.get(player_id)

    def switch(self, player_id: int, game_id: int | None) -> None:
        if game_id is None:
            self._switched.pop(player_id, None)
        else:
            self._switched[player_id] = game_id

    def changed(self, player_id: int) -> None:
        """``player_id``'s presence may have changed: its subscribed watchers' next batch says."""
        for watcher in self._watchers.get(player_id, ()):
            if watcher in self._subscribed:
                self._pending.setdefault(watcher, set()).add(player_id)

    def forget(self, player_id: int) -> int | None:
        """End what belonged to ``player_id``'s connection; the game it had switched to."""
        for monitored in self._monitoring.pop(player_id, ()):
            watchers = self._watchers.get(monitored)
            if watchers is not None:
                watchers.discard(player_id)
                if not watchers:
                    del self._watchers[monitored]
        self._subscribed.discard(player_id)
        self._pending.pop(player_id, None)
        self._told.pop(player_id, None)
        self._pushed.pop(player_id, None)
        return self._switched.pop(player_id, None)

    def monitor(self, player_id: int, wanted: set[int]) -> None:
        """``player_id`` now monitors ``wanted`` (replacing the set)."""
        before = self._monitoring.get(player_id, set())
        for gone in before - wanted:
            watchers = self._watchers[gone]
            watchers.discard(player_id)
            if not watchers:
                del self._watchers[gone]
            self._told.get(player_id, {}).pop(gone, None)
            self._pending.get(player_id, set()).discard(gone)
        for new in wanted - before:
            self._watchers.setdefault(new, set()).add(player_id)
            if player_id in self._subscribed:
                self._pending.setdefault(player_id, set()).add(new)
        if wanted:
            self._monitoring[player_id] = wanted
        else:
            self._monitoring.pop(player_id, None)

    def subscribe(self, player_id: int) -> None:
        """Start the stream: the monitored players' presence goes in the next batch."""
        if player_id in self._subscribed:
            return
        self._subscribed.add(player_id)
        self._told[player_id] = {}
        monitored = self._monitoring.get(player_id)
        if monitored:
            self._pending[player_id] = set(monitored)

    def unsubscribe(self, player_id: int) -> None:
        self._subscribed.discard(player_id)
        self._pending.pop(player_id, None)
        self._told.pop(player_id, None)

    def batches(
        self, now: float, interval: float, presence: Callable[[int], PresenceUpdate]
    ) -> list[tuple[int, list[PresenceUpdate]]]:
        """Each due subscriber's batch (at most every ``interval``): the monitored players whose
        ``presence`` differs from what it was last told, who are now told."""
        batches = []
        for watcher in list(self._pending):
            if now - self._pushed.get(watcher, -math.inf) < interval:
                continue
            told = self._told.setdefault(watcher, {})
            updates = []
            for other in sorted(self._pending.pop(watcher)):
                update = presence(other)
                if told.get(other) != update:
                    told[other] = update
                    updates.append(update)
            if updates:
                self._pushed[watcher] = now
                batches.append((watcher, updates))
        return batches


Figures = tuple[int, int, int]


class Statistics:
    """Subscribers to the server statistics: what each was last sent, and when."""

    __slots__ = ("_subscribers",)

    def __init__(self) -> None:
        self._subscribers: dict[int, tuple[Figures, float]] = {}

    def subscribe(self, player_id: int, figures: Figures, now: float) -> None:
        self._subscribers[player_id] = (figures, now)

    def unsubscribe(self, player_id: int) -> None:
        self._subscribers.pop(player_id, None)

    def due(self, now: float, interval: float) -> list[int]:
        return [player_id for player_id, (_, sent) in self._subscribers.items() if now - sent >= interval]

    def outdated(self, due: list[int], figures: Figures, now: float) -> list[int]:
        """Those of ``due`` who were sent other figures; from now on they have these."""
        stale = [player_id for player_id in due if self._subscribers[player_id][0] != figures]
        for player_id in stale:
            self._subscribers[player_id] = (figures, now)
        return stale


#: (device type, token) -> when it was linked.
_Links = dict[tuple[str, str], float]


class Devices:
    """Push devices linked to accounts (S16), each with when it was linked."""

    __slots__ = ("_by_account",)

    def __init__(self) -> None:
        self._by_account: dict[int, _Links] = {}

    def linked(self, player_id: int) -> list[tuple[str, str]]:
        """The (device type, token) of every device linked to an account, oldest link first."""
        links = self._by_account.get(player_id, {})
        return sorted(links, key=lambda key: links[key])

    def link(self, player_id: int, device_type: str, token: str, now: float) -> list[DeviceRow | DeviceGone]:
        """Link a device (the oldest unlinked past MAX_DEVICES); the records to store, none if
        it was linked already."""
        links = self._by_account.setdefault(player_id, {})
        key = (device_type, token)
        if key in links:
            return []
        records: list[DeviceRow | DeviceGone] = []
        while len(links) >= MAX_DEVICES:
            oldest = min(links, key=lambda other: links[other])
            del links[oldest]
            records.append(DeviceGone(account_id=player_id, device_type=oldest[0], token=oldest[1]))
        links[key] = now
        records.append(DeviceRow(account_id=player_id, device_type=device_type, token=token, linked=now))
        return records

    def unlink(self, player_id: int, device_type: str, token: str) -> None:
        links = self._by_account.get(player_id)
        if links is not None:
            links.pop((device_type, token), None)
            if not links:
                del self._by_account[player_id]

    def restore(self, rows: Iterable[DeviceRow]) -> None:
        """The links the store holds, before any connection (S10)."""
        for row in rows:
            if row.device_type not in REFUSED:
                self._by_account.setdefault(row.account_id, {})[(row.device_type, row.token)] = row.linked

    def reload(self, stored: Mapping[tuple[int, str, str], DeviceRow | None]) -> None:
        """After a failed commit: the links it touched as the store holds them."""
        for (account_id, device_type, token), row in stored.items():
            links = self._by_account.setdefault(account_id, {})
            if row is None:
                links.pop((device_type, token), None)
            else:
                links[device_type, token] = row.linked
            if not links:
                del self._by_account[account_id]
