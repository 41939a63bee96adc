"""Broadcasts to many connections, written a slice of recipients per loop iteration.

One chat line to a lobby of 2,000 costs the loop some 15-20 ms of ``send`` calls. Written in one
go, nothing else runs meanwhile: the next lines wait to be read, then their commit's answer waits
to be picked up, then they wait for their own round, so the last recipient could see a line three
rounds after it was said. Here a broadcast to many connections joins a *wave* instead: a sweep
over its recipients that writes ``slice`` of them, lets the loop read, commit and release, and
goes on. When the sweep reaches a recipient, it writes in one go every line added since it last
passed there; a line added mid-sweep rides the rest of the sweep at once, and the recipients the
sweep has passed get it on its next pass. So a line waits at most one sweep, and a busy lobby
still costs one write per recipient per sweep, however many lines each write carries.

The order of each connection's messages is kept. Anything else written to a recipient with lines
owed (a direct message, a small broadcast, a close) takes those lines first (:meth:`Fanout.owed`),
and a broadcast to another list of connections starts a new wave that carries over what the old
one still owed (the lobby's list changes as players come and go): each recipient still on the
list gets it first at its next visit, one no longer on it at once.

Positions: the sweep counts its visits (``position``); the recipient visited at position ``g`` is
``conns[g % len(conns)]``. A line is stamped with the position at which it was added: the
recipients visited from then on get it, until the sweep comes back to where it started, when the
line is done with and dropped.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from parlour.core.effects import Broadcast, ConnId
from parlour.transport.outbox import Outbox

__all__ = ["SLICE", "Fanout"]

#: Recipients written per loop iteration (a few milliseconds of ``send`` calls), and the size
#: from which a broadcast goes through a wave at all (smaller ones are written at once).
SLICE = 256

Framer = Callable[[bytes], bytes] | None


@dataclass(slots=True)
class _Line:
    broadcast: Broadcast
    #: The line's number in its wave (to say which lines a recipient has had).
    seq: int
    #: The sweep's position when the line was added.
    at: int


class _Wave:
    """The lines owed to one list of connections, and where the sweep over it stands."""

    __slots__ = ("ahead", "cache", "carried", "conns", "index", "lines", "next_seq", "position", "special")

    def __init__(self, conns: list[ConnId]) -> None:
        self.conns = conns
        #: Where each recipient is in ``conns`` (to know what it is owed out of turn).
        self.index = {conn: number for number, conn in enumerate(conns)}
        self.lines: deque[_Line] = deque()
        self.next_seq = 0
        self.position = 0
        #: Recipients given their lines out of turn since the sweep last passed them: the
        #: number of the first line they have not had (never a dropped line's: a line is
        #: dropped only once the sweep has passed every recipient since it was added).
        self.ahead: dict[ConnId, int] = {}
        #: Recipients some owed line names in its ``instead``.
        self.special: set[ConnId] = set()
        #: What a previous wave (another list) still owed each recipient, framed: written
        #: before anything of this wave's.
        self.carried: dict[ConnId, bytes] = {}
        #: The last chunk joined for a whole run of owed lines: (first seq, next seq, framer).
        self.cache: tuple[int, int, Framer, bytes] | None = None

    def add(self, broadcast: Broadcast) -> None:
        self.lines.append(_Line(broadcast, self.next_seq, self.position))
        self.next_seq += 1
        if broadcast.instead:
            self.special.update(broadcast.instead)

    def trim(self) -> None:
        """Drop the lines every recipient has had (added a whole sweep ago or more)."""
        lines = self.lines
        done = self.position - len(self.conns)
        dropped = False
        while lines and lines[0].at <= done:
            if lines.popleft().broadcast.instead:
                dropped = True
        if not lines:
            self.ahead.clear()
            self.special.clear()
            self.carried.clear()  # every recipient was visited since the first line: none left
            self.cache = None
        elif dropped:
            self.special = {
                conn for line in lines if line.broadcast.instead for conn in line.broadcast.instead
            }

    def owed_from(self, conn: ConnId) -> int:
        """The number of the first line ``conn`` has not had, out of turn (between visits)."""
        first = self.ahead.get(conn, -1)
        size = len(self.conns)
        number = self.index[conn]
        # The sweep's last visit to conn: the latest position below ``position`` that is its.
        last = self.position - 1 - (self.position - 1 - number) % size
        for line in self.lines:
            if line.at > last and line.seq >= first:
                return line.seq
        return self.next_seq

    def chunk(self, conn: ConnId, first: int, frame: Framer) -> bytes:
        """The owed lines from number ``first`` on, framed and joined for ``conn``."""
        lines = self.lines
        start = first - lines[0].seq
        if conn not in self.special:
            cache = self.cache
            if cache is not None and cache[0] == first and cache[1] == self.next_seq and cache[2] is frame:
                return cache[3]
            datas = [lines[number].broadcast.data for number in range(start, len(lines))]
            joined = b"".join(datas if frame is None else [frame(data) for data in datas])
            self.cache = (first, self.next_seq, frame, joined)
            return joined
        parts: list[bytes] = []
        for number in range(start, len(lines)):
            broadcast = lines[number].broadcast
            data = broadcast.data if not broadcast.instead else broadcast.instead.get(conn, broadcast.data)
            if data:
                parts.append(data if frame is None else frame(data))
        return b"".join(parts)


class Fanout:
    """The wave under way, if any, swept ``slice`` recipients per loop iteration."""

    def __init__(self, outboxes: dict[ConnId, Outbox], slice_size: int = SLICE) -> None:
        self.outboxes = outboxes
        self.slice = max(1, slice_size)
        self._wave: _Wave | None = None
        self._scheduled = False

    @property
    def active(self) -> bool:
        """Whether some lines are owed (anything else written may have to take them first)."""
        wave = self._wave
        return wave is not None and bool(wave.lines)

    def takes(self, broadcast: Broadcast) -> bool:
        """Whether a broadcast is big enough to go through a wave."""
        return len(broadcast.conns) > self.slice

    def add(self, run: list[Broadcast]) -> None:
        """Owe broadcasts to the same list of connections (in order) to all of them."""
        conns = run[0].conns
        wave = self._wave
        if wave is None or wave.conns is not conns:
            wave = self._wave = self._carry_over(wave, _Wave(conns))
        for broadcast in run:
            wave.add(broadcast)
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._step)

    def _carry_over(self, old: _Wave | None, new: _Wave) -> _Wave:
        """What ``old`` still owes, carried into ``new`` for the recipients on both lists and
        written now to the others (they left the list after the lines were said): some
        microseconds of Python per recipient, where finishing the old wave would cost a whole
        pass of writes."""
        if old is None or not old.lines:
            return new
        outboxes, members, carried = self.outboxes, new.index, new.carried
        for conn in old.conns:
            outbox = outboxes.get(conn)
            if outbox is None:
                continue
            chunk = self._take(old, conn, outbox.frame)
            if chunk is None:
                continue
            if conn in members:
                carried[conn] = chunk
            else:
                outbox.put_framed([chunk])
        return new

    def owed(self, conn: ConnId, frame: Framer) -> bytes | None:
        """What ``conn`` is owed now, framed, marked as had: to write before anything else that
        is written to it. None when nothing is owed."""
        wave = self._wave
        if wave is None or not wave.lines or conn not in wave.index:
            return None
        return self._take(wave, conn, frame)

    @staticmethod
    def _take(wave: _Wave, conn: ConnId, frame: Framer) -> bytes | None:
        """What ``wave`` owes ``conn`` (carried over included), marked as had."""
        carried = wave.carried.pop(conn, b"") if wave.carried else b""
        first = wave.owed_from(conn)
        if first >= wave.next_seq:
            return carried or None
        wave.ahead[conn] = wave.next_seq
        return carried + wave.chunk(conn, first, frame) or None

    def _step(self) -> None:
        self._scheduled = False
        if self._sweep(self.slice):
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._step)

    def finish(self) -> None:
        """Write everything owed now (a new wave starts, or the server stops)."""
        wave = self._wave
        if wave is not None:
            self._sweep(len(wave.conns))
            self._wave = None

    def _sweep(self, visits: int) -> bool:
        """Visit up to ``visits`` recipients; True while lines are still owed."""
        wave = self._wave
        if wave is None:
            return False
        conns, outboxes, ahead, lines = wave.conns, self.outboxes, wave.ahead, wave.lines
        carried_over = wave.carried
        size = len(conns)
        position = wave.position
        end = position + visits
        # What most recipients get (every owed line), joined once per framing and trim.
        common: bytes | None = None
        framer: Framer | bool = False
        while lines:
            if lines[0].at <= position - size:  # the oldest line has been everywhere
                wave.position = position
                wave.trim()
                common = None
                if not lines:
                    break
            if position >= end:
                break
            conn = conns[position % size]
            position += 1
            carried = carried_over.pop(conn, b"") if carried_over else b""
            outbox = outboxes.get(conn)
            if outbox is None:
                continue  # gone
            first = lines[0].seq
            if ahead and conn in ahead:
                first = ahead.pop(conn)
                if first >= wave.next_seq:
                    continue  # given everything out of turn (what was carried over too)
                chunk = wave.chunk(conn, first, outbox.frame)
            elif conn in wave.special:
                chunk = wave.chunk(conn, first, outbox.frame)
            else:
                frame = outbox.frame
                if common is None or frame is not framer:
                    framer = frame
                    common = wave.chunk(conn, first, frame)
                chunk = common
            if carried:
                chunk = carried + chunk
            if chunk:
                outbox.put_framed([chunk])
        wave.position = position
        return bool(lines)
