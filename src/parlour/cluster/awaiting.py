"""The notes a node sent to another node's service for its own connections, until they are
answered (docs/cluster.md, "Every request is answered").

A request routed to a shard's owner is published on the shard's channel; Redis counts it heard
as long as that owner is subscribed, even when it is frozen (a paused process or machine) and
will never act on it again: its lease lapses and another node takes the shard over. So the
node that sent it keeps it here, with the owner's epoch it was meant for, until an answer to
its connection arrives (recognised by the service's own words: the ``request_id`` it echoes).
When the node learns that this tenure is over (another node's takeover announcement, the owner
letting it go, the owner's liveness key gone), what is still here was not answered and never
will be: the node answers it itself (TRY_AGAIN: the owner it was meant for dropped it, and no
other owner takes a note meant for another tenure).

A request that passes through several owners (/async's WhatsNewPussycatRequest without a game:
the hub, then each shard with games of the player, the last one answers) is kept whole, from
the moment it goes to the first of them: its later hops are sent by other nodes, which keep
nothing, and the shards it visits are not known here. So besides the end of the tenure it was
sent to, a wait longer than the node allows it ends it (a hop may sit with a frozen owner whose
tenure is not over for the node that sent it), as every such request has an answer of its own,
in milliseconds. Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Container, Hashable
from dataclasses import dataclass

from parlour.core.effects import ConnId

__all__ = ["Awaited", "Awaiting"]


@dataclass(eq=False, slots=True)
class Awaited:
    """One note waiting for its answer: for the owner of ``to`` at ``epoch``, from ``conn``;
    ``key`` is what its answer carries (the request's ``request_id``, or its game). ``through``
    (a request kept whole): its answer may come from another owner than ``to``'s. ``replies``:
    its request always has an answer of its own (a commit's acknowledgement or refusal), so
    one not seen within the node's patience was lost on the way, and its sender answers it."""

    conn: ConnId
    key: Hashable
    to: str
    epoch: int
    data: bytes
    since: float
    through: bool = False
    replies: bool = False


class Awaiting:
    """The notes this node waits to see answered, by connection (a handful at a time)."""

    __slots__ = ("by_conn", "whole")

    def __init__(self) -> None:
        self.by_conn: dict[ConnId, list[Awaited]] = {}
        #: The requests kept whole among them, by connection and answer (looked up for every
        #: note this node's services take while there are any).
        self.whole: dict[tuple[ConnId, Hashable], Awaited] = {}

    def __bool__(self) -> bool:
        return bool(self.by_conn)

    def add(self, entry: Awaited) -> None:
        self.by_conn.setdefault(entry.conn, []).append(entry)
        if entry.through:
            self.whole[entry.conn, entry.key] = entry

    def find(self, conn: ConnId, key: Hashable) -> Awaited | None:
        """The request of ``conn`` kept whole whose answer carries ``key``, if it is waited for."""
        return self.whole.get((conn, key))

    def take(self, entry: Awaited) -> bool:
        """Stop waiting for ``entry``; False if it was answered (or given up on) already."""
        entries = self.by_conn.get(entry.conn)
        if entries is None or not any(waiting is entry for waiting in entries):
            return False
        self._keep(entry.conn, [waiting for waiting in entries if waiting is not entry])
        return True

    def replied(self, conn: ConnId, keys: Container[Hashable]) -> None:
        """A frame reached ``conn`` carrying ``keys``: the notes it answers are answered."""
        entries = self.by_conn.get(conn)
        if entries is not None:
            self._keep(conn, [entry for entry in entries if entry.key not in keys])

    def ended(self, to: str, epoch: int) -> list[Awaited]:
        """The notes for ``to`` meant for a tenure other than ``epoch`` (0: any tenure), taken
        out: their owner will not answer them."""
        over: list[Awaited] = []
        for conn, entries in list(self.by_conn.items()):
            gone = [entry for entry in entries if entry.to == to and (epoch == 0 or entry.epoch != epoch)]
            if gone:
                over.extend(gone)
                self._keep(conn, [entry for entry in entries if not any(entry is g for g in gone)])
        return over

    def forget(self, before: float, whole_before: float) -> list[Awaited]:
        """Give up on what was sent before ``before``: a request its owner took without a reply
        of its own (a confirmation), or one answered in words not recognised. Those that have
        an answer of their own (``replies``), and the requests kept whole sent before
        ``whole_before``, are taken out and returned: one not seen by then may have been lost
        on the way (its sender answers it)."""
        lost: list[Awaited] = []
        for conn, entries in list(self.by_conn.items()):
            gone = [
                entry
                for entry in entries
                if (entry.through and entry.since < whole_before) or (entry.replies and entry.since < before)
            ]
            if gone or any(entry.since < before for entry in entries):
                lost.extend(gone)
                self._keep(
                    conn,
                    [
                        entry
                        for entry in entries
                        if entry.since >= before and not any(entry is g for g in gone)
                    ],
                )
        return lost

    def everything(self) -> list[Awaited]:
        """Every note waited for, taken out (their answers may have been lost in a gap)."""
        entries = [entry for waiting in self.by_conn.values() for entry in waiting]
        self.by_conn.clear()
        self.whole.clear()
        return entries

    def _keep(self, conn: ConnId, entries: list[Awaited]) -> None:
        if self.whole:
            for entry in self.by_conn.get(conn, ()):
                if self.whole.get((conn, entry.key)) is entry and not any(kept is entry for kept in entries):
                    del self.whole[conn, entry.key]
        if entries:
            self.by_conn[conn] = entries
        else:
            del self.by_conn[conn]
