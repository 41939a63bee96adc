"""Every request answered (docs/cluster.md, "Every request is answered"), without Redis: the
notes a node waits to see answered, how a node routes and answers them around an owner's
tenure, and the bus giving up on a Redis that does not answer. Clocks are injected."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from parlour.cluster.awaiting import Awaited, Awaiting
from parlour.cluster.gateway import ClusterService
from parlour.cluster.node import ClusterNode
from parlour.cluster.redisbus import Bus
from parlour.cluster.wire import Note, Output, Released, Takeover, WireSend, decode, encode
from parlour.core.effects import ConnId, Effect, Send
from parlour.protocols.async_ws.shards.placement import (
    Directory,
    Gather,
    Online,
    Routed,
    Router,
    Watch,
    answer_keys,
    awaited,
    encode_note,
    try_again,
    unanswered,
    unheard,
)
from parlour.protocols.async_ws.wire.messages import ErrorRequest
from parlour.protocols.async_ws.wire.messages import encode as encode_message

ME, OWNER, OTHER = 1, 2, 3
SHARD, NEXT, HUB = "async/5", "async/6", "async"


def conn(node: int, number: int) -> ConnId:
    return node << 32 | number


def commit(rid: str | None, game_id: int = 29) -> str:
    text = f'{{"type":"CommitActionRequest","game_id":{game_id},"turn_index":1'
    return text + (f',"request_id":"{rid}"}}' if rid is not None else "}")


def routed(c: ConnId, rid: str | None, game_id: int = 29) -> bytes:
    return encode_note(Routed(c, 7, commit(rid, game_id)))


def test_a_routed_request_is_awaited_until_a_frame_echoes_its_request_id() -> None:
    c = conn(ME, 1)
    assert awaited(routed(c, "r1")) == (c, "r1", False, True)  # a commit always has an answer
    assert awaited(routed(c, None)) == (c, ("game", 29), False, True)  # no request_id: any word of its game
    confirmation = encode_note(Routed(c, 7, '{"type":"GameOutcomeConfirmationRequest","game_id":29}'))
    assert awaited(confirmation) == (c, ("game", 29), False, False)  # no answer of its own
    assert awaited(encode_note(Online(7, c, True))) is None  # answers nobody
    waiting = Awaiting()
    first = Awaited(c, "r1", SHARD, 4, routed(c, "r1"), 0.0)
    second = Awaited(c, ("game", 31), SHARD, 4, routed(c, None, 31), 0.0)
    waiting.add(first)
    waiting.add(second)
    # Another answer for the connection ends neither wait; the answer to r1 ends its own.
    waiting.replied(c, answer_keys(b'{"type":"LobbyGameListRequest","game_list":""}'))
    waiting.replied(c, answer_keys(b'{"type":"ActionCommitedRequest","game_id":29,"request_id":"r9"}'))
    assert waiting.by_conn == {c: [first, second]}
    refused = try_again(c, commit("r1"), "moving").data
    waiting.replied(c, answer_keys(refused))
    assert waiting.by_conn == {c: [second]}
    assert not waiting.take(first)  # answered already: not answered again
    waiting.replied(c, answer_keys(b'{"type":"ActionRequiredRequest","game_id":31,"turn_index":2}'))
    assert not waiting


def test_a_tenure_that_ends_leaves_what_it_did_not_answer() -> None:
    c, d = conn(ME, 1), conn(ME, 2)
    waiting = Awaiting()
    old = Awaited(c, "a", SHARD, 4, b"a", 0.0)
    new = Awaited(d, "b", SHARD, 6, b"b", 1.0)
    elsewhere = Awaited(d, "c", "async/6", 4, b"c", 2.0)
    for entry in (old, new, elsewhere):
        waiting.add(entry)
    assert waiting.ended(SHARD, 6) == [old]  # a new owner at 6 does not take 4's
    assert waiting.ended(SHARD, 0) == [new]  # nobody owns it: nobody answers
    waiting.forget(2.0, 0.0)
    assert waiting.by_conn == {d: [elsewhere]}
    waiting.forget(2.5, 0.0)  # given up on (an answer not recognised, or none of its own)
    assert not waiting


@dataclass
class FakeRuntime:
    executed: list[Effect] = field(default_factory=list)
    now: float = 0.0
    #: A commit is failing: what is executed is held behind it (and dropped once it is refused:
    #: sends that no input's refusal answers are not shown), what is shown goes out at once.
    holding: bool = False
    held: list[Effect] = field(default_factory=list)

    def execute(self, effects: list[Effect], service: Any = None, origin: Any = None) -> None:
        (self.held if self.holding else self.executed).extend(effects)

    def clock(self) -> float:
        return self.now

    def show(self, effects: list[Effect]) -> None:
        self.executed.extend(effects)


def node_with_a_shard(valid: list[bool]) -> tuple[ClusterNode, FakeRuntime, list[tuple[str, bytes, Any]]]:
    """Node ME, with the shard SHARD (owned by OWNER at epoch 4 as far as it knows); what it
    publishes is recorded, with the callback told if nobody hears it."""
    runtime = FakeRuntime()
    node = ClusterNode(
        "redis://127.0.0.1:1/0",
        runtime,  # type: ignore[arg-type]
        {},
        ttl=3.0,
        unheard=lambda to, data: unheard(data),
        unanswered=lambda to, data: unanswered(data),
        awaited=awaited,
        answer_keys=answer_keys,
    )
    node.node = ME
    published: list[tuple[str, bytes, Any]] = []
    node.bus.publish = lambda channel, data, callback=None: published.append((channel, data, callback))  # type: ignore[method-assign]
    service = ClusterService(SHARD, ME, lambda message: None, runtime.execute, lambda: valid[0])
    service.owner, service.epoch = OWNER, 4
    node.services[SHARD] = service
    return node, runtime, published


def test_a_request_routed_to_an_owner_that_stops_is_answered_by_its_router() -> None:
    node, runtime, published = node_with_a_shard([True])
    c, d = conn(ME, 1), conn(ME, 2)
    node.notes.send(SHARD, routed(c, "answered"))
    node.notes.send(SHARD, routed(d, "frozen"))
    # Each goes to the owner it is meant for, tagged with its epoch.
    notes = [decode(data) for _, data, _ in published]
    assert [(n.to, n.epoch) for n in notes if type(n) is Note] == [(SHARD, 4), (SHARD, 4)]
    reply = encode_message(ErrorRequest(code="GAME_OVER", message="no", request_id="answered", game_id=29))
    node._deliver("parlour:node:1", encode(Output([WireSend(c, reply)])))
    assert runtime.executed == [Send(c, reply)] and list(node.notes.awaiting.by_conn) == [d]
    # The owner stops: another node takes the shard over. The request it never answered is
    # answered here, with its request_id: its outcome unknown (the owner may have stored it
    # before it stopped); the answered one is not answered again.
    runtime.executed.clear()
    node._deliver("parlour:cluster", encode(Takeover(SHARD, OTHER, 6)))
    assert runtime.executed == unanswered(routed(d, "frozen"))
    assert b"INTERNAL_ERROR" in runtime.executed[0].data and b"frozen" in runtime.executed[0].data
    assert not node.notes.awaiting
    # Told later that nobody heard it (Redis answering late), it is not answered twice.
    published[1][2]()
    assert len(runtime.executed) == 1


def test_a_request_for_a_shard_without_owner_is_answered_at_once() -> None:
    node, runtime, published = node_with_a_shard([True])
    c = conn(ME, 1)
    node._deliver("parlour:cluster", encode(Released(SHARD, OWNER)))
    node.notes.send(SHARD, routed(c, "nobody"))
    assert published == [] and runtime.executed == [
        try_again(c, commit("nobody"), "the game is moving to another node; send it again")
    ]
    # Nobody heard it: answered once, at once.
    node._deliver("parlour:cluster", encode(Takeover(SHARD, OTHER, 6)))
    runtime.executed.clear()
    node.notes.send(SHARD, routed(c, "unheard"))
    published[-1][2]()
    assert runtime.executed == [
        try_again(c, commit("unheard"), "the game is moving to another node; send it again")
    ]
    assert not node.notes.awaiting


def test_an_owner_that_lost_its_lease_drops_the_notes_meant_for_it() -> None:
    """A node frozen past its lease wakes to find notes for its shard in its socket: it learns
    its lease lapsed and answers none of them (their senders do); a note meant for another
    tenure is never taken."""

    @dataclass
    class Shard:
        notes: list[bytes] = field(default_factory=list)

        def noted(self, data: bytes, now: float) -> list[Effect]:
            self.notes.append(data)
            return [Send(conn(OTHER, 1), b"answer")]

    valid = [True]
    node, runtime, _ = node_with_a_shard(valid)
    service, shard = node.services[SHARD], Shard()
    service.promote(shard, 4)  # type: ignore[arg-type]
    mine = routed(conn(OTHER, 1), "meant for 4")
    node._deliver("parlour:async/5:owner", encode(Note(SHARD, mine, OTHER, 4)))
    node._deliver("parlour:async/5:owner", encode(Note(SHARD, b"for 3", OTHER, 3)))
    assert shard.notes == [mine] and runtime.executed == [Send(conn(OTHER, 1), b"answer")]
    valid[0] = False  # frozen past its lease
    node._deliver("parlour:async/5:owner", encode(Note(SHARD, routed(conn(OTHER, 1), "late"), OTHER, 4)))
    assert shard.notes == [mine] and len(runtime.executed) == 1  # dropped, not answered
    assert not service.owning and service.owner == 0


class FakeLink:
    closed = False

    def close(self) -> None:
        self.closed = True


def test_a_redis_that_does_not_answer_a_publication_in_time_is_a_gap() -> None:
    told: list[str] = []
    bus = Bus("redis://127.0.0.1:1/0", lambda channel, data: None)
    bus.answer_within = 1.0
    link = FakeLink()
    bus._publisher = link  # type: ignore[assignment]
    bus._replies.append((lambda: told.append("first"), 0))
    assert not bus.overdue(10.0)  # seen waiting
    assert not bus.overdue(10.5)
    assert bus.overdue(11.0) and link.closed  # still the oldest a whole second later
    # A publisher being made again: what is queued for it is given up on as well.
    bus._publisher = None
    bus._out, bus._out_replies = [b"PUBLISH"], [(lambda: told.append("queued"), 0)]
    assert not bus.overdue(20.0) and not bus.overdue(20.9)
    assert bus.overdue(21.0) and told == ["queued"] and bus._out == [] and bus._gap
    # Answered in time, nothing is given up.
    answered = Bus("redis://127.0.0.1:1/0", lambda channel, data: None)
    answered.answer_within = 1.0
    answered._publisher = FakeLink()  # type: ignore[assignment]
    for now in (0.0, 0.4, 0.8, 1.2, 1.6):
        answered._replies.append((lambda: told.append("answered"), 0))
        assert not answered.overdue(now)
        answered._published(1)
    assert told == ["queued"]


def whats_new(rid: str) -> str:
    return f'{{"type":"WhatsNewPussycatRequest","request_id":"{rid}"}}'


def gather(c: ConnId, rid: str, shards: list[int]) -> bytes:
    return encode_note(Gather(c, 7, rid, [], shards))


def refused(c: ConnId, rid: str) -> Send:
    error = ErrorRequest(
        code="TRY_AGAIN",
        message="the game is moving to another node; send it again",
        request_type="WhatsNewPussycatRequest",
        request_id=rid,
    )
    return Send(c, encode_message(error))


def report(c: ConnId, rid: str) -> bytes:
    return encode(
        Output([WireSend(c, f'{{"type":"GameStatusReportRequest","request_id":"{rid}"}}'.encode())])
    )


def test_a_note_an_owner_wakes_to_is_answered_at_once_not_behind_its_refused_commits() -> None:
    """A node frozen past its lease wakes with a Gather hop in its socket, published by the
    hub's node (which keeps nothing: the connection is another node's) while nobody had taken
    the shard over. Nobody else has it: this node answers it, TRY_AGAIN, and shows that at
    once, though a commit of its own is failing: held behind it, the answer would be dropped
    with the sends of the refused commit, and the request never answered."""

    @dataclass
    class Shard:
        def noted(self, data: bytes, now: float) -> list[Effect]:
            raise AssertionError("a lapsed owner takes no note")

    valid = [True]
    node, runtime, _ = node_with_a_shard(valid)
    node.services[SHARD].promote(Shard(), 4)  # type: ignore[arg-type]
    runtime.holding = True  # its store stopped before the pause: commits fail, effects held
    valid[0] = False  # frozen past its lease
    c = conn(OWNER, 1)
    node._deliver("parlour:async/5:owner", encode(Note(SHARD, gather(c, "w416", [5, 6]), OTHER)))
    assert runtime.executed == [refused(c, "w416")] and runtime.held == []


def node_of_a_connection() -> tuple[ClusterNode, FakeRuntime, list[tuple[str, bytes, Any]], Router]:
    """Node ME, where the connection is: the hub owned by OTHER (epoch 9), SHARD by OWNER
    (epoch 4), NEXT by ME; its router tells it of the requests to wait for whole."""
    node, runtime, published = node_with_a_shard([True])
    node.shards[:] = [SHARD, NEXT]
    hub = ClusterService(HUB, ME, lambda message: None, runtime.execute, lambda: True)
    hub.owner, hub.epoch = OTHER, 9
    node.services[HUB] = hub
    node.services[NEXT] = ClusterService(NEXT, ME, lambda message: None, runtime.execute, lambda: True)
    directory = Directory()
    directory.bound[conn(ME, 1)] = 7
    router = Router(directory, 24, lambda name: True, 100.0, 65536)
    router.waits = lambda c, key, data: node.notes.await_whole(c, key, HUB, data)
    return node, runtime, published, router


def test_a_gather_is_awaited_whole_by_the_node_of_its_connection() -> None:
    """WhatsNewPussycatRequest without a game goes to the hub, which sends a Gather through the
    shards of the player's games from its own node: the connection's node sees none of its
    hops. One may sit with a frozen owner that the hub's node still takes for alive, while this
    node knows of no change (the shard had no owner already, and nobody can take it over: the
    store is down). It waits for the answer all the same: given up on after a lease (looked at
    every third of one), it is answered TRY_AGAIN, once, within the bound."""
    node, runtime, _, router = node_of_a_connection()
    c = conn(ME, 1)
    assert router.route(c, whats_new("w416"), 0.0) is None  # to the hub, as before
    assert router.route(c, whats_new("w417"), 0.0) is None
    assert router.route(c, '{"type":"WhatsNewPussycatRequest"}', 0.0) is None  # no answer to tell
    node.notes.send(SHARD, routed(c, "c1"))  # a routed commit: it has an answer of its own
    confirmation = encode_note(Routed(c, 7, '{"type":"GameOutcomeConfirmationRequest","game_id":29}'))
    node.notes.send(SHARD, confirmation)  # a routed confirmation: no answer of its own
    assert [entry.key for entry in node.notes.awaiting.by_conn[c]] == ["w416", "w417", "c1", ("game", 29)]
    # w417 is answered by the last shard, on another node; w416's hop sits with a frozen owner.
    node._deliver("parlour:node:1", report(c, "w417"))
    runtime.executed.clear()
    runtime.now = 2.9
    node.notes.give_up()
    assert runtime.executed == []
    runtime.now = 3.5
    node.notes.give_up()
    assert runtime.executed == [refused(c, "w416")] and not node.notes.awaiting.whole
    assert [entry.key for entry in node.notes.awaiting.by_conn[c]] == ["c1", ("game", 29)]
    runtime.now = 10.0
    node.notes.give_up()
    # The commit's answer never came (a tenure's end this node never heard of, a message lost
    # on the way): its outcome is unknown, and its client is told so; the confirmation, which
    # has no answer of its own, is given up on silently.
    assert runtime.executed == [refused(c, "w416"), *unanswered(routed(c, "c1"))] and not node.notes.awaiting


def test_a_gather_whose_hub_changes_is_answered_at_once() -> None:
    node, runtime, _, router = node_of_a_connection()
    c = conn(ME, 1)
    router.route(c, whats_new("w1"), 0.0)
    node._deliver("parlour:cluster", encode(Takeover(HUB, OWNER, 10)))
    node._deliver("parlour:cluster", encode(Takeover(HUB, OTHER, 11)))
    assert runtime.executed == [refused(c, "w1")] and not node.notes.awaiting


def test_a_gather_this_node_takes_or_sends_on_is_awaited_once() -> None:
    """A hop this node's own shard takes is answered (or refused) here: the wait ends. The hop
    it sends on, to another node's shard, is waited for as one request, answered once."""

    @dataclass
    class Shard:
        sent: list[bytes] = field(default_factory=list)

        def noted(self, data: bytes, now: float) -> list[Effect]:
            self.sent.append(data)
            return []

    node, runtime, published, router = node_of_a_connection()
    shard = Shard()
    node.services[NEXT].promote(shard, 2)  # type: ignore[arg-type]
    c = conn(ME, 1)
    router.route(c, whats_new("w1"), 0.0)
    node._deliver("parlour:async/6:owner", encode(Note(NEXT, gather(c, "w1", [6, 5]), OTHER)))
    assert len(shard.sent) == 1 and not node.notes.awaiting.whole  # taken here: answered or refused here
    node.notes.send(SHARD, gather(c, "w1", [5]))  # sent on, to OWNER's shard: tagged, awaited
    assert [(n.to, n.epoch) for n in (decode(data) for _, data, _ in published) if type(n) is Note] == [
        (SHARD, 4)
    ]
    [entry] = node.notes.awaiting.by_conn[c]
    assert entry.through
    node._deliver("parlour:cluster", encode(Takeover(SHARD, OTHER, 6)))
    published[-1][2]()  # and Redis says, late, that nobody heard it
    assert runtime.executed == [refused(c, "w1")]


def watching(rid: str, game_id: int = 29, on: bool = True) -> str:
    kind = "StartObserveGameRequest" if on else "StopObserveGameRequest"
    return f'{{"type":"{kind}","game_id":{game_id},"request_id":"{rid}"}}'


def test_a_watch_is_awaited_whole_by_the_node_of_its_connection() -> None:
    """Starting or stopping to watch a game goes to the hub, which answers it or sends it on to
    the game's shard from its own node: the connection's node sees none of that hop, which may
    reach a channel whose listener does not take it (an owner handing the shard over, frozen, or
    a subscription left behind). It waits for the answer all the same: answered by the hub or
    the shard, the wait ends; not answered within a lease, its client is told TRY_AGAIN,
    once."""
    node, runtime, _, router = node_of_a_connection()
    c = conn(ME, 1)
    assert router.route(c, watching("o1"), 0.0) is None  # to the hub, as before
    assert router.route(c, watching("o2", on=False), 0.0) is None
    assert router.route(c, '{"type":"StartObserveGameRequest","game_id":29}', 0.0) is None
    assert sorted(node.notes.awaiting.whole) == [(c, "o1"), (c, "o2")]  # no request_id: nothing to tell
    answer = '{"type":"GameObservedRequest","request_id":"o1","game_id":29,"status":"OK"}'
    node._deliver("parlour:node:1", encode(Output([WireSend(c, answer.encode())])))
    runtime.executed.clear()
    runtime.now = 3.5
    node.notes.give_up()
    error = ErrorRequest(
        code="TRY_AGAIN",
        message="the game is moving to another node; send it again",
        request_type="StopObserveGameRequest",
        request_id="o2",
        game_id=29,
    )
    assert runtime.executed == [Send(c, encode_message(error))] and not node.notes.awaiting


def test_a_watch_this_nodes_shard_takes_is_not_awaited_any_more() -> None:
    """The hub's node sends the watch on to a shard of this node: taken here, answered here."""

    @dataclass
    class Shard:
        taken: list[bytes] = field(default_factory=list)

        def noted(self, data: bytes, now: float) -> list[Effect]:
            self.taken.append(data)
            return []

    node, runtime, _, router = node_of_a_connection()
    shard = Shard()
    node.services[NEXT].promote(shard, 2)  # type: ignore[arg-type]
    c = conn(ME, 1)
    router.route(c, watching("o1"), 0.0)
    note = encode_note(Watch(29, c, 7, True, "o1"))
    node._deliver("parlour:async/6:owner", encode(Note(NEXT, note, OTHER)))
    assert shard.taken == [note] and not node.notes.awaiting
    runtime.now = 10.0
    node.notes.give_up()
    assert runtime.executed == []


def test_a_hop_for_a_shard_without_owner_is_answered_at_once_whoever_the_connection_is() -> None:
    """The hub's node sends a Gather on for another node's connection to a shard it knows has
    no owner: answered TRY_AGAIN at once, not published to whoever still listens on the
    shard's channel (a node frozen since it owned it would answer only when it wakes)."""
    node, runtime, published = node_with_a_shard([True])
    node._deliver("parlour:cluster", encode(Released(SHARD, OWNER)))
    c = conn(OTHER, 1)
    node.notes.send(SHARD, gather(c, "w9", [5]))
    assert published == [] and runtime.executed == [refused(c, "w9")]


def test_a_publication_whose_delivery_redis_never_confirmed_is_answered_as_maybe_taken() -> None:
    """The bus lost its publishing connection with a routed commit written and unconfirmed (or
    Redis did not answer in time): it may have reached its owner and been stored, so its client
    is told the outcome is unknown, not TRY_AGAIN (which says nothing changed). A publication
    Redis said nobody received is TRY_AGAIN."""
    node, runtime, published = node_with_a_shard([True])
    node.notes.awaited = None  # routed for another node's connection: not awaited, only published
    c, d = conn(OTHER, 1), conn(OTHER, 2)
    node.notes.send(SHARD, routed(c, "unsure"))
    node.notes.send(SHARD, routed(d, "unheard"))
    node.bus.unsure = True
    published[0][2]()
    node.bus.unsure = False
    published[1][2]()
    assert runtime.executed == [
        *unanswered(routed(c, "unsure")),
        try_again(d, commit("unheard"), "the game is moving to another node; send it again"),
    ]
    assert b"may have been saved" in runtime.executed[0].data


def test_requests_awaited_across_a_gap_are_told_their_outcome_is_unknown() -> None:
    """Messages between nodes may have been lost (Redis restarted, the link cut): the answer to
    a routed commit may be among them, so the node that routed it tells its client the outcome
    is unknown at once, rather than leave it waiting for an answer that may never come."""

    async def scenario() -> None:
        node, runtime, _ = node_with_a_shard([True])
        c = conn(ME, 1)
        node.notes.send(SHARD, routed(c, "lost"))
        assert node.notes.awaiting
        node.liveness.messages_lost()
        # Told at once, before the node reaches Redis again (that part is not this test's).
        assert runtime.executed[:1] == unanswered(routed(c, "lost")) and not node.notes.awaiting
        for task in asyncio.all_tasks() - {asyncio.current_task()}:
            task.cancel()

    asyncio.run(scenario())
