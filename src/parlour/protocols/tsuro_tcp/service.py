"""Tsuro tables behind a TCP listener (a parlour.core.service.Service), sans-I/O.

Each connection is asked for its player info and must JOIN in time. A table starts with
``tsuro_players`` players, or after ``tsuro_wait`` seconds with robots in the empty seats; the
next connection opens a new table. Colours go to everyone first; every turn every connected
player gets the state and the mover is asked for its move. A legal move is accepted; anything else
(out of turn, malformed, the wrong colour, illegal, too slow) ejects the sender with a reason and
closes its connection (docs/tsuro-protocol.md, "Ejection"). The game ends with GAME_END to
everyone still connected.
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
from parlour.games.tsuro import PLUGIN
from parlour.games.tsuro.rules import TsuroState, check, legal_moves
from parlour.protocols.streamed import StreamedService, Table
from parlour.protocols.tsuro_tcp.messages import (
    Bad,
    Join,
    MoveRequest,
    ask_for_move,
    decode,
    game_end,
    game_state,
    line,
)
from parlour.robots.levels import pick
from parlour.settings import Settings
from parlour.storage.records import REMOVE_SEAT, SeatRow

__all__ = ["TsuroService"]

log = logging.getLogger("parlour.tsuro")


@dataclass(slots=True, eq=False)
class Seat:
    conn: ConnId | None
    name: str
    robot: Robot[Any, Any] | None = None
    gone: bool = False


class TsuroService(StreamedService):
    protocol = "tsuro"
    plugin = PLUGIN

    def __init__(
        self,
        settings: Settings,
        rng: Random | None = None,
        ledger: Ledger | None = None,
        ids: IdSource | None = None,
    ) -> None:
        super().__init__(settings, rng, ledger, ids)
        self.robot = pick("tsuro", settings.tsuro_robot)
        self.join_by: dict[ConnId, float] = {}
        self._numbers = 0

    # Service
    def connected(self, conn: ConnId, now: float) -> list[Effect]:
        if not self._open_stream(conn):
            self._send(conn, line("EJECTED", reason="server full"))
            self._close(conn)
            return self._drain()
        self.join_by[conn] = now + self.settings.tsuro_timeout
        self._send(conn, line("ASK_FOR_PLAYER_INFO"))
        return self._drain()

    def decode(self, message: Any) -> Join | MoveRequest:
        return decode(message)

    def refuse(self, conn: ConnId, reason: str, now: float) -> None:
        self._eject(conn, reason, now)

    def disconnected(self, conn: ConnId, now: float) -> list[Effect]:
        self.buckets.pop(conn, None)
        if conn in self.streams:
            self._eject(conn, "disconnected", now, tell=False)
        return self._drain()

    def tick(self, now: float) -> list[Effect]:
        for conn, deadline in list(self.join_by.items()):
            if now >= deadline:
                self._eject(conn, "timeout", now)
        table = self.open
        if table is not None and table.seats and now - table.opened >= self.settings.tsuro_wait:
            self._start(table, now)
        for table in list(self.tables):
            state = table.state
            if (
                table.deadline is not None
                and now >= table.deadline
                and state is not None
                and state.current is not None
            ):
                late = table.seats[state.current].conn
                if late is not None:
                    self._eject(late, "timeout", now)
        return self._drain()

    def stats(self) -> dict[str, int]:
        return {"connections": len(self.streams), "tables": len(self.tables)}

    # Joining and playing
    def handle(self, conn: ConnId, request: Join | MoveRequest, now: float) -> None:
        place = self.seated.get(conn)
        if place is None:
            if not isinstance(request, Join):
                raise Bad("send JOIN first")
            self._join(conn, request, now)
            return
        table, seat = place
        state: TsuroState | None = table.state
        if not isinstance(request, MoveRequest) or state is None or state.current != seat:
            raise Bad("not your turn")
        if request.color != state.players[seat].color:
            raise Bad("wrong color")  # the colour field is checked, never trusted
        reason = check(state, seat, request.placement)
        if reason is not None:
            raise Bad(reason)
        log.info("tsuro table %d: %s %s", table.number, table.seats[seat].name, request.placement)
        self._send(conn, line("MOVE_ACCEPTED"))
        self._play(table, seat, legal_moves(state, seat).index(request.placement), request.placement, now)
        self._turns(table, now)

    def _play(self, table: Table, seat: int, choice: int, move: Any, now: float) -> None:
        assert table.log is not None
        PLUGIN.apply(table.state, move, table.log.rng)
        self._moved(table, seat, choice, now)

    def seat_row(self, seat: Seat) -> SeatRow:
        state = "QUIT" if seat.gone and seat.robot is None else "PLAYING"
        return SeatRow(seat.name, seat.robot is not None, state)

    def goodbye(self, conn: ConnId, reason: str) -> None:
        self._send(conn, line("EJECTED", reason=reason))
        self._close(conn)

    def _join(self, conn: ConnId, request: Join, now: float) -> None:
        self.join_by.pop(conn, None)
        table = self.open
        if table is None:
            if not self.ledger.has_room():
                raise Bad("no table is free; try again later")
            self._numbers += 1
            table = self.open = Table(self._numbers, now)
            self.tables.append(table)
            self.ledger.opened()
        table.seats.append(Seat(conn, request.name[:40]))
        self.seated[conn] = (table, len(table.seats) - 1)
        log.info("tsuro table %d: %s joined", table.number, request.name[:40])
        if len(table.seats) >= self.settings.tsuro_players:
            self._start(table, now)

    def _start(self, table: Table, now: float) -> None:
        self.open = None
        while len(table.seats) < self.settings.tsuro_players:
            table.seats.append(Seat(None, f"robot {len(table.seats)}", robot=self.robot))
        table.log = self._begin({"deal": self.settings.tsuro_deal}, now)
        table.state = PLUGIN.new_game(len(table.seats), table.log.options, table.log.rng)
        self._save(table, now)
        for index, seat in enumerate(table.seats):
            if seat.gone:
                seat.robot = self.robot  # left before the start: a robot plays its seat
            elif seat.conn is not None:
                self._send(seat.conn, line("RECEIVE_COLOR", color=table.state.players[index].color))
        log.info("tsuro table %d starts with %d players", table.number, len(table.seats))
        self._turns(table, now)

    def _turns(self, table: Table, now: float) -> None:
        state = table.state
        assert state is not None
        while True:
            outcome = PLUGIN.outcome(state)
            if outcome is not None:
                self._ended(table, "COMPLETED", now, winners=list(outcome.winners), reason=outcome.reason)
                self._finish(table)
                return
            for index, seat in enumerate(table.seats):
                if seat.conn is not None and not seat.gone:
                    self._send(seat.conn, game_state(state, index))
            mover = state.current
            assert mover is not None
            seat = table.seats[mover]
            if seat.robot is not None:
                if self._robot_plays(table, mover, seat.robot, now):
                    continue
                return  # the robot decides away from the event loop: ``thought`` goes on
            assert seat.conn is not None
            self._send(seat.conn, ask_for_move(state))
            table.deadline = now + self.settings.tsuro_timeout
            return

    def _finish(self, table: Table) -> None:
        assert table.state is not None
        text = game_end(table.state)
        for seat in table.seats:
            if seat.conn is not None and not seat.gone:
                self._send(seat.conn, text)
                self._close(seat.conn)
                self.seated.pop(seat.conn, None)
                self.streams.pop(seat.conn, None)
        table.deadline = None
        self.tables.remove(table)
        self.ledger.closed()
        log.info("tsuro table %d is over", table.number)

    def _eject(self, conn: ConnId, reason: str, now: float, tell: bool = True) -> None:
        """EJECTED with a reason, then the connection closes; the others play on."""
        self.streams.pop(conn, None)
        self.join_by.pop(conn, None)
        if tell:
            self._send(conn, line("EJECTED", reason=reason))
            self._close(conn)
        place = self.seated.pop(conn, None)
        if place is None:
            log.info("tsuro: connection refused: %s", reason)
            return
        table, index = place
        table.seats[index].gone = True
        log.info("tsuro table %d: %s ejected (%s)", table.number, table.seats[index].name, reason)
        if table.state is None:
            if all(seat.gone for seat in table.seats):
                self.tables.remove(table)
                self.ledger.closed()
                if self.open is table:
                    self.open = None
            return
        was_current = table.state.current == index
        PLUGIN.remove_seat(table.state, index)
        self._moved(table, index, -1, now, REMOVE_SEAT)
        if was_current or table.state.finished:
            table.deadline = None
            self._turns(table, now)
