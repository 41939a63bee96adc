"""Quick play on two ``parlour serve --cluster`` nodes (docs/async.md "Quick play"): the queues
live on the hub, whichever node a player is connected to. Players on both nodes are matched into
one game, placed on its shard and played there; a player whose connection drops leaves the
queue; the hub's node stopped gracefully tells every waiting player their queues ended, and on
the new hub they queue again from nothing; a game with a robot seat from the queue is played by
its shard's owner."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.asyncclient import AsyncClient, Player, commit_first_legal_action, reconnect
from tests.cluster.nodes import SHARDS, cluster_of, health
from tests.cluster.test_two_nodes import player_on, presence, run
from tests.pg import PostgresServer


async def join(player: Player, ranked: bool = False, **extra: object) -> dict[str, object]:
    """The player joins the two-seat Fish queue (ranked or not); the only queue it then waits in."""
    await player.client.send(
        {"type": "QuickPlayJoinRequest", "game_type": "fish", "seats": 2, "ranked": ranked, **extra}
    )
    status = await player.client.expect(("QuickPlayStatusRequest", "ErrorRequest"))
    assert status["type"] == "QuickPlayStatusRequest" and not status.get("ended"), status
    [queue] = status["queues"]
    assert (queue["game_type"], queue["seats"], queue.get("ranked", False)) == ("fish", 2, ranked), status
    entry: dict[str, object] = queue
    return entry


async def matched(players: tuple[Player, ...], robots: int = 0) -> int:
    """Every player is told the same match, and gets its game; the game id."""
    games = set()
    for player in players:
        told = await player.client.expect("QuickPlayMatchedRequest")
        assert (told["game_type"], told["seats"], told.get("robots", 0)) == ("fish", 2, robots), told
        await player.client.expect("GameCreatedRequest", game_id=told["game_id"])
        games.add(told["game_id"])
    [game_id] = games
    return int(game_id)


async def play_turns(players: tuple[Player, ...], game_id: int, turns: int) -> None:
    """``turns`` moves of a server-rules game, each by whoever the status report names: the
    first legal action it was sent (its own view), acknowledged."""
    report = await players[0].client.report(game_id)
    seats = {
        entry["local_id"]: player
        for entry in report["players"]
        for player in players
        if entry.get("player_id") == player.player_id
    }
    assert len(seats) == len(players), report
    for _ in range(turns):
        report = await players[0].client.report(game_id)
        assert report["status"] == "RUNNING", report
        await commit_first_legal_action(seats[report["active_player"]], game_id, report["turn_index"])


def test_quick_play_across_two_nodes(tmp_path: Path, redis_url: str, postgres_server: PostgresServer) -> None:
    """On PostgreSQL, as a real cluster runs (the queues are not stored: the store matters only
    to the games they start)."""
    with cluster_of(tmp_path, redis_url, postgres_server.database()) as cluster:
        hub, other = cluster.nodes

        async def scenario(clients: list[AsyncClient]) -> None:
            await cluster.owner_is(hub)
            a = await player_on(hub.port, clients, "qa")
            b = await player_on(other.port, clients, "qb")

            # B queues through the other node, and its connection drops (no close handshake):
            # the hub signs it out (A sees it offline: B was online when A asked, so only the sign
            # out reports it so), which ends its queue; A, queued next, is matched with nobody.
            await a.client.send({"type": "RegisterPresenceRequest", "player_ids": [b.player_id]})
            await a.client.send({"type": "SubscribePresenceServiceRequest", "subscribe": True})
            await join(b)
            b.client.ws.transport.abort()
            await presence(a, b.player_id, "OFFLINE")
            await join(a)
            await a.client.sync()  # a join matches at once: a partner would have been found
            assert not [m for m in a.client.history if m["type"] == "QuickPlayMatchedRequest"]

            # Back (a new connection, its token), B joins the queue again, a new wait: both are
            # told the one game, placed on its shard's owner (whichever node), and both play.
            await reconnect(b, other.port)
            clients.append(b.client)
            again = await join(b)
            assert not again.get("waited_seconds"), again
            game_id = await matched((a, b))
            shard = game_id % SHARDS
            states = [await asyncio.to_thread(health, node.port) for node in (hub, other)]
            held = [shard in state.get("cluster_shards", []) for state in states]
            assert held.count(True) == 1, (shard, held)
            await play_turns((a, b), game_id, 2)  # one turn each

            # The hub's node stops gracefully with A (on it) and B (on the other node) waiting in
            # queues that do not match each other: each is told its queues ended before its
            # connection closes (A's by its stopping node, B's by the new hub's takeover, 1012).
            await join(a, ranked=True)
            await join(b, ranked=False)
            await asyncio.to_thread(hub.stop)
            for player in (a, b):
                ended = await player.client.expect("QuickPlayStatusRequest", ended="SERVER_STOPPING")
                assert not ended.get("queues"), ended
                await player.client.wait_closed()
            assert b.client.ws.close_code == 1012, b.client.ws.close_code
            await cluster.owner_is(other)

            # Signed in again, on the new hub: no queue is known (the join is not ALREADY_QUEUED,
            # its wait starts again), and a match forms there.
            for player in (a, b):
                await reconnect(player, other.port)
                clients.append(player.client)
                assert not (await join(player, ranked=True)).get("waited_seconds")
            second = await matched((a, b))
            assert second != game_id
            await play_turns((a, b), second, 1)

            # Robots at once: A's game has a robot seat, played by the shard's owner.
            await join(a, robots_after=0)
            alone = await matched((a,), robots=1)
            await play_turns((a,), alone, 1)  # seat 1: people first, then robots
            await a.client.expect("ActionRequiredRequest", game_id=alone, turn_index=3)

        run(cluster, scenario)
