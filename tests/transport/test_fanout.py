"""A broadcast to many connections is written a slice of recipients per loop iteration
(parlour.transport.fanout), and no connection's messages are reordered by it: whatever else is
written to a recipient first takes the lines it is owed."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parlour.core.effects import Broadcast, Close, ConnId, Effect, Send
from parlour.settings import SettingError, Settings
from parlour.transport.runtime import Runtime
from parlour.transport.websocket import text_message
from tests.transport.wire import Wire

M = text_message
CONNS = list(range(1, 11))


def stream(wire: Wire, conn: ConnId) -> bytes:
    """Everything written to ``conn``, as one byte string."""
    return b"".join(chunk for write in wire.writes[conn] for chunk in write)


def written(wire: Wire) -> list[ConnId]:
    return [conn for conn in CONNS if wire.writes[conn]]


def lobby(slice_size: int = 4) -> tuple[Runtime, Wire]:
    runtime = Runtime(fanout_slice=slice_size)
    wire = Wire(runtime)
    for conn in CONNS:
        wire.add(conn)
    return runtime, wire


def test_a_broadcast_to_many_is_written_a_slice_per_loop_iteration() -> None:
    async def scenario() -> None:
        runtime, wire = lobby()
        runtime.execute([Broadcast(CONNS, b"hello")])
        assert written(wire) == []  # the loop reads and commits before the first slice
        await asyncio.sleep(0)
        assert written(wire) == [1, 2, 3, 4]
        await asyncio.sleep(0)
        assert written(wire) == [1, 2, 3, 4, 5, 6, 7, 8]
        await wire.settle()
        assert all(wire.writes[conn] == [[M(b"hello")]] for conn in CONNS)
        assert wire.writes[1][0][0] is wire.writes[10][0][0]  # framed once for everyone
        assert not runtime.fanout.active
        # A broadcast to no more than a slice is written at once.
        runtime.execute([Broadcast(CONNS[:4], b"small")])
        assert written(wire) == CONNS and wire.writes[4][-1] == [M(b"small")]
        wire.stop()

    asyncio.run(scenario())


def test_a_line_said_mid_sweep_rides_the_rest_of_it_and_the_passed_get_it_next_pass() -> None:
    async def scenario() -> None:
        runtime, wire = lobby()
        runtime.execute([Broadcast(CONNS, b"one")])
        await asyncio.sleep(0)  # 1-4 have "one"
        runtime.execute([Broadcast(CONNS, b"two")])
        await wire.settle()
        for conn in (1, 2, 3, 4):
            assert wire.writes[conn] == [[M(b"one")], [M(b"two")]]
        for conn in range(5, 11):  # one write with both lines
            assert wire.writes[conn] == [[M(b"one") + M(b"two")]]
        wire.stop()

    asyncio.run(scenario())


def test_anything_else_for_a_recipient_takes_the_lines_it_is_owed_first() -> None:
    async def scenario() -> None:
        runtime, wire = lobby()
        runtime.execute([Broadcast(CONNS, b"one")])
        runtime.execute([Send(9, b"private")])
        assert wire.writes[9] == [[M(b"one"), M(b"private")]]
        runtime.execute([Broadcast([8, 10], b"table")])  # a small broadcast, written at once
        assert wire.writes[8] == [[M(b"one"), M(b"table")]]
        assert wire.writes[10] == [[M(b"one"), M(b"table")]]
        runtime.execute([Broadcast(CONNS, b"two"), Send(1, b"after two")])
        assert stream(wire, 1) == M(b"one") + M(b"two") + M(b"after two")
        await wire.settle()
        # The sweep does not give them again what they had out of turn.
        assert stream(wire, 9) == M(b"one") + M(b"private") + M(b"two")
        assert stream(wire, 8) == M(b"one") + M(b"table") + M(b"two")
        assert stream(wire, 1) == M(b"one") + M(b"two") + M(b"after two")
        assert stream(wire, 5) == M(b"one") + M(b"two")
        wire.stop()

    asyncio.run(scenario())


def test_a_close_comes_after_the_lines_owed_and_nothing_after_it() -> None:
    async def scenario() -> None:
        runtime, wire = lobby()
        runtime.execute([Broadcast(CONNS, b"one"), Close(7, 4000, "bye"), Broadcast(CONNS, b"two")])
        await wire.settle()
        assert stream(wire, 7) == M(b"one")
        assert wire.closes == {7: (4000, "bye")}
        assert stream(wire, 6) == M(b"one") + M(b"two")
        wire.stop()

    asyncio.run(scenario())


def test_a_new_list_carries_over_what_the_old_one_owed() -> None:
    """Someone entered the lobby and someone left while lines were owed: the new list's wave
    gives those still there the old lines first at their next visit (no pass of writes at
    once), and the one who left gets them at once."""

    async def scenario() -> None:
        runtime, wire = lobby()
        runtime.execute([Broadcast(CONNS, b"one")])
        await asyncio.sleep(0)  # 1-4 have "one"
        runtime.execute([Broadcast(CONNS, b"two")])
        wire.add(11)
        entered = [conn for conn in CONNS if conn != 7] + [11]  # 11 entered, 7 left
        runtime.execute([Broadcast(entered, b"three")])
        assert stream(wire, 7) == M(b"one") + M(b"two")  # left: everything owed, at once
        assert written(wire) == [1, 2, 3, 4, 7]  # nobody else is written to now
        await wire.settle()
        for conn in (1, 2, 3, 4):
            assert stream(wire, conn) == M(b"one") + M(b"two") + M(b"three")
            assert len(wire.writes[conn]) == 2  # "one", then "two" and "three" in one write
        for conn in (5, 6, 8, 9, 10):
            assert wire.writes[conn] == [[M(b"one") + M(b"two") + M(b"three")]]
        assert stream(wire, 7) == M(b"one") + M(b"two")
        assert stream(wire, 11) == M(b"three")
        assert not runtime.fanout.active
        wire.stop()

    asyncio.run(scenario())


def test_the_sender_gets_its_own_copy_an_ignorer_nothing_and_the_gone_are_skipped() -> None:
    async def scenario() -> None:
        runtime, wire = lobby()
        runtime.outboxes.pop(5)  # disconnected, still on the list
        runtime.execute([Broadcast(CONNS, b"ann: hi", {1: b"ann: hi (yours)", 2: b""})])
        runtime.execute([Broadcast(CONNS, b"bob: yo")])
        await runtime.flush(1)  # a stop writes everything owed at once
        assert not runtime.fanout.active
        assert stream(wire, 1) == M(b"ann: hi (yours)") + M(b"bob: yo")
        assert stream(wire, 2) == M(b"bob: yo")
        assert stream(wire, 3) == M(b"ann: hi") + M(b"bob: yo")
        assert stream(wire, 5) == b""
        wire.stop()

    asyncio.run(scenario())


def test_in_a_cluster_other_nodes_recipients_get_theirs_at_once_and_ours_by_the_sweep() -> None:
    async def scenario() -> None:
        runtime, wire = lobby()
        forwarded: list[Effect] = []
        runtime.remote = forwarded.extend
        everyone = [*CONNS, 1001, 1002]  # two players on another node
        runtime.execute([Broadcast(everyone, b"one", {1001: b"one (yours)"}), Broadcast(everyone, b"two")])
        assert forwarded == [
            Broadcast([1001, 1002], b"one", {1001: b"one (yours)"}),
            Broadcast([1001, 1002], b"two"),
        ]
        assert written(wire) == []
        await wire.settle()
        assert all(stream(wire, conn) == M(b"one") + M(b"two") for conn in CONNS)
        wire.stop()

    asyncio.run(scenario())


def test_broadcast_slice_is_a_setting_of_at_least_one() -> None:
    assert Settings().broadcast_slice == 256
    with pytest.raises(SettingError, match="broadcast_slice"):
        Settings(broadcast_slice=0)


# -- Order, whatever the interleaving --------------------------------------------------------------

PEOPLE = list(range(1, 15))
#: Lobby lists (players come and go: each change is a new list object, and a switch carries
#: over what the last one owed; each list has someone the others lack).
LISTS = (PEOPLE[:12], PEOPLE, PEOPLE[2:])

operation = st.one_of(
    st.tuples(
        st.just("line"),
        st.sampled_from([0, 1, 2]),
        st.dictionaries(st.sampled_from(PEOPLE), st.sampled_from([b"", b"own copy"]), max_size=2),
    ),
    st.tuples(st.just("send"), st.sampled_from(PEOPLE), st.just({})),
    st.tuples(
        st.just("small"), st.lists(st.sampled_from(PEOPLE), min_size=1, max_size=3, unique=True), st.just({})
    ),
    st.tuples(st.just("step"), st.integers(1, 3), st.just({})),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operation, max_size=40))
def test_every_connection_gets_its_messages_in_the_order_they_were_released(
    operations: list[tuple[str, object, dict[ConnId, bytes]]],
) -> None:
    async def scenario() -> None:
        runtime = Runtime(fanout_slice=3)
        wire = Wire(runtime)
        for conn in PEOPLE:
            wire.add(conn)
        expected: dict[ConnId, list[bytes]] = {conn: [] for conn in PEOPLE}
        for number, (kind, what, instead) in enumerate(operations):
            data = b"message %d" % number
            if kind == "line":
                assert isinstance(what, int)
                conns = LISTS[what]
                runtime.execute([Broadcast(conns, data, instead or None)])
                for conn in conns:
                    expected[conn].append(instead.get(conn, data))
            elif kind == "send":
                assert isinstance(what, int)
                runtime.execute([Send(what, data)])
                expected[what].append(data)
            elif kind == "small":
                assert isinstance(what, list)
                runtime.execute([Broadcast(what, data)])
                for conn in what:
                    expected[conn].append(data)
            else:
                assert isinstance(what, int)
                for _ in range(what):
                    await asyncio.sleep(0)
            for conn in PEOPLE:  # never out of order, nothing twice: a prefix of what is due
                due = b"".join(M(item) for item in expected[conn] if item)
                assert due.startswith(stream(wire, conn)), conn
        await runtime.flush(1)
        for conn in PEOPLE:
            assert stream(wire, conn) == b"".join(M(item) for item in expected[conn] if item), conn
        wire.stop()

    asyncio.run(scenario())
