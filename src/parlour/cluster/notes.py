"""The notes between services of a cluster, and the answers a node awaits for them.

A service's note (a ``Relay`` effect, docs/cluster.md "Placement") goes to the owner of the
service it names, or to every node. :class:`Notes` hands over in the process what this node
takes itself and publishes the rest; it keeps the notes sent for this node's connections until
they are answered (``Awaiting``, awaiting.py), and answers itself those nobody will: a note
nobody heard, one whose owner's tenure ended, one waited for too long (docs/cluster.md, "Every
request is answered"). It also routes the effects of this node's services for other nodes'
connections (Runtime.remote).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Mapping
from typing import Final

from parlour.cluster.awaiting import Awaited, Awaiting
from parlour.cluster.gateway import ClusterService, node_of
from parlour.cluster.redisbus import Bus
from parlour.cluster.wire import (
    CLUSTER_CHANNEL,
    Note,
    Output,
    WireBroadcast,
    WireSend,
    encode,
    node_channel,
    owner_channel,
    to_wire,
)
from parlour.core.effects import Broadcast, Close, ConnId, Effect, Relay, Send
from parlour.transport.runtime import Runtime

__all__ = ["AWAIT_LEASES", "WHOLE_LEASES", "Notes"]

#: How long, in leases, a node waits for the answer to a note it sent for one of its
#: connections before it gives up on it (a request answered in no words of its own): longer
#: than it takes to learn that the owner stopped (its liveness key lives one lease, looked at
#: every third of one).
AWAIT_LEASES: Final = 3.0
#: How long, in leases, a node waits for the answer to a request it keeps whole (a Gather,
#: whose hops other nodes send) before it answers it TRY_AGAIN itself: a hop may sit with a
#: frozen owner that the node which sent it still took for alive, while this node knew of no
#: change to tell it. Looked at every third of a lease: answered within a lease and a third of
#: its sending, inside the bound of docs/cluster.md ("Every request is answered"). A Gather
#: answers in milliseconds, but one held behind a failing commit at a shard is told TRY_AGAIN
#: this way too, before that commit's refusal: a read, sent again, changes nothing.
WHOLE_LEASES: Final = 1.0


class Notes:
    """The notes of one node: those it sends and takes, and those it awaits answers to."""

    def __init__(
        self,
        runtime: Runtime,
        bus: Bus,
        services: Mapping[str, ClusterService],
        node: Callable[[], int],
        ttl: float,
        on_everyone: Callable[[bytes], None] | None = None,
        unheard: Callable[[str, bytes], list[Effect]] | None = None,
        unanswered: Callable[[str, bytes], list[Effect]] | None = None,
        awaited: Callable[[bytes], tuple[ConnId, Hashable, bool, bool] | None] | None = None,
        answer_keys: Callable[[bytes], tuple[Hashable, ...]] | None = None,
    ) -> None:
        self.runtime = runtime
        self.bus = bus
        #: The node's services, by name: the owners notes go to.
        self.services = services
        #: This node's number (known once it has joined the cluster).
        self.node = node
        self.ttl = ttl
        #: Told of every note for all nodes (the /async directory's changes), before the
        #: services this node owns get it.
        self.on_everyone = on_everyone
        #: The effects that answer a note nobody took (a request for a shard without owner).
        self.unheard = unheard
        #: The effects that answer a note its owner took but stopped before answering (its
        #: outcome unknown to anyone now); ``unheard`` where not given.
        self.unanswered = unanswered
        #: Whose answer a note is (its connection, what the answer carries, and whether it is
        #: waited for whole: it passes through several owners), or None; and what a frame sent
        #: to a connection answers (placement.awaited, answer_keys).
        self.awaited = awaited
        self.answer_keys = answer_keys
        #: The notes sent for this node's connections to other nodes' services, unanswered yet.
        self.awaiting = Awaiting()
        #: Notes this node sent itself, still to take (see send).
        self._notes_here: deque[Note] = deque()
        self._taking_notes = False

    def noted(self, note: Note) -> None:
        """A note that reached this node (published, or its own): the services it is for take
        it (every one, for a note to every node); one meant for another tenure is dropped (its
        sender answers it), and one nobody takes is answered here."""
        now = self.runtime.clock()
        if note.to == "*":
            if self.on_everyone is not None:
                self.on_everyone(note.data)
            for service in self.services.values():
                service.noted(note.data, now)
            return
        owner = self.services.get(note.to)
        if owner is None:
            return
        if self.awaiting.whole and owner.acting() is not None and note.epoch in (0, owner.epoch):
            self._taken_here(note.data)
        if note.epoch:
            # Meant for one tenure: taken by its owner while it acts, dropped otherwise (by a
            # node that has just lost the service, or woke up to find its lease lapsed); its
            # sender answers it once it learns that tenure is over.
            if note.epoch == owner.epoch:
                owner.noted(note.data, now)
            return
        if not owner.noted(note.data, now) and owner.owner in (0, self.node()):
            # Not taken here: this node owned it no more as the note came, and no other node
            # has announced it owns it (one that had would have had the note too, having
            # subscribed first): nobody answers it but us.
            self._unheard(note.to, note.data)

    def send(self, to: str, data: bytes) -> None:
        """A note for the owner of ``to`` (``"*"``: every node, this one too).

        What this node itself takes is handed over here, without a round trip through Redis
        (it would cost each routed request two messages and a loop iteration, even on one
        node: see docs/cluster.md, "What it costs"); the rest is published. Both keep the
        order in which notes were sent: notes to this node's services are taken one at a
        time, in order, never inside one another, as Redis would deliver them."""
        me = self.node()
        if to == "*":
            self.bus.publish(CLUSTER_CHANNEL, encode(Note(to, data, me)))
            self._here(Note(to, data, me))
            return
        owner = self.services.get(to)
        if owner is not None and owner.acting() is not None:
            self._here(Note(to, data, me))
            return
        waiting = self.awaited(data) if self.awaited is not None and owner is not None else None
        if owner is None or waiting is None:
            self.bus.publish(owner_channel(to), encode(Note(to, data, me)), lambda: self._not_heard(to, data))
            return
        conn, key, whole, replies = waiting
        mine = node_of(conn) == me
        kept = self.awaiting.find(conn, key) if mine else None
        if owner.owner in (0, me):
            # Nobody owns it now (this node no longer does): nobody would answer it. Published,
            # it could reach a node frozen with the shard's channel still subscribed, which
            # answers it only when it wakes (docs/cluster.md, "Every request is answered").
            if kept is not None:
                self._answer(kept)
            else:
                self._unheard(to, data)
            return
        if not mine:  # another node's connection: the owner answers it, or that node does
            self.bus.publish(owner_channel(to), encode(Note(to, data, me)), lambda: self._not_heard(to, data))
            return
        # Waited for until answered, or answered here once its owner's tenure is over. A
        # request kept whole is kept once: its hops are answered by one entry, once.
        entry = kept
        if entry is None:
            entry = Awaited(conn, key, to, owner.epoch, data, self.runtime.clock(), whole, replies)
            self.awaiting.add(entry)
        self.bus.publish(
            owner_channel(to),
            encode(Note(to, data, me, owner.epoch)),
            lambda: self._answer(entry),
        )

    def _here(self, note: Note) -> None:
        """Take a note of this node's own, after those it is already taking."""
        self._notes_here.append(note)
        if self._taking_notes:
            return
        self._taking_notes = True
        try:
            while self._notes_here:
                self.noted(self._notes_here.popleft())
        finally:
            self._taking_notes = False

    def _unheard(self, to: str, data: bytes) -> None:
        """Answer a note nobody takes (TRY_AGAIN to its connection). Shown at once, never held
        behind this node's own commits: it stores nothing, and a commit that failed meanwhile
        (the node's store stopped, or it woke from a pause into a refused batch) would drop
        it with the sends it refuses, leaving its request unanswered."""
        if self.unheard is not None:
            effects = self.unheard(to, data)
            if effects:
                self.runtime.show(effects)

    def _not_heard(self, to: str, data: bytes) -> None:
        """A publication of a note reached nobody, as far as Redis said: answered as unheard,
        or, where Redis never said (the bus lost its connection with it written), as a note
        whose owner may have taken it."""
        if self.bus.unsure:
            self._unanswered(to, data)
        else:
            self._unheard(to, data)

    def _unanswered(self, to: str, data: bytes) -> None:
        """Answer a note whose owner took it (Redis counted it heard) but whose tenure ended
        before it answered: shown at once, as ``_unheard``."""
        answer = self.unanswered if self.unanswered is not None else self.unheard
        if answer is not None:
            effects = answer(to, data)
            if effects:
                self.runtime.show(effects)

    def await_whole(self, conn: ConnId, key: Hashable, to: str, data: bytes) -> None:
        """A request of this node's connection ``conn`` goes to the owner of ``to`` and will be
        answered by another's (placement.Router.waits): waited for whole until a frame echoes
        ``key``, and answered here (``data``: how, as a note nobody took) if the tenure of
        ``to``'s owner ends first, or it waited too long (WHOLE_LEASES). Not when ``to`` is this
        node's own: it is taken here, and a hop it sends on is waited for as it goes
        (send)."""
        service = self.services.get(to)
        if service is None or service.owner in (0, self.node()) or self.awaiting.find(conn, key) is not None:
            return
        self.awaiting.add(Awaited(conn, key, to, service.epoch, data, self.runtime.clock(), True))

    def give_up(self) -> None:
        """Stop waiting for what waited too long; a request kept whole is answered here."""
        now = self.runtime.clock()
        for lost in self.awaiting.forget(now - AWAIT_LEASES * self.ttl, now - WHOLE_LEASES * self.ttl):
            self._unanswered(lost.to, lost.data)

    def messages_lost(self) -> None:
        """Messages between nodes may have been lost (Bus.on_gap)."""
        # The answers to the requests this node routed may have been among the lost messages:
        # each is told its outcome is unknown (a read: TRY_AGAIN), rather than left waiting.
        for entry in self.awaiting.everything():
            if isinstance(entry.key, str):  # answered in words of its own, echoing its request_id
                self._unanswered(entry.to, entry.data)

    def _taken_here(self, data: bytes) -> None:
        """A note this node's own service takes: a request of this node's connection kept whole
        is answered here now (or refused with this node's commit), or its next hop is waited
        for as it is sent: the wait so far ends."""
        waiting = self.awaited(data) if self.awaited is not None else None
        if waiting is not None and waiting[2] and node_of(waiting[0]) == self.node():
            kept = self.awaiting.find(waiting[0], waiting[1])
            if kept is not None:
                self.awaiting.take(kept)

    def _answer(self, entry: Awaited) -> None:
        """A note of ``awaiting`` that nobody will answer now (Redis says nobody heard it, or
        its owner's tenure is over): answered here, unless it was already."""
        if self.awaiting.take(entry):
            self._not_heard(entry.to, entry.data)

    def owner_changed(self, name: str) -> None:
        """This node learned who owns ``name`` now (maybe nobody): the notes it waits for from
        an earlier tenure get no answer from it (it drops them), nor from a later one (which
        takes no note meant for another): they are answered here."""
        if self.awaiting:
            service = self.services[name]
            current = service.epoch if service.owner != 0 else 0
            for entry in self.awaiting.ended(name, current):
                self._unanswered(entry.to, entry.data)

    def replied(self, message: Output) -> None:
        """Effects from an owner for this node's connections: those that answer awaited notes
        end the wait."""
        awaiting, keys = self.awaiting.by_conn, self.answer_keys
        if keys is None:
            return
        for effect in message.effects:
            if type(effect) is WireSend:
                if effect.conn in awaiting:
                    self.awaiting.replied(effect.conn, keys(effect.data))
            elif type(effect) is WireBroadcast:
                for conn in effect.conns:
                    if conn in awaiting:
                        instead = effect.instead or {}
                        self.awaiting.replied(conn, keys(instead.get(conn, effect.data)))

    def route_remote(self, effects: list[Effect]) -> None:
        """Runtime.remote: effects for connections of other nodes, one message per node."""
        me = self.node()
        by_node: dict[int, list[Effect]] = {}
        # Notes first: a game placed on a shard is there before its players hear it started,
        # and a sign-in is known to every node before its client hears it succeeded.
        for effect in effects:
            if type(effect) is Relay:
                self.send(effect.to, effect.data)
        for effect in effects:
            if type(effect) is Broadcast:
                split: dict[int, list[int]] = {}
                for conn in effect.conns:
                    node = node_of(conn)
                    if node != me:
                        split.setdefault(node, []).append(conn)
                for node, conns in split.items():
                    by_node.setdefault(node, []).append(Broadcast(conns, effect.data, effect.instead))
            elif type(effect) is Send or type(effect) is Close:
                node = node_of(effect.conn)
                if node != me and node:
                    by_node.setdefault(node, []).append(effect)
        for node, items in by_node.items():
            self.bus.publish(node_channel(node), encode(Output(to_wire(items))))
