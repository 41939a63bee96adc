"""Fish tables behind a TCP listener (a parlour.core.service.Service), sans-I/O.

Connections send PlayerConnect{age} and are seated at the open table; a table starts as soon
as it has its players, or when its wait is over, with robots in the empty seats, and the next
connection opens a new table. At the start of every turn every connected player gets the whole
state; the player to move answers within the action timeout. Anything out of turn, of the wrong
kind for the phase, illegal or malformed gets its sender kicked: its penguins leave the board, its
connection is closed without a word, and the others play on. The final state names the winners,
then every connection is closed (docs/fish-protocol.md).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from random import Random
from typing import Any

from parlour.core.effects import ConnId, Effect
from parlour.core.ids import IdSource
from parlour.core.ledger import Ledger
from parlour.games.base import Robot
from parlour.games.fish import PLUGIN
from parlour.games.fish.rules import FishMove, FishState, legal_moves
from parlour.protocols.fish_tcp.messages import Connect, Malformed, decode, new_game_state, player_connected
from parlour.protocols.streamed import StreamedService, Table
from parlour.robots.levels import pick
from parlour.settings import Settings
from parlour.storage.records import REMOVE_SEAT, SeatRow

__all__ = ["FishService", "Table"]

log = logging.getLogger("parlour.fish")


@dataclass(slots=True, eq=False)
class Seat:
    conn: ConnId | None
    age: int
    robot: Robot[Any, Any] | None = None
    gone: bool = False  # kicked or disconnected


class FishService(StreamedService):
    protocol = "fish"
    plugin = PLUGIN

    def __init__(
        self,
        settings: Settings,
        rng: Random | None = None,
        board: dict[str, Any] | None = None,
        ledger: Ledger | None = None,
        ids: IdSource | None = None,
    ) -> None:
        super().__init__(settings, rng, ledger, ids)
        self.board = board or {}  # game options: rows, columns, fish (fixed boards), holes
        self.robot = pick("fish", settings.fish_robot)
        self._numbers = 0
        #: Connections that have not sent PlayerConnect yet, and when they must have.
        self.join_by: dict[ConnId, float] = {}

    # -----------------------------------------------------------------------------------------
    # Service

    def connected(self, conn: ConnId, now: float) -> list[Effect]:
        if not self._open_stream(conn):
            self._send(conn, player_connected(error="the server is full; try again later"))
            self._close(conn)
        else:
            self.join_by[conn] = now + self.settings.fish_timeout
        return self._drain()

    def decode(self, message: Any) -> Connect | FishMove:
        return decode(message)

    def disconnected(self, conn: ConnId, now: float) -> list[Effect]:
        self.buckets.pop(conn, None)
        self.streams.pop(conn, None)
        self.join_by.pop(conn, None)
        if conn in self.seated:
            self._kick(conn, "disconnected", now, close=False)
        return self._drain()

    def tick(self, now: float) -> list[Effect]:
        for conn, deadline in list(self.join_by.items()):
            if now >= deadline:  # connected but silent: the idle check of this protocol
                self.refuse(conn, "no PlayerConnect in time", now)
        table = self.open
        if table is not None and table.seats and now - table.opened >= self.settings.fish_wait:
            self._start(table, now)  # robots take the empty seats
        for table in list(self.tables):
            if table.deadline is not None and now >= table.deadline and table.state is not None:
                mover = table.seats[table.state.current] if table.state.current is not None else None
                if mover is not None and mover.conn is not None:
                    self._kick(mover.conn, "took too long", now)
        return self._drain()

    def stats(self) -> dict[str, int]:
        return {"connections": len(self.streams), "tables": len(self.tables)}

    # -----------------------------------------------------------------------------------------
    # Joining

    def handle(self, conn: ConnId, request: Connect | FishMove, now: float) -> None:
        place = self.seated.get(conn)
        if place is None:
            if not isinstance(request, Connect):
                raise Malformed("send PlayerConnect first")
            self._join(conn, request.age, now)
            return
        table, seat = place
        if isinstance(request, Connect):
            self._send(conn, player_connected(error="already connected to a game"))
            self._kick(conn, "connected twice", now)
            return
        state: FishState | None = table.state
        if state is None or state.current != seat:
            self._kick(conn, "played out of turn", now)
            return
        legal = legal_moves(state, seat)
        if request not in legal:
            self._kick(conn, f"illegal {type(request).__name__}", now)
            return
        log.info("fish table %d: player %d %s", table.number, seat, request)
        self._play(table, seat, legal.index(request), request, now)
        self._turns(table, now)

    def _play(self, table: Table, seat: int, choice: int, move: FishMove, now: float) -> None:
        assert table.log is not None
        PLUGIN.apply(table.state, move, table.log.rng)
        self._moved(table, seat, choice, now)

    def seat_row(self, seat: Seat) -> SeatRow:
        handle = "robot" if seat.conn is None else f"player (age {seat.age})"
        state = "QUIT" if seat.gone and seat.robot is None else "PLAYING"
        return SeatRow(handle, seat.robot is not None, state, extra={"age": seat.age})

    def _join(self, conn: ConnId, age: int, now: float) -> None:
        self.join_by.pop(conn, None)
        table = self.open
        if table is None:
            if not self.ledger.has_room():
                self._send(conn, player_connected(error="no table is free; try again later"))
                self._close(conn)
                self.streams.pop(conn, None)
                return
            self._numbers += 1
            table = self.open = Table(self._numbers, now)
            self.tables.append(table)
            self.ledger.opened()
        table.seats.append(Seat(conn, age))
        self.seated[conn] = (table, len(table.seats) - 1)
        self._send(conn, player_connected(player_id=len(table.seats) - 1))
        log.info("fish table %d: player %d joined (age %d)", table.number, len(table.seats) - 1, age)
        if len(table.seats) >= self.settings.fish_players:
            self._start(table, now)

    def _start(self, table: Table, now: float) -> None:
        self.open = None
        while len(table.seats) < self.settings.fish_players:
            table.seats.append(Seat(None, 0, robot=self.robot))
        for seat in table.seats:
            if seat.gone:  # left before the start: a robot plays the seat it was given
                seat.robot = self.robot
        options = {**self.board, "ages": [seat.age for seat in table.seats]}
        table.log = self._begin(options, now)
        table.state = PLUGIN.new_game(len(table.seats), options, table.log.rng)
        self._save(table, now)
        log.info("fish table %d starts with %d players", table.number, len(table.seats))
        self._turns(table, now)

    # -----------------------------------------------------------------------------------------
    # Playing

    def _broadcast(self, table: Table, text: str) -> None:
        for seat in table.seats:
            if seat.conn is not None and not seat.gone:
                self._send(seat.conn, text)

    def _turns(self, table: Table, now: float) -> None:
        """Announce each turn; robots play at once; stop at a human's turn or at the end."""
        state = table.state
        assert state is not None
        while True:
            outcome = PLUGIN.outcome(state)
            if outcome is not None:
                self._ended(table, "COMPLETED", now, winners=list(outcome.winners), reason=outcome.reason)
                self._finish(table, list(outcome.winners))
                return
            self._broadcast(table, new_game_state(state))
            mover = state.current
            if mover is None:  # pragma: no cover - a game with no mover has an outcome
                return
            seat = table.seats[mover]
            if seat.robot is not None:
                if self._robot_plays(table, mover, seat.robot, now):
                    continue
                return  # the robot decides away from the event loop: ``thought`` goes on
            table.deadline = now + self.settings.fish_timeout
            return

    def _finish(self, table: Table, winners: list[int]) -> None:
        assert table.state is not None
        self._broadcast(table, new_game_state(table.state, winners))
        log.info("fish table %d is over; winners %s", table.number, winners)
        for seat in table.seats:
            if seat.conn is not None and not seat.gone:
                self._close(seat.conn)
                self.seated.pop(seat.conn, None)
                self.streams.pop(seat.conn, None)
        table.over, table.deadline = True, None
        self.tables.remove(table)
        self.ledger.closed()

    def refuse(self, conn: ConnId, reason: str, now: float) -> None:
        if conn in self.seated:
            self._kick(conn, reason, now)
        else:
            log.info("fish: refused a connection: %s", reason)
            self.join_by.pop(conn, None)
            self._send(conn, player_connected(error=reason))
            self._close(conn)
            self.streams.pop(conn, None)

    def _kick(self, conn: ConnId, reason: str, now: float, close: bool = True) -> None:
        """Remove a player and its penguins; the others play on (the kicked one gets no message)."""
        table, index = self.seated.pop(conn)
        self.streams.pop(conn, None)
        seat = table.seats[index]
        seat.gone = True
        log.info("fish table %d: player %d kicked (%s)", table.number, index, reason)
        if close:
            self._close(conn)
        if table.state is None:
            if all(s.gone for s in table.seats):  # nobody left waiting: the table closes
                self.tables.remove(table)
                self.ledger.closed()
                if self.open is table:
                    self.open = None
            return
        PLUGIN.remove_seat(table.state, index)
        self._moved(table, index, -1, now, REMOVE_SEAT)
        table.deadline = None
        self._turns(table, now)
