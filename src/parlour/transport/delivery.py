"""Carrying out sends, broadcasts and closes: each effect's messages framed as its connection's
outbox wants them, gathered by connection, and handed to each outbox at once (the runtime calls
``deliver`` once the effects' records are stored, or at once when they have none)."""

from __future__ import annotations

from collections.abc import Callable

from parlour.core.effects import Broadcast, Close, ConnId, Effect, Relay, Send, Store
from parlour.transport.fanout import Fanout
from parlour.transport.outbox import Outbox

__all__ = ["deliver"]


def deliver(
    effects: list[Effect],
    outboxes: dict[ConnId, Outbox],
    fanout: Fanout,
    forward: Callable[[list[Effect]], None] | None = None,
) -> None:
    """Carry out sends, broadcasts and closes (records are stored already, or not at all).

    Messages are framed as each outbox wants them (a Broadcast's once for all its
    recipients), gathered by connection in order, then handed to each outbox at once: all
    of these effects' messages to a connection leave together, in one write. A run of
    broadcasts to the same connections (the lobby chat lines of one commit) is one pass
    over the recipients, so each recipient costs a dictionary lookup and an append per
    release, however many lines it carries; to many connections, the run joins the
    fan-out's wave instead, written a slice of recipients per loop iteration, and anything
    else for a recipient first takes what the wave owes it."""
    queued: dict[Outbox, list[bytes]] = {}
    closed: list[Outbox] = []
    # Effects for connections without an outbox here (gone, or another node's).
    remote: list[Effect] | None = None if forward is None else []
    index, count = 0, len(effects)
    while index < count:
        effect = effects[index]
        index += 1
        if type(effect) is Broadcast:
            run = [effect]
            while index < count:
                following = effects[index]
                if type(following) is Broadcast and following.conns is effect.conns:
                    run.append(following)
                elif type(following) is not Store:  # records are stored already: no-ops
                    break
                index += 1
            if fanout.takes(effect):
                if remote is not None:  # a cluster: other nodes' recipients get theirs now
                    missing = [conn for conn in effect.conns if conn not in outboxes]
                    if missing:
                        remote.extend(Broadcast(missing, each.data, each.instead) for each in run)
                fanout.add(run)
            else:
                _queue_broadcasts(run, queued, outboxes, fanout, remote)
        elif type(effect) is Send:
            outbox = outboxes.get(effect.conn)
            if outbox is None:
                if remote is not None:
                    remote.append(effect)
                continue
            frame = outbox.frame
            framed = effect.data if frame is None else frame(effect.data)
            chunks = queued.get(outbox)
            if chunks is None:
                chunks = queued[outbox] = []
            if fanout.active:
                owed = fanout.owed(effect.conn, frame)
                if owed is not None:
                    chunks.append(owed)
            chunks.append(framed)
        elif type(effect) is Close:
            outbox = outboxes.get(effect.conn)
            if outbox is None:
                if remote is not None:
                    remote.append(effect)
                continue
            # What came before the close goes first; what follows is dropped (the
            # outbox is closing by then).
            chunks = queued.pop(outbox, None)
            owed = fanout.owed(effect.conn, outbox.frame)
            if owed is not None:
                chunks = [owed] if chunks is None else [*chunks, owed]
            if chunks is not None:
                outbox.put_framed(chunks)
            outbox.put(effect)
            closed.append(outbox)
        elif type(effect) is Relay and remote is not None:
            remote.append(effect)
        # Store: nothing to store with (--store none), or stored already
    for outbox, chunks in queued.items():
        outbox.put_framed(chunks)
    for outbox in closed:
        outbox.flush_now()
    if remote and forward is not None:
        forward(remote)


def _queue_broadcasts(
    run: list[Broadcast],
    queued: dict[Outbox, list[bytes]],
    outboxes: dict[ConnId, Outbox],
    fanout: Fanout,
    remote: list[Effect] | None = None,
) -> None:
    """Queue broadcasts to the same connections, in order: each recipient gets their
    messages joined in one chunk (framed once per framing), the few named in an
    ``instead`` their own."""
    active = fanout if fanout.active else None
    special: set[ConnId] = set()
    for broadcast in run:
        if broadcast.instead:
            special.update(broadcast.instead)
    framer: Callable[[bytes], bytes] | bool | None = False  # False: nothing framed yet
    joined = b""
    missing: list[ConnId] = []
    for conn in run[0].conns:
        outbox = outboxes.get(conn)
        if outbox is None:
            if remote is not None:
                missing.append(conn)  # another node's (a cluster), or already gone
            continue
        frame = outbox.frame
        if frame is not framer:
            framer = frame
            joined = b"".join(
                [broadcast.data if frame is None else frame(broadcast.data) for broadcast in run]
            )
        chunk = joined
        if conn in special:
            parts = [
                broadcast.data if not broadcast.instead else broadcast.instead.get(conn, broadcast.data)
                for broadcast in run
            ]
            chunk = b"".join([part if frame is None else frame(part) for part in parts if part])
            if not chunk:
                continue
        chunks = queued.get(outbox)
        if chunks is None:
            chunks = queued[outbox] = []
        if active is not None:
            owed = active.owed(conn, frame)
            if owed is not None:
                chunks.append(owed)
        chunks.append(chunk)
    if missing and remote is not None:
        remote.extend(Broadcast(missing, broadcast.data, broadcast.instead) for broadcast in run)
