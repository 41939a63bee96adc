"""The proxy service a node puts in front of each stateful websocket service.

On the owner (the lease holder), :class:`ClusterService` hands every input to the real service,
as a single node does, and the owner's runtime sends the effects for other nodes' connections
over Redis (Runtime.remote). On every other node it is a gateway: connection events are
published to the owner's channel, tagged with the epoch of the owner they are meant for, and
nothing is kept but which connections are attached under which epoch. When a new owner takes
over (a new epoch), or the owner is known to have let the service go (it said so, or its
liveness key expired), every connection attached to it is closed with 1012 (service restart):
its session lived on the old owner, and the client reconnects to carry on. While no owner is
known, a connection is closed so at once: nobody would answer it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Final, Protocol

from parlour.cluster.wire import CONNECTED, DISCONNECTED, RECEIVED, Input
from parlour.core.effects import Broadcast, Close, ConnId, Effect, Send, Store
from parlour.core.service import Service
from parlour.storage import Record
from parlour.storage import Store as StoreBackend

__all__ = ["SERVICE_RESTART", "ClusterService", "Router", "node_of"]

log = logging.getLogger("parlour.cluster")

#: RFC 6455 7.4.1 (IANA registry): the service is restarting; the client may reconnect.
SERVICE_RESTART: Final = 1012
#: Connection ids are ``node << NODE_SHIFT | local number``: unique across the cluster.
NODE_SHIFT: Final = 32
#: Seconds a service this node gave up is kept to answer its failed commits: far beyond any
#: commit's time (a stop waits a lease for the store, a commit times out in seconds).
RETIRED_FOR: Final = 60.0


def node_of(conn: ConnId) -> int:
    return conn >> NODE_SHIFT


class Router(Protocol):
    """Routes a connection's frame past the service's owner (placement.Router for /async)."""

    def route(
        self, conn: ConnId, data: str | bytes, now: float
    ) -> tuple[str, bytes] | list[Effect] | None: ...

    def forget(self, conn: ConnId) -> None: ...


class ClusterService:
    """One stateful service of a cluster node: the real one while this node owns it, a gateway
    to the owner otherwise. ``publish(input)`` sends an input to the owner (in order);
    ``execute`` carries out effects on this node (Runtime.execute); ``held()`` says whether the
    lease may still be acted on (checked before every input the owner handles)."""

    def __init__(
        self,
        name: str,
        node: int,
        publish: Callable[[Input], None],
        execute: Callable[..., None],
        held: Callable[[], bool],
    ) -> None:
        self.name = name
        self.node = node
        self.publish = publish
        self.execute = execute
        self.held = held
        #: The real service, while this node owns it.
        self.inner: Service | None = None
        #: The real service of the tenure this node last gave up, until the next one begins:
        #: its commits still under way may fail, and their senders must hear it.
        self.retired: Service | None = None
        self._retired_since = 0.0
        #: The epoch and the node of the owner this node knows of (0: none yet).
        self.epoch = 0
        self.owner = 0
        #: This node's connections, with the epoch they were attached under.
        self.attached: dict[ConnId, int] = {}
        #: On the owner: other nodes' connections known to the real service, by node.
        self.remote: dict[int, set[ConnId]] = {}
        #: Called when this node stops owning the service (lease lost or lapsed).
        self.on_lost: Callable[[], None] | None = None
        #: What /healthz says of the node (which services it owns), the same on every service.
        self.cluster_status: Callable[[], dict[str, Any]] = dict
        #: Where a frame goes before the owner sees it (/async: a signed-in connection's request
        #: for a started game goes to the game's shard): ``(owner, note)`` to send as a note,
        #: effects to carry out here instead, or None for the owner as usual.
        self.router: Router | None = None
        #: Sends a note to the owner of another service (set by the node).
        self.send_note: Callable[[str, bytes], None] = lambda to, data: None
        #: Carries out effects at once, never held behind this node's own commits (set by the
        #: node: Runtime.show); None: returned to the transport as any input's effects.
        self.show: Callable[[list[Effect]], None] | None = None

    @property
    def owning(self) -> bool:
        return self.inner is not None

    # -- The Service protocol ------------------------------------------------------------------

    def connected(self, conn: ConnId, now: float) -> list[Effect]:
        inner = self.acting()
        if inner is not None:
            self.attached[conn] = self.epoch
            return inner.connected(conn, now)
        if self.owner == 0:
            return [_restart(conn)]  # nobody owns the service now: try again in a moment
        self.attached[conn] = self.epoch
        self.publish(Input(self.name, self.epoch, CONNECTED, conn))
        return []

    def received(self, conn: ConnId, data: str | bytes, now: float) -> list[Effect]:
        epoch = self.attached.get(conn)
        if epoch is None:
            return []  # closed by a takeover: nothing more goes anywhere
        router = self.router
        if router is not None:
            route = router.route(conn, data, now)
            if type(route) is tuple:
                self.send_note(*route)
                return []
            if route is not None:
                # Answered here (no owner for the game's shard now, a flood): shown at once. It
                # stores nothing, and held behind a commit of this node's that fails it would be
                # dropped with the sends that commit refuses, leaving the request unanswered.
                if self.show is not None:
                    self.show(route)  # type: ignore[arg-type]
                    return []
                return route  # type: ignore[return-value]
        inner = self.acting()
        if inner is not None:
            return inner.received(conn, data, now)
        if conn not in self.attached:
            return []  # closed as this node found its lease lapsed
        if isinstance(data, str):
            self.publish(Input(self.name, epoch, RECEIVED, conn, text=data))
        else:
            self.publish(Input(self.name, epoch, RECEIVED, conn, data=data))
        return []

    def disconnected(self, conn: ConnId, now: float) -> list[Effect]:
        epoch = self.attached.pop(conn, None)
        if epoch is None:
            return []
        if self.router is not None:
            self.router.forget(conn)
        inner = self.acting()
        if inner is not None:
            return inner.disconnected(conn, now)
        self.publish(Input(self.name, epoch, DISCONNECTED, conn))
        return []

    def tick(self, now: float) -> list[Effect]:
        """Timers and checks run on the owner only: once across the cluster."""
        if self.retired is not None:
            # Long after any commit of that tenure has been answered, its memory goes.
            self._retired_since = self._retired_since or now
            if now - self._retired_since > RETIRED_FOR:
                self.retired, self._retired_since = None, 0.0
        inner = self.acting()
        return [] if inner is None else inner.tick(now)

    def shutdown(self, now: float) -> list[Effect]:
        """This node stops: its own connections hear it; other nodes' connections stay open
        (a new owner takes over and closes them with 1012), told only the service's
        ``farewell(now)``, if it has one."""
        inner = self.inner
        if inner is None:
            return []
        # What the service says to every connection, this node's or not, before its state goes
        # (/async: quick play's queues end, and a new owner will not know them).
        farewell = getattr(inner, "farewell", None)
        told: list[Effect] = farewell(now) if callable(farewell) else []
        return told + self.local_only(inner.shutdown(now))

    def reload(self, records: list[Record], store: StoreBackend) -> object:
        inner = self.inner if self.inner is not None else self.retired
        return None if inner is None else inner.reload(records, store)

    def store_failed(
        self, records: list[Record], conns: list[ConnId], reload: Any, now: float
    ) -> list[Effect]:
        inner = self.inner
        if inner is not None:
            return inner.store_failed(records, conns, reload, now)
        if self.retired is None:
            return []
        # A commit of the tenure this node gave up (a shard handed over, a lease lost, while
        # the commit was under way) failed: its senders are still told, each answer echoing
        # its request; nothing else of that tenure goes out (its state is the next owner's).
        told = self.retired.store_failed(records, conns, reload, now)
        return [effect for effect in told if type(effect) is Send]

    def stats(self) -> dict[str, Any]:
        counts = getattr(self.inner, "stats", None)
        return {**(counts() if callable(counts) else {}), **self.cluster_status()}

    def thought(self, token: tuple[str, int], choice: int | None, now: float) -> list[Effect]:
        """A robot's decision made away from the event loop (a Think effect's answer), for the
        real service if this node still owns it (a later tenure's games check the token and
        drop what is not theirs)."""
        answer = getattr(self.acting(), "thought", None)
        return [] if answer is None else answer(token, choice, now)

    # -- Owner side ----------------------------------------------------------------------------

    def feed(self, message: Input, now: float) -> None:
        """An input from another node's gateway: handled if it is meant for this tenure."""
        inner = self.acting()
        if inner is None or message.epoch != self.epoch:
            return  # meant for another owner: that connection is closed at the takeover
        conn, kind = message.conn, message.kind
        try:
            if kind == CONNECTED:
                self.remote.setdefault(node_of(conn), set()).add(conn)
                effects = inner.connected(conn, now)
            elif kind == RECEIVED:
                data: str | bytes = message.text if message.text is not None else (message.data or b"")
                effects = inner.received(conn, data, now)
            elif kind == DISCONNECTED:
                self.remote.get(node_of(conn), set()).discard(conn)
                effects = inner.disconnected(conn, now)
            else:
                return
        except Exception:  # a service answers its own errors; this is a last resort
            log.exception("%s failed on an input from connection %d", self.name, conn)
            return
        # With its connection: if its records cannot be stored, that request is answered too.
        self.execute(effects, self, conn)

    def noted(self, data: bytes, now: float) -> bool:
        """A note for this service: handled if this node owns it and the service takes notes
        (False otherwise: the sender may need to hear that nobody took it)."""
        inner = self.acting()
        handle = getattr(inner, "noted", None)
        if handle is None:
            return False
        try:
            effects = handle(data, now)
        except Exception:  # a service answers its own errors; this is a last resort
            log.exception("%s failed on a note", self.name)
            return True
        self.execute(effects, self)
        return True

    def unheard(self, message: Input) -> None:
        """An input nobody received, or that Redis did not confirm in time: the owner it was
        meant for is not listening (it is still restoring the service, or gone), or Redis does
        not answer. Its connection would wait for ever: it reconnects. The owner is told it
        left, after its inputs, in case they reached it after all."""
        if message.kind != DISCONNECTED and self.attached.get(message.conn) == message.epoch:
            del self.attached[message.conn]
            self.execute([_restart(message.conn)], None)
            self.publish(Input(self.name, message.epoch, DISCONNECTED, message.conn))

    def released(self, node: int) -> None:
        """Node ``node`` no longer owns the service (it handed it back or let it go, or its
        liveness key expired): nobody does until the next takeover, and the sessions of the
        connections attached to it are gone with it."""
        if self.owner == node and node != self.node:
            self.owner = 0
            self._close_attached(lambda attached: True)

    def node_gone(self, node: int, now: float) -> None:
        """Node ``node`` died: its connections are gone for the real service too."""
        for conn in sorted(self.remote.pop(node, set())):
            self.feed(Input(self.name, self.epoch, DISCONNECTED, conn), now)

    def promote(self, inner: Service, epoch: int) -> None:
        """This node owns the service from ``epoch`` on, with ``inner`` restored from the store.
        Its own connections were attached to the previous owner: they reconnect."""
        self._close_attached(lambda attached: True)
        self.inner, self.epoch, self.owner, self.remote = inner, epoch, self.node, {}
        self.retired, self._retired_since = None, 0.0

    def demote(self, reason: str) -> None:
        """This node no longer owns the service: its state is dropped (the next owner restores
        it from the store) and its own connections reconnect."""
        if self.inner is None:
            return
        log.warning("%s: no longer the owner (epoch %d): %s", self.name, self.epoch, reason)
        # Nobody owns it that this node knows of, until a takeover is announced. The service
        # is kept aside, to answer the senders of its commits still under way if they fail.
        self.retired, self.inner, self.remote, self.owner = self.inner, None, {}, 0
        self._retired_since = 0.0
        self._close_attached(lambda attached: True)
        if self.on_lost is not None:
            self.on_lost()

    def taken_over(self, node: int, epoch: int) -> None:
        """Node ``node`` announced it owns the service from ``epoch`` on. Every announcement
        other than the current one is taken as the truth (Redis orders them as it ordered the
        acquisitions; and a Redis that restarted empty counts epochs from 1 again)."""
        if node == self.node or (epoch == self.epoch and node == self.owner):
            return
        self.demote(f"node {node} took over at epoch {epoch}")
        self.epoch, self.owner = epoch, node
        self._close_attached(lambda attached: attached != epoch)

    def messages_lost(self) -> None:
        """Messages between this node and the others may have been lost (Redis restarted, a
        publication failed): every connection whose messages cross Redis reconnects, as after
        a takeover. On a gateway, those attached here (the owner is told they left, in case
        it kept its tenure); on the owner, other nodes' connections, closed through their
        nodes (which then tell it they left)."""
        if self.inner is None:
            for conn, epoch in self.attached.items():
                self.publish(Input(self.name, epoch, DISCONNECTED, conn))
            self._close_attached(lambda attached: True)
            return
        remote = sorted(conn for conns in self.remote.values() for conn in conns)
        if remote:
            self.execute([Close(conn, SERVICE_RESTART, "service restart") for conn in remote], None)

    def local_only(self, effects: list[Effect]) -> list[Effect]:
        """``effects`` without what is meant for other nodes' connections."""
        node = self.node
        kept: list[Effect] = []
        for effect in effects:
            if type(effect) is Broadcast:
                conns = [conn for conn in effect.conns if node_of(conn) == node]
                if conns:
                    kept.append(Broadcast(conns, effect.data, effect.instead))
            elif type(effect) is Send or type(effect) is Close:
                if node_of(effect.conn) == node:
                    kept.append(effect)
            elif type(effect) is Store:
                kept.append(effect)
        return kept

    # -- Inside --------------------------------------------------------------------------------

    def acting(self) -> Service | None:
        """The real service if this node owns it and its lease is still valid; a lapsed lease
        demotes at once (no input is handled, nothing is committed, past its validity)."""
        inner = self.inner
        if inner is not None and not self.held():
            self.demote("the lease lapsed")
            return None
        return inner

    def _close_attached(self, which: Callable[[int], bool]) -> None:
        closing = [conn for conn, epoch in self.attached.items() if which(epoch)]
        for conn in closing:
            del self.attached[conn]
        if closing:
            self.execute([_restart(conn) for conn in closing], None)


def _restart(conn: ConnId) -> Close:
    return Close(conn, SERVICE_RESTART, "service restart")
