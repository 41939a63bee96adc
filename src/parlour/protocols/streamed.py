"""What the TCP line protocols (Fish, Tsuro) share: a JSON stream per connection, messages
decoded one by one, and a protocol violation ending in the sender's removal."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from random import Random
from typing import Any

import msgspec

from parlour.core.durable import encode_options
from parlour.core.effects import Close, ConnId, Effect, Send, Store, Think
from parlour.core.ids import IdSource, new_time_id
from parlour.core.ledger import Ledger
from parlour.core.ratelimit import TokenBucket
from parlour.games.base import GamePlugin, Robot
from parlour.protocols.jsonstream import JsonStream, StreamError
from parlour.robots.think import decide_pickled, frozen
from parlour.settings import Settings
from parlour.storage import Store as StoreBackend
from parlour.storage.records import LIVE_STATES, MOVE, GameRow, MoveRow, Record, SeatRow, Snapshot

__all__ = ["StreamedService", "Table", "TableLog", "Violation", "aborted_tables"]


class Violation(ValueError):
    """A message the protocol does not accept; the text says why (it may reach the client)."""


def aborted_tables(snapshot: Snapshot, protocols: tuple[str, ...], now: float) -> list[GameRow]:
    """The tables of these protocols that a previous run left in progress, as ABORTED: their
    connections are gone, and the protocols have no way back to a table."""
    result = {"reason": "ABORTED", "comment": "the server stopped during the game"}
    return [
        msgspec.structs.replace(row, state="ABORTED", finished=now, result=result)
        for row in snapshot.games
        if row.protocol in protocols and row.state in LIVE_STATES
    ]


@dataclass(slots=True, eq=False)
class TableLog:
    """What the store keeps of a table from its start: its id, its random source's seed (the
    deal or the board and every draw come from it alone), and how many moves it has stored."""

    id: str = ""
    seed: int = 0
    rng: Random = field(default_factory=Random)
    started: float = 0.0
    options: dict[str, Any] = field(default_factory=dict)
    moves: int = 0


@dataclass(slots=True, eq=False)
class Table:
    """A table of a TCP protocol: seats (the protocol's own kind), the rules state once started."""

    number: int
    opened: float
    seats: list[Any] = field(default_factory=list)
    state: Any = None
    deadline: float | None = None
    over: bool = False
    #: From the start: what the store keeps, and how the table stands there.
    log: TableLog | None = None
    status: str = "PLAYING"
    result: dict[str, Any] | None = None
    finished: float | None = None
    last_active: float = 0.0
    #: The position (moves played) a robot's decision is being made for away from the event
    #: loop (a Think effect); None: nobody is thinking.
    thinking: int | None = None


class StreamedService:
    """Base of the table services: subclasses decode messages, handle them, and refuse senders.

    Tables are stored from their start (configuration, seats, seed), then move by move, then
    with their result; Fish and Tsuro connections cannot survive a restart (the protocols have
    no reconnect), so a table that was in progress when the server stopped is stored as ABORTED.
    """

    #: The protocol's (and its rules plugin's) name, as stored.
    protocol = ""
    #: The rules: the legal moves a robot chooses among.
    plugin: GamePlugin[Any, Any, Any]

    def __init__(
        self,
        settings: Settings,
        rng: Random | None = None,
        ledger: Ledger | None = None,
        ids: IdSource | None = None,
    ) -> None:
        self.settings = settings
        #: For robots; a table's id and seed come from ``ids`` (parlour.core.ids: secrets).
        self.rng = rng if rng is not None else Random()
        self.ids = ids if ids is not None else IdSource()
        #: Tables count as games in progress, with the server's other games (shared limit).
        self.ledger = ledger if ledger is not None else Ledger(settings.max_in_progress_games)
        self.streams: dict[ConnId, JsonStream] = {}
        #: Each connection's request rate (``requests_per_second`` messages, bursts of twice
        #: that): past it the sender is refused the protocol's way.
        self.buckets: dict[ConnId, TokenBucket] = {}
        self._out: list[Effect] = []
        #: Where each seated connection sits; the tables open or playing; the one filling up.
        self.seated: dict[ConnId, tuple[Table, int]] = {}
        self.tables: list[Table] = []
        self.open: Table | None = None
        self.recording = False
        self._records: list[Record] = []
        self._dirty: dict[str, Table] = {}
        #: Senders refused by what they sent: "MALFORMED" (not JSON, too large) or "VIOLATION"
        #: (a message the protocol does not accept now), read by /metrics (parlour.metrics).
        self.failures: dict[str, int] = {}
        #: Whether slow robots (``slow = True``: the hard levels, searches) decide away from the
        #: event loop: Think effects, answered through ``thought``. Set by the composition root,
        #: whose runtime runs them; otherwise (tests driving the service) every robot moves at once.
        self.offload = False

    # -----------------------------------------------------------------------------------------
    # Durability

    def _begin(self, options: dict[str, Any], now: float) -> TableLog:
        """A table starts: its own random source, seeded from the service's."""
        seed = self.ids.bits(63)
        return TableLog(new_time_id(self.ids, now), seed, Random(seed), now, options)

    def _save(self, table: Table, now: float) -> None:
        table.last_active = now
        if self.recording and table.log is not None:
            self._dirty[table.log.id] = table

    def _moved(self, table: Table, seat: int, choice: int, now: float, kind: str = MOVE) -> None:
        log = table.log
        assert log is not None
        if self.recording:  # one row: the table's own is written at its start and its end
            self._records.append(MoveRow(log.id, log.moves, seat, kind, choice, now))
        log.moves += 1
        table.last_active = now

    def _ended(self, table: Table, status: str, now: float, **result: Any) -> None:
        table.status, table.finished, table.result = status, now, result
        self._save(table, now)

    def seat_row(self, seat: Any) -> SeatRow:
        raise NotImplementedError

    # -----------------------------------------------------------------------------------------
    # Robots

    def _play(self, table: Table, seat: int, choice: int, move: Any, now: float) -> None:
        """Apply ``move``, the ``choice``-th legal move of ``seat``, and record it."""
        raise NotImplementedError

    def _turns(self, table: Table, now: float) -> None:
        """Announce each turn and play the robots' until a human must move or the game ends."""
        raise NotImplementedError

    def _robot_plays(self, table: Table, seat: int, robot: Robot[Any, Any], now: float) -> bool:
        """The robot of ``seat`` moves now (True), or its decision is asked of the robots'
        process (False: the table waits for ``thought``; a slow robot would hold up every other
        table and connection of the server while it thinks)."""
        if self.offload and getattr(robot, "slow", False):
            self._think(table, seat, robot)
            return False
        moves = self.plugin.legal_moves(table.state, seat)
        move = robot.choose(table.state, seat, moves, self.rng)
        self._play(table, seat, list(moves).index(move), move, now)
        return True

    def _think(self, table: Table, seat: int, robot: Robot[Any, Any]) -> None:
        """A Think for the table's position, unless one is on its way already: on a copy of the
        position taken now and with a random source of its own, so nothing it reads changes."""
        log = table.log
        assert log is not None
        if table.thinking == log.moves:
            return
        table.thinking = log.moves
        seed = self.rng.getrandbits(64)
        job = partial(decide_pickled, self.protocol, robot.name, frozen(table.state), seat, seed)
        self._out.append(Think((log.id, log.moves), job))

    def thought(self, token: tuple[str, int], choice: int | None, now: float) -> list[Effect]:
        """A robot's decision made away from the event loop is back, as an input of its own. It
        is played if the table still stands where it was asked (``token``: the table's id and
        moves played) and a robot is to move; when ``choice`` is None (the job failed, or the
        robots' process died) the robot decides here instead. A decision for a position the
        table has left is dropped, and asked again for where it stands if nobody is asking."""
        table_id, position = token
        table = next((t for t in self.tables if t.log is not None and t.log.id == table_id), None)
        if table is None or table.over or table.state is None or table.log is None:
            return self._drain()
        if table.thinking == position:
            table.thinking = None
        mover = self.plugin.to_move(table.state)
        robot = None if mover is None else table.seats[mover].robot
        if robot is None or mover is None:
            return self._drain()  # over, or a human's turn: nothing waits for a robot
        if table.log.moves != position:
            if table.thinking is None:
                self._think(table, mover, robot)
            return self._drain()
        moves = self.plugin.legal_moves(table.state, mover)
        if choice is None or not 0 <= choice < len(moves):
            move = robot.choose(table.state, mover, moves, self.rng)
            choice = list(moves).index(move)
        self._play(table, mover, choice, moves[choice], now)
        self._turns(table, now)
        return self._drain()

    def _table_row(self, table: Table) -> GameRow:
        log = table.log
        assert log is not None
        return GameRow(
            id=log.id,
            protocol=self.protocol,
            game=self.protocol,
            name=f"{self.protocol} table {table.number}",
            state=table.status,
            created=table.opened,
            last_active=table.last_active,
            seed=log.seed,
            moves=log.moves,
            started=log.started,
            finished=table.finished,
            config={"options": encode_options(log.options)},
            seats=[self.seat_row(seat) for seat in table.seats],
            result=table.result,
        )

    def restore(self, snapshot: Snapshot, now: float) -> list[Effect]:
        """Start recording; tables left in progress by the previous run are aborted."""
        self.recording = True
        self._records.extend(aborted_tables(snapshot, (self.protocol,), now))
        return self._drain()

    def reload(self, records: list[Record], store: StoreBackend) -> None:
        """Nothing to read back: a table whose moves cannot be stored ends (store_failed)."""
        return None

    def store_failed(
        self, records: list[Record], conns: list[ConnId], reload: None, now: float
    ) -> list[Effect]:
        """A commit failed: a table whose moves cannot be stored cannot go on, so everyone at
        the touched tables, and every sender whose input was not shown, is removed the way the
        protocol removes players."""
        touched = {
            r.id if isinstance(r, GameRow) else r.game_id for r in records if isinstance(r, GameRow | MoveRow)
        }
        self.abandon_tables(touched, now)
        for conn in conns:
            if conn in self.streams:
                # Removing a player from another table is a move of that table: stored.
                self.refuse(conn, "the server could not save the game", now)
        return self._drain()

    def abandon_tables(self, ids: set[str], now: float) -> None:
        """End the tables with these ids after a store failure: every player still seated is
        removed the protocol's way and the table is gone (at the next start the store, which
        has it in progress, records it as aborted)."""
        for table in list(self.tables):
            if table.log is None or table.log.id not in ids:
                continue
            for seat in table.seats:
                if seat.conn is not None and not seat.gone:
                    seat.gone = True
                    self.seated.pop(seat.conn, None)
                    self.streams.pop(seat.conn, None)
                    self.goodbye(seat.conn, "the server could not save the game")
            table.over, table.deadline = True, None
            self.tables.remove(table)
            self.ledger.closed()

    def live_tables(self) -> list[dict[str, Any]]:
        """Every table in play, for an admin: its id as stored, and who sits there."""
        return [
            {
                "protocol": self.protocol,
                "game_id": table.log.id,
                "game": self.protocol,
                "state": table.status,
                "players": [self.seat_row(seat).handle for seat in table.seats],
            }
            for table in self.tables
            if table.log is not None and not table.over
        ]

    def abort_table(self, game_id: str, reason: str, now: float) -> tuple[list[Effect], str | None]:
        """An admin ends a table: its players are told why where the protocol has
        words for it, and removed; it is stored ABORTED with the reason. The effects, or why
        it cannot be."""
        table = next((t for t in self.tables if t.log is not None and t.log.id == game_id), None)
        if table is None or table.over:
            return [], "no table in play has this id"
        words = f"an admin aborted this table: {reason}"
        for seat in table.seats:
            if seat.conn is not None and not seat.gone:
                seat.gone = True
                self.seated.pop(seat.conn, None)
                self.streams.pop(seat.conn, None)
                self.goodbye(seat.conn, words)
        table.over, table.deadline = True, None
        self.tables.remove(table)
        if self.open is table:
            self.open = None
        self.ledger.closed()
        self._ended(table, "ABORTED", now, reason="ABORTED", comment=words)
        return self._drain(), None

    def goodbye(self, conn: ConnId, reason: str) -> None:
        """Tell a removed player why, if the protocol has words for it, and close."""
        self._close(conn)

    def decode(self, message: Any) -> Any:
        raise NotImplementedError

    def handle(self, conn: ConnId, request: Any, now: float) -> None:
        raise NotImplementedError

    def refuse(self, conn: ConnId, reason: str, now: float) -> None:
        """Remove a sender that broke the protocol, the way the protocol says."""
        raise NotImplementedError

    def _drain(self) -> list[Effect]:
        out, self._out = self._out, []
        if self._dirty:
            self._records.extend(self._table_row(table) for table in self._dirty.values())
            self._dirty.clear()
        if self._records:
            out.insert(0, Store(self._records))
            self._records = []
        return out

    def _send(self, conn: ConnId, text: str) -> None:
        self._out.append(Send(conn, text.encode()))

    def _close(self, conn: ConnId) -> None:
        self._out.append(Close(conn))

    def _open_stream(self, conn: ConnId) -> bool:
        """Track a new connection; False when the connection limit is reached."""
        if len(self.streams) >= self.settings.max_connections:
            return False
        self.streams[conn] = JsonStream(self.settings.max_message_bytes)
        return True

    def _flooded(self, conn: ConnId, now: float) -> bool:
        """Count a message against the connection's rate; True (refused) past it."""
        bucket = self.buckets.get(conn)
        if bucket is None:
            bucket = self.buckets[conn] = TokenBucket.full(self.settings.requests_per_second, now)
        if bucket.allow(now):
            return False
        self.refuse(conn, f"more than {self.settings.requests_per_second:g} messages a second", now)
        return True

    def received(self, conn: ConnId, data: str | bytes, now: float) -> list[Effect]:
        stream = self.streams.get(conn)
        if stream is None:
            self.buckets.pop(conn, None)
            return []  # already refused: whatever else it sends is ignored
        try:
            values = stream.feed(data.encode() if isinstance(data, str) else data)
        except StreamError as error:
            self.failures["MALFORMED"] = self.failures.get("MALFORMED", 0) + 1
            self.refuse(conn, str(error), now)
            return self._drain()
        for value in values:
            if conn not in self.streams:
                break  # refused because of an earlier message of the same chunk
            if self._flooded(conn, now):
                break
            try:
                self.handle(conn, self.decode(value), now)
            except Violation as error:
                self.failures["VIOLATION"] = self.failures.get("VIOLATION", 0) + 1
                self.refuse(conn, str(error), now)
        return self._drain()

    def shutdown(self, now: float) -> list[Effect]:
        for conn in list(self.streams):
            self._out.append(Close(conn, 1001, "server shutdown"))
        return self._drain()
