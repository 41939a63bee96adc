"""The gateway proxy and the runtime's remote hook, without Redis: what a node publishes for
its connections, what the owner hands its service, and who is told to reconnect (1012)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from parlour.cluster.gateway import SERVICE_RESTART, ClusterService
from parlour.cluster.wire import (
    CONNECTED,
    DISCONNECTED,
    RECEIVED,
    Input,
    Output,
    decode,
    encode,
    from_wire,
    to_wire,
)
from parlour.core.effects import Broadcast, Close, ConnId, Effect, Send, Store
from parlour.storage import MetaRow
from parlour.transport.runtime import Runtime
from tests.transport.test_broadcast import Wire

ME, OTHER = 1, 2


def conn(node: int, number: int) -> ConnId:
    return node << 32 | number


@dataclass
class Echo:
    """A service that answers every frame to its sender and tells everyone of each arrival."""

    calls: list[tuple[str, ConnId]] = field(default_factory=list)
    conns: list[ConnId] = field(default_factory=list)

    def connected(self, c: ConnId, now: float) -> list[Effect]:
        self.calls.append(("connected", c))
        self.conns.append(c)
        return [Broadcast(list(self.conns), b"hello")]

    def received(self, c: ConnId, data: str | bytes, now: float) -> list[Effect]:
        self.calls.append(("received", c))
        return [Send(c, data.encode() if isinstance(data, str) else data)]

    def disconnected(self, c: ConnId, now: float) -> list[Effect]:
        self.calls.append(("disconnected", c))
        self.conns.remove(c)
        return []

    def tick(self, now: float) -> list[Effect]:
        self.calls.append(("tick", 0))
        return []

    def shutdown(self, now: float) -> list[Effect]:
        return [Broadcast(list(self.conns), b"bye"), Store([MetaRow("k", "v")])]


@dataclass
class Harness:
    published: list[Input] = field(default_factory=list)
    executed: list[list[Effect]] = field(default_factory=list)
    valid: bool = True

    def service(self) -> ClusterService:
        return ClusterService(
            "async",
            ME,
            self.published.append,
            lambda effects, service, origin=None: self.executed.append(effects),
            lambda: self.valid,
        )


def test_a_gateway_publishes_its_connections_events_in_order() -> None:
    harness = Harness()
    service = harness.service()
    service.epoch, service.owner = 4, OTHER
    c = conn(ME, 1)
    assert service.connected(c, 0) == []
    assert service.received(c, "one", 0) == [] and service.received(c, b"two", 0) == []
    assert service.disconnected(c, 0) == []
    assert service.received(c, "late", 0) == []  # gone: nothing more is published
    assert [(m.kind, m.conn, m.epoch, m.text, m.data) for m in harness.published] == [
        (CONNECTED, c, 4, None, None),
        (RECEIVED, c, 4, "one", None),
        (RECEIVED, c, 4, None, b"two"),
        (DISCONNECTED, c, 4, None, None),
    ]
    # Messages survive the wire unchanged.
    assert [decode(encode(m)) for m in harness.published] == harness.published
    assert service.tick(0) == []


def test_the_owner_hands_local_and_remote_inputs_to_its_service() -> None:
    harness = Harness()
    service, echo = harness.service(), Echo()
    service.promote(echo, 7)
    local, remote = conn(ME, 1), conn(OTHER, 1)
    assert service.connected(local, 0) == [Broadcast([local], b"hello")]
    assert harness.published == []  # local connections never touch Redis
    service.feed(Input("async", 7, CONNECTED, remote), 0)
    service.feed(Input("async", 7, RECEIVED, remote, text="hi"), 0)
    service.feed(Input("async", 6, RECEIVED, remote, text="for an old owner"), 0)
    assert echo.calls == [("connected", local), ("connected", remote), ("received", remote)]
    assert harness.executed[-1] == [Send(remote, b"hi")]
    assert service.remote == {OTHER: {remote}}
    service.node_gone(OTHER, 0)
    assert echo.calls[-1] == ("disconnected", remote) and service.remote == {}
    service.tick(0)
    assert echo.calls[-1] == ("tick", 0)
    # Shutting down says goodbye to this node's connections only (and still stores).
    echo.conns.append(conn(OTHER, 9))
    assert service.shutdown(0) == [Broadcast([local], b"bye"), Store([MetaRow("k", "v")])]


@dataclass
class Farewell(Echo):
    """A service with something to tell every connection, any node's, before it stops (as the
    /async hub tells players waiting for quick play that their queues end)."""

    def farewell(self, now: float) -> list[Effect]:
        return [Send(c, b"your queues end") for c in self.conns]


def test_a_stopping_owner_says_its_farewell_to_every_nodes_connections() -> None:
    harness = Harness()
    service, inner = harness.service(), Farewell()
    service.promote(inner, 7)
    local, remote = conn(ME, 1), conn(OTHER, 1)
    service.connected(local, 0)
    service.feed(Input("async", 7, CONNECTED, remote), 0)
    assert service.shutdown(0) == [
        Send(local, b"your queues end"),
        Send(remote, b"your queues end"),
        Broadcast([local], b"bye"),
        Store([MetaRow("k", "v")]),
    ]


def test_a_takeover_closes_connections_of_earlier_owners_with_1012() -> None:
    harness = Harness()
    service = harness.service()
    service.epoch, service.owner = 3, OTHER
    old = conn(ME, 1)
    service.connected(old, 0)
    service.taken_over(OTHER, 4)
    assert harness.executed == [[Close(old, SERVICE_RESTART, "service restart")]]
    new = conn(ME, 2)
    service.connected(new, 0)
    assert harness.published[-1] == Input("async", 4, CONNECTED, new)
    service.taken_over(OTHER, 4)  # announced again: nothing more to close
    assert len(harness.executed) == 1
    # This node takes over at 5: its connections were the old owner's; they reconnect too.
    service.promote(Echo(), 5)
    assert harness.executed[-1] == [Close(new, SERVICE_RESTART, "service restart")]


def test_lost_messages_close_the_connections_whose_messages_cross_redis() -> None:
    """After a gap on the bus (Redis restarted, a publication failed): a gateway closes what it
    attached to an owner with 1012 and tells the owner they left; the owner closes the other
    nodes' connections through their nodes, and keeps its own."""
    harness = Harness()
    gateway = harness.service()
    gateway.epoch, gateway.owner = 3, OTHER
    first, second = conn(ME, 1), conn(ME, 2)
    gateway.connected(first, 0)
    gateway.connected(second, 0)
    harness.published.clear()
    gateway.messages_lost()
    assert harness.published == [
        Input("async", 3, DISCONNECTED, first),
        Input("async", 3, DISCONNECTED, second),
    ]
    assert harness.executed == [
        [Close(first, SERVICE_RESTART, "service restart"), Close(second, SERVICE_RESTART, "service restart")]
    ]
    assert gateway.attached == {} and gateway.received(first, "late", 0) == []

    harness = Harness()
    owner, echo = harness.service(), Echo()
    owner.promote(echo, 7)
    local, remote = conn(ME, 1), conn(OTHER, 1)
    owner.connected(local, 0)
    owner.feed(Input("async", 7, CONNECTED, remote), 0)
    harness.executed.clear()
    owner.messages_lost()
    assert harness.executed == [[Close(remote, SERVICE_RESTART, "service restart")]]
    assert owner.inner is echo and owner.attached == {local: 7}


def test_a_lapsed_lease_stops_the_owner_at_once() -> None:
    harness = Harness()
    service, echo = harness.service(), Echo()
    service.promote(echo, 2)
    lost: list[bool] = []
    service.on_lost = lambda: lost.append(True)
    local = conn(ME, 1)
    service.connected(local, 0)
    harness.valid = False
    assert service.received(local, "too late", 0) == []
    assert ("received", local) not in echo.calls
    assert service.inner is None and lost == [True]
    assert harness.executed[-1] == [Close(local, SERVICE_RESTART, "service restart")]
    service.feed(Input("async", 2, RECEIVED, conn(OTHER, 1), text="x"), 0)
    assert ("received", conn(OTHER, 1)) not in echo.calls


def test_the_runtime_hands_other_nodes_effects_to_the_cluster_after_local_ones() -> None:
    async def main() -> None:
        runtime = Runtime(clock=lambda: 0.0)
        forwarded: list[list[Effect]] = []
        runtime.remote = forwarded.append
        wire = Wire(runtime)
        local, remote = conn(ME, 1), conn(OTHER, 1)
        wire.add(local)
        runtime.execute(
            [
                Send(local, b"a"),
                Send(remote, b"b"),
                Broadcast([local, remote], b"c", {remote: b"c'"}),
                Close(remote, 1000, ""),
            ]
        )
        await wire.settle()
        assert b"".join(b"".join(w) for w in wire.writes[local]).count(b"a") == 1
        assert forwarded == [
            [Send(remote, b"b"), Broadcast([remote], b"c", {remote: b"c'"}), Close(remote, 1000, "")]
        ]
        # And back on the other node: the same effects.
        assert from_wire(decode(encode(Output(to_wire(forwarded[0])))).effects) == forwarded[0]  # type: ignore[union-attr]
        wire.stop()

    asyncio.run(main())


def test_one_node_forwards_nothing() -> None:
    async def main() -> None:
        runtime = Runtime(clock=lambda: 0.0)
        assert runtime.remote is None
        runtime.execute([Send(conn(OTHER, 1), b"nobody")])  # no outbox, no cluster: dropped

    asyncio.run(main())


def test_a_redis_that_restarted_empty_counts_epochs_again_and_is_followed() -> None:
    harness = Harness()
    service = harness.service()
    service.taken_over(OTHER, 9)
    attached = conn(ME, 1)
    service.connected(attached, 0)
    service.taken_over(3, 1)  # a new owner, epoch 1 again
    assert harness.executed[-1] == [Close(attached, SERVICE_RESTART, "service restart")]
    fresh = conn(ME, 2)
    service.connected(fresh, 0)
    assert harness.published[-1] == Input("async", 1, CONNECTED, fresh)


def test_an_input_nobody_hears_closes_its_connection_with_1012() -> None:
    """The owner a gateway knows of is not listening yet (it is still restoring) or is gone: a
    frame for it would get no answer, so its connection reconnects."""
    harness = Harness()
    service = harness.service()
    service.epoch, service.owner = 3, OTHER
    c, d = conn(ME, 1), conn(ME, 2)
    service.connected(c, 0)
    service.connected(d, 0)
    service.received(c, "lost", 0)
    service.unheard(harness.published[-1])
    assert harness.executed == [[Close(c, SERVICE_RESTART, "service restart")]]
    # The owner is told it left, in case the frame reached it after all (Redis answered late).
    assert harness.published[-2:] == [
        Input("async", 3, RECEIVED, c, text="lost"),
        Input("async", 3, DISCONNECTED, c),
    ]
    assert service.received(c, "after", 0) == [] and harness.published[-1].kind == DISCONNECTED
    service.unheard(Input("async", 2, RECEIVED, d, text="meant for an earlier owner"))
    assert len(harness.executed) == 1  # d is attached under epoch 3: not that input's


@dataclass
class FixedRouter:
    """Routes every frame of ``conn`` to ``to``; counts the connections it forgets."""

    conn: ConnId
    to: str
    forgotten: list[ConnId] = field(default_factory=list)

    def route(self, c: ConnId, data: str | bytes, now: float) -> tuple[str, bytes] | list[Effect] | None:
        if c != self.conn:
            return None
        if data == "refuse":
            return [Send(c, b"try again")]
        return self.to, data.encode() if isinstance(data, str) else data

    def forget(self, c: ConnId) -> None:
        self.forgotten.append(c)


def test_a_routed_frame_goes_to_its_shard_as_a_note_not_to_the_owner() -> None:
    harness = Harness()
    service = harness.service()
    service.owner = OTHER
    c, d = conn(ME, 1), conn(ME, 2)
    notes: list[tuple[str, bytes]] = []
    service.router = FixedRouter(c, "async/3")
    service.send_note = lambda to, data: notes.append((to, data))
    service.connected(c, 0)
    service.connected(d, 0)
    assert service.received(c, "commit", 0) == [] and notes == [("async/3", b"commit")]
    assert service.received(c, "refuse", 0) == [Send(c, b"try again")]
    service.received(d, "lobby", 0)
    assert [m.text for m in harness.published if m.kind == RECEIVED] == ["lobby"]
    service.disconnected(c, 0)
    assert service.router.forgotten == [c]  # type: ignore[union-attr]


def test_a_frame_the_router_answers_is_shown_at_once_never_held_behind_a_commit() -> None:
    """The router answers a frame itself (its game's shard has no owner now): the answer stores
    nothing, so it is shown at once; held behind this node's own pending commit, it would be
    dropped if that commit failed (the node handing a shard over while its store is away)."""
    harness = Harness()
    service = harness.service()
    service.owner = OTHER
    c = conn(ME, 1)
    shown: list[Effect] = []
    service.router = FixedRouter(c, "async/3")
    service.show = shown.extend
    service.connected(c, 0)
    assert service.received(c, "refuse", 0) == []
    assert shown == [Send(c, b"try again")]


@dataclass
class Noted(Echo):
    notes: list[bytes] = field(default_factory=list)

    def noted(self, data: bytes, now: float) -> list[Effect]:
        self.notes.append(data)
        return [Send(conn(OTHER, 1), data)]


def test_notes_reach_the_service_only_while_this_node_owns_it() -> None:
    harness = Harness()
    service, inner = harness.service(), Noted()
    assert not service.noted(b"early", 0)  # nobody here to take it
    service.promote(inner, 1)
    assert service.noted(b"placed", 0) and inner.notes == [b"placed"]
    assert harness.executed[-1] == [Send(conn(OTHER, 1), b"placed")]
    harness.valid = False  # the lease lapsed
    assert not service.noted(b"late", 0) and inner.notes == [b"placed"]


def test_a_released_service_has_no_owner_until_the_next_takeover() -> None:
    service = Harness().service()
    service.taken_over(OTHER, 5)
    assert service.owner == OTHER
    service.released(3)  # another node's release says nothing of this owner
    assert service.owner == OTHER
    service.released(OTHER)
    assert service.owner == 0
    service.taken_over(OTHER, 6)
    assert service.owner == OTHER


def test_a_gateway_that_knows_no_owner_closes_a_connection_at_once() -> None:
    """Nobody would answer its frames (the owner let the service go and no takeover is announced
    yet): the client is told to reconnect at once, not left waiting."""
    harness = Harness()
    service = harness.service()
    c = conn(ME, 1)
    assert service.connected(c, 0) == [Close(c, SERVICE_RESTART, "service restart")]
    assert harness.published == [] and service.attached == {}
    assert service.received(c, "sign in", 0) == [] and harness.published == []


def test_an_owner_let_go_closes_the_connections_attached_to_it() -> None:
    """The owner said it let the service go, or its liveness key expired: the sessions of the
    connections attached to it are gone, their clients reconnect now, not at the next takeover."""
    harness = Harness()
    service = harness.service()
    service.taken_over(OTHER, 5)
    c = conn(ME, 1)
    service.connected(c, 0)
    service.released(OTHER)
    assert harness.executed == [[Close(c, SERVICE_RESTART, "service restart")]]
    assert service.attached == {} and service.received(c, "late", 0) == []
    assert [m.kind for m in harness.published] == [CONNECTED]


def test_an_owner_that_lost_its_lease_knows_no_owner() -> None:
    harness = Harness()
    service = harness.service()
    service.promote(Echo(), 2)
    assert service.owner == ME
    harness.valid = False
    c = conn(ME, 1)
    assert service.connected(c, 0) == [Close(c, SERVICE_RESTART, "service restart")]
    assert service.owner == 0 and harness.published == []


@dataclass
class Thinker(Echo):
    thoughts: list[tuple[tuple[str, int], int | None]] = field(default_factory=list)

    def thought(self, token: tuple[str, int], choice: int | None, now: float) -> list[Effect]:
        self.thoughts.append((token, choice))
        return [Send(conn(ME, 1), b"moved")]


def test_a_robots_decision_reaches_the_service_only_while_this_node_owns_it() -> None:
    """The runtime hands a Think's answer to the service that made it: the cluster's wrapper
    passes it to the real service while it owns it (a hard robot would wait forever otherwise)."""
    harness = Harness()
    service, inner = harness.service(), Thinker()
    assert service.thought(("g", 1), 3, 0) == []  # nobody here to take it
    service.promote(inner, 1)
    assert service.thought(("g", 1), 3, 0) == [Send(conn(ME, 1), b"moved")]
    harness.valid = False  # the lease lapsed: a later owner asks again
    assert service.thought(("g", 2), None, 0) == [] and inner.thoughts == [(("g", 1), 3)]
