"""No request waits for ever (docs/cluster.md, "Every request is answered"): a sign-in sent to
a gateway while Redis does not answer, or while nobody owns the hub, is answered or its
connection closed with 1012 within the stated bound; a request routed to the owner of a shard
that is frozen (SIGSTOP) past its lease is answered by the node that routed it, and
the owner, woken, answers nothing more."""

from __future__ import annotations

import asyncio
import os
import signal
from contextlib import suppress
from pathlib import Path

from websockets.exceptions import ConnectionClosed

from tests.asyncclient import AsyncClient, Player, request_id, start_open_game
from tests.cluster.nodes import LEASE, cluster_of, health
from tests.cluster.test_two_nodes import player_on, run, send_first_commit
from tests.redisserver import RestartableRedis

#: What docs/cluster.md promises: an answer, an error or a close within a lease and a half of
#: sending; plus a second for a machine the rest of the suite keeps busy.
BOUND = 1.5 * LEASE + 1.0


async def sign_in(port: int, player: Player, clients: list[AsyncClient]) -> str:
    """One sign-in with ``player``'s token on a new connection: what answered it (a message's
    type, or ``closed <code>``); fails if nothing did within BOUND."""
    loop = asyncio.get_running_loop()
    sent = loop.time()
    client = await AsyncClient.connect(port, label=player.name)
    clients.append(client)
    with suppress(ConnectionClosed):  # closed at once: nobody to send it to
        await client.send({"type": "AsyncAuthRequest", "name": player.name, "sessionToken": player.token})
    try:
        answer = await client.expect(("AsyncConnectedRequest", "AsyncConnectionErrorRequest"), BOUND)
    except AssertionError:
        took = loop.time() - sent
        assert client.closed, f"no answer and no close in {took:.1f} s"
        return f"closed {client.ws.close_code}"
    if answer["type"] == "AsyncConnectedRequest":
        player.client = client
    return str(answer["type"])


def test_sign_ins_are_answered_while_redis_is_paused_and_after(
    tmp_path: Path, own_redis: RestartableRedis
) -> None:
    """Redis frozen (SIGSTOP) for three leases: the hub's owner lets the lease go and closes its
    player's connection with 1012; that player's sign-ins on the other node, one after the
    other, are each answered or closed within the bound, during the pause and after it, until
    one gets in once the hub has an owner again."""
    redis = own_redis
    with cluster_of(tmp_path, redis.url) as cluster:
        owner, gateway = cluster.nodes

        async def scenario(clients: list[AsyncClient]) -> None:
            await cluster.owner_is(owner)
            a = await player_on(owner.port, clients, "A")
            assert redis.process is not None
            loop = asyncio.get_running_loop()
            paused = loop.time()
            os.kill(redis.process.pid, signal.SIGSTOP)
            outcomes: list[str] = []
            try:
                await a.client.wait_closed(3 * LEASE)
                assert a.client.ws.close_code == 1012, a.client.ws.close_code
                while loop.time() - paused < 3 * LEASE:
                    outcomes.append(await sign_in(gateway.port, a, clients))
                    await asyncio.sleep(0.2)
            finally:
                os.kill(redis.process.pid, signal.SIGCONT)
            deadline = loop.time() + 8 * LEASE
            while not outcomes or outcomes[-1] != "AsyncConnectedRequest":
                assert loop.time() < deadline, f"never signed in again: {outcomes}"
                outcomes.append(await sign_in(gateway.port, a, clients))
                await asyncio.sleep(0.2)
            assert all(outcome in ("closed 1012", "AsyncConnectedRequest") for outcome in outcomes), outcomes
            await a.client.sync()

        run(cluster, scenario)


def test_a_request_routed_to_a_frozen_shard_owner_is_answered_by_its_router(
    tmp_path: Path, redis_url: str
) -> None:
    """Three nodes; a game whose shard the second owns, played by players on the first (the
    hub's) and the third. The second is frozen (SIGSTOP) past its lease: a commit routed to it
    from the third meanwhile is answered by the third within the bound, once the shard's tenure
    is known to be over: its outcome unknown (the owner may have stored it before it froze). Woken, the second drops what it
    received for the shards it no longer owns: no late answer reaches the player."""
    with cluster_of(tmp_path, redis_url, count=3) as cluster:
        first, second, third = cluster.nodes

        async def scenario(clients: list[AsyncClient]) -> None:
            await cluster.owner_is(first)
            theirs = set(health(second.port)["cluster_shards"])
            a = await player_on(third.port, clients, "A")
            b = await player_on(first.port, clients, "B")
            game_id = await start_open_game(a, [b], initial_state="s0")
            while game_id % 24 not in theirs:
                game_id = await start_open_game(a, [b], initial_state="s0")
            assert second.process is not None
            loop = asyncio.get_running_loop()
            rid = request_id("frozen")
            second.process.send_signal(signal.SIGSTOP)
            try:
                await asyncio.sleep(0.2)
                await send_first_commit(a, game_id, "while frozen", rid)
                sent = loop.time()
                answer = await a.client.expect(
                    ("ActionCommitedRequest", "ErrorRequest"), BOUND, request_id=rid
                )
                # The router cannot know whether the frozen owner stored it before it froze:
                # the outcome is unknown, and said so (not "nothing changed").
                assert answer.get("code") == "INTERNAL_ERROR", answer
                assert "may have been saved" in answer.get("message", ""), answer
                assert loop.time() - sent < BOUND
                await asyncio.sleep(LEASE)  # frozen past its lease, whoever answered
            finally:
                second.process.send_signal(signal.SIGCONT)
            # Woken, the old owner answers nothing it received while frozen.
            await a.client.no_message(("ActionCommitedRequest", "ErrorRequest"), 2.0, request_id=rid)
            assert not a.client.closed

        run(cluster, scenario)
