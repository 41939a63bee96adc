"""Faults of what the nodes share, with real components: a
Redis killed and started again empty on the same port, and a PostgreSQL stopped at once
(``pg_ctl stop -m immediate``) for a few seconds, each in the middle of a game between a player
on the owner's node and one on a gateway. Commits pause; none acknowledged is lost; each
committer gets exactly one answer, the one the store holds; clients told to reconnect (1012)
find their games."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import psycopg
import pytest
from websockets.exceptions import ConnectionClosed

from parlour.cluster.redisbus import Bus, connect
from parlour.storage import open_store
from tests.asyncclient import AsyncClient, Message, Player, enter_lobby, request_id, start_open_game
from tests.cluster.nodes import LEASE, SHARDS, Cluster, cluster_of, health
from tests.cluster.test_two_nodes import metrics_of, player_on, run
from tests.integration.test_async_restart import commit
from tests.pg import PostgresServer, missing_reason
from tests.processes import RestartableServer
from tests.redisserver import RestartableRedis


async def owners(cluster: Cluster, shards: int = SHARDS, timeout: float = 10.0) -> dict[str, int]:
    """The port of the owner of each service and shard, once each has one and the shards are
    shared fairly (after a Redis restart, not always the same nodes: the first to ask takes each
    lease, and a node that counted itself alone hands the extra shards back)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found: dict[str, int] = {}
        for node in cluster.nodes:
            state = await asyncio.to_thread(health, node.port)
            for service in state.get("cluster_owns", []):
                found[service] = node.port
            for shard in state.get("cluster_shards", []):
                found[f"async/{shard}"] = node.port
        share = -(-shards // len(cluster.nodes))
        held = [
            sum(1 for name, port in found.items() if port == node.port and "/" in name)
            for node in cluster.nodes
        ]
        if len(found) == 2 + shards and max(held) <= share:
            return found
        assert asyncio.get_running_loop().time() < deadline, f"owners after {timeout} s: {found}"
        await asyncio.sleep(0.1)


async def rejoin(player: Player, port: int, clients: list[AsyncClient], tries: int = 5) -> None:
    """Sign in again with the old token; a connection closed again before it is answered (a
    takeover announced meanwhile closes what was attached to the owner before, a node that knows
    no owner yet closes it at once) is retried."""
    for _ in range(tries):
        client = await AsyncClient.connect(port, label=player.name)
        clients.append(client)
        try:
            # A node that knows no owner of the service yet closes a new connection at once.
            await client.send({"type": "AsyncAuthRequest", "name": player.name, "sessionToken": player.token})
            answer = await client.expect(("AsyncConnectedRequest", "AsyncConnectionErrorRequest"), 3.0)
        except (AssertionError, ConnectionClosed):
            await client.close()
            await asyncio.sleep(0.2)
            continue
        assert answer["type"] == "AsyncConnectedRequest", answer
        player.client = client
        return
    raise AssertionError(f"{player.name} could not sign in again")


def fences(store: str) -> list[str]:
    """The fencing token of each service and shard: a new one at every takeover."""
    names = ["apologies", "async", *(f"async/{shard}" for shard in range(SHARDS))]
    opened = open_store(store)
    try:
        return [opened.meta(f"cluster_epoch_{name}") or "" for name in names]
    finally:
        opened.close()


def test_a_node_hears_of_a_redis_restart_once_redis_answers_again(own_redis: RestartableRedis) -> None:
    """The bus's subscriber is made again and re-subscribed after a restart, and the node is
    told once that messages may have been lost; a command on a pooled connection that Redis
    closed meanwhile goes through on a new one (no error while Redis is up)."""
    redis = own_redis

    async def scenario() -> None:
        client = connect(redis.url)
        received: list[bytes] = []
        bus = Bus(redis.url, lambda channel, data: received.append(data))
        gaps: list[float] = []
        bus.on_gap = lambda: gaps.append(asyncio.get_running_loop().time())
        await bus.start("parlour:test")
        await client.set("k", b"v")
        try:
            await asyncio.to_thread(redis.kill)
            await asyncio.sleep(0.3)
            await asyncio.to_thread(redis.start)
            assert await client.get("k") is None  # the pooled connection was closed: a new one
            deadline = asyncio.get_running_loop().time() + 5
            while not gaps:
                assert asyncio.get_running_loop().time() < deadline, "the gap went unnoticed"
                await asyncio.sleep(0.05)
            bus.publish("parlour:test", b"after")
            while not received:
                assert asyncio.get_running_loop().time() < deadline, "not subscribed again"
                await asyncio.sleep(0.05)
            assert received == [b"after"] and len(gaps) == 1
        finally:
            await bus.close()
            await client.aclose()

    asyncio.run(scenario())


def test_redis_killed_and_restarted_empty(tmp_path: Path, own_redis: RestartableRedis) -> None:
    """The connections of both nodes are closed with 1012 (none stays open and dead), the
    clients sign in again with their tokens and find their games as acknowledged, play goes
    on, and once an owner holds the services again it keeps them (no needless failover)."""
    redis = own_redis
    with cluster_of(tmp_path, redis.url) as cluster:
        owner, gateway = cluster.nodes

        async def scenario(clients: list[AsyncClient]) -> None:
            await cluster.owner_is(owner)
            a = await player_on(owner.port, clients, "A")
            b = await player_on(gateway.port, clients, "B")
            game_id = await start_open_game(a, [b], initial_state="s0")
            await commit(a, game_id, 1, "A1", [2, 1], next_summary_data="after A")
            await b.client.expect("ActionRequiredRequest", game_id=game_id, player_id=2, turn_index=2)

            await asyncio.to_thread(redis.kill)
            await asyncio.sleep(1.5)
            await asyncio.to_thread(redis.start)
            # A request right after the restart (if the connection is still open): the
            # connection is closed rather than left waiting for an answer that cannot come.
            await asyncio.sleep(0.5)
            with suppress(ConnectionClosed):
                await b.client.send({"type": "WhatsNewPussycatRequest", "request_id": request_id()})
            for player in (a, b):
                await player.client.wait_closed(3 * LEASE)
                assert player.client.ws.close_code == 1012, (player.name, player.client.ws.close_code)

            now_owners = await owners(cluster)
            for player, node in ((a, owner), (b, gateway)):
                await rejoin(player, node.port, clients)
            report = await b.client.report(game_id)
            assert (report["status"], report["turn_index"], report.get("state")) == (
                "RUNNING",
                2,
                "A1",
            ), report
            await commit(b, game_id, 2, "B1", [1, 2])
            await a.client.expect("ActionRequiredRequest", game_id=game_id, player_id=1, turn_index=3)

            # No needless failover: the same tenure a while later (several renewals, and
            # pooled connections from before the restart used again).
            tenures = await asyncio.to_thread(fences, cluster.store)
            await asyncio.sleep(1.5 * LEASE)
            assert await asyncio.to_thread(fences, cluster.store) == tenures
            assert await owners(cluster) == now_owners
            await commit(a, game_id, 3, "A2", [2, 1])
            # Nothing failed unhandled on the way (a lost task, a broken subscription).
            assert "Traceback" not in cluster.logs(), cluster.logs()

        run(cluster, scenario)


# -- PostgreSQL ---------------------------------------------------------------------------------


@pytest.fixture
def postgres(tmp_path: Path) -> Iterator[PostgresServer]:
    """A PostgreSQL server of this test's own: it is stopped and started again."""
    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    server = PostgresServer()
    try:
        yield server
    finally:
        server.stop()


def admin(server: PostgresServer, sql: str) -> None:
    with psycopg.connect(server.url(), autocommit=True) as conn:
        conn.execute(sql)
        conn.execute("SELECT pg_reload_conf()")


async def answer(player: Player, rid: str, timeout: float = 20.0) -> Message:
    """The one answer to the request ``rid`` (an ack or an error)."""
    reply = await player.client.expect(("ActionCommitedRequest", "ErrorRequest"), timeout, request_id=rid)
    return reply


async def send_commit(player: Player, game_id: int, turn_index: int, state: str, nexts: list[int]) -> str:
    rid = request_id("commit")
    await player.client.send(
        {
            "type": "CommitActionRequest",
            "game_id": game_id,
            "turn_index": turn_index,
            "next_state": state,
            "next_players": nexts,
            "request_id": rid,
        }
    )
    return rid


def nothing_yet(player: Player, *kinds: str) -> None:
    arrived = [m for m in player.client.inbox if m.get("type") in kinds]
    assert not arrived, arrived


def test_postgresql_stopped_mid_play(tmp_path: Path, redis_url: str, postgres: PostgresServer) -> None:
    """Two outages of about 3 s, each while a commit is in COMMIT (it waits for a standby that
    does not exist: durable on the primary, never confirmed), so that its outcome is unknown
    until the store is read back. Nothing is answered during an outage; then each committer
    gets exactly one answer, the one the store holds, and the other seat its turn.

    One shard, so that every game runs on one node (the owner: its writer commits every turn);
    A plays there, B through the other node (a gateway, for the games).

    1. The gateway's player's commit is stored: acknowledged. The owner's player's commit,
       queued behind it, was not: refused once, echoing its request_id; its retry goes through.
    2. The owner's player's commit is stored: acknowledged. The gateway's player's commit, sent
       while the database is down, waits (commits pause) and is stored once it is back."""
    store = postgres.database()
    with cluster_of(tmp_path, redis_url, store, count=0) as cluster:
        cluster.start(2, "--store-sync", "full", "--cluster-shards", "1")

        async def scenario(clients: list[AsyncClient]) -> None:
            games = (await owners(cluster, shards=1))["async/0"]
            owner, gateway = sorted(cluster.nodes, key=lambda node: node.port != games)
            a = await player_on(owner.port, clients, "A")
            b = await player_on(gateway.port, clients, "B")
            first = await start_open_game(a, [b], initial_state="s0")  # A plays first
            second = await start_open_game(b, [a], initial_state="t0")  # B plays first
            await commit(a, first, 1, "A1", [2, 1])
            await commit(b, second, 1, "B1", [2, 1])
            for player, game in ((b, first), (a, second)):
                await player.client.expect("ActionRequiredRequest", game_id=game, turn_index=2)

            # 1.
            await hang_commits(postgres, owner)
            stored = await send_commit(b, first, 2, "B2", [1, 2])
            await asyncio.sleep(0.5)  # in COMMIT now; the next one waits behind it
            refused = await send_commit(a, second, 2, "A2", [1, 2])
            await outage(postgres, a, b)
            await acknowledged(b, stored, first, 3)
            await a.client.expect("ActionRequiredRequest", game_id=first, player_id=1, turn_index=3)
            reply = await answer(a, refused)
            if reply["type"] == "ActionCommitedRequest":
                # A busy writer had not reached COMMIT yet: the second commit joined the first
                # one's transaction, and is stored (and shown) with it.
                assert (reply.get("game_id"), reply.get("turn_index")) == (second, 3), reply
            else:
                await only_answer(a, refused, "INTERNAL_ERROR", second, reply)
                await commit(a, second, 2, "A2", [1, 2])
            await b.client.expect("ActionRequiredRequest", game_id=second, player_id=1, turn_index=3)

            # 2.
            await hang_commits(postgres, owner)
            stored = await send_commit(a, first, 3, "A3", [2, 1])
            await asyncio.sleep(0.5)
            await asyncio.to_thread(postgres.stop_now)
            await asyncio.sleep(0.3)
            paused = await send_commit(b, second, 3, "B3", [2, 1])
            await outage(postgres, a, b, stopped=True)
            await acknowledged(a, stored, first, 4)
            await acknowledged(b, paused, second, 4)
            await b.client.expect("ActionRequiredRequest", game_id=first, player_id=2, turn_index=4)
            await a.client.expect("ActionRequiredRequest", game_id=second, player_id=2, turn_index=4)

            # Everything acknowledged is in the store, and nothing else.
            for game, state in ((first, "A3"), (second, "B3")):
                report = await a.client.report(game)
                assert (report["turn_index"], report.get("state")) == (4, state), report
            assert await turns(store, first) == await turns(store, second) == [1, 2, 3]

        run(cluster, scenario)


async def hang_commits(server: PostgresServer, owner: RestartableServer) -> None:
    """From now on a COMMIT waits for a synchronous standby that does not exist: it is durable
    on this server, and never confirmed (until the setting is dropped, after the outage).

    Just after the owner's heartbeat (committed every second): the next commit of its writer
    to reach COMMIT is then the test's, not a heartbeat that the test's would wait behind."""
    before = await asyncio.to_thread(records_committed, owner.port)
    while await asyncio.to_thread(records_committed, owner.port) == before:
        await asyncio.sleep(0.02)
    await asyncio.to_thread(admin, server, "ALTER SYSTEM SET synchronous_standby_names = 'nobody'")
    await asyncio.sleep(0.05)  # every backend reads the reloaded setting at its next statement


def records_committed(port: int) -> float:
    for line in metrics_of(port).splitlines():
        if line.startswith("parlour_store_records_total "):
            return float(line.split()[1])
    raise AssertionError("no parlour_store_records_total in /metrics")


async def outage(server: PostgresServer, *players: Player, stopped: bool = False) -> None:
    """PostgreSQL stopped at once (unless it is already) for about 3 s: no commit is answered
    meanwhile. It starts again, and commits stop hanging."""
    if not stopped:
        await asyncio.to_thread(server.stop_now)
    await asyncio.sleep(2.5)
    for player in players:
        nothing_yet(player, "ActionCommitedRequest", "ErrorRequest")
    await asyncio.to_thread(server.start)
    # Commits made as it starts wait for the standby a moment: dropping the setting frees them.
    await asyncio.to_thread(admin, server, "ALTER SYSTEM RESET synchronous_standby_names")


async def acknowledged(player: Player, rid: str, game_id: int, turn_index: int) -> None:
    reply = await answer(player, rid)
    assert (reply["type"], reply.get("game_id"), reply.get("turn_index")) == (
        "ActionCommitedRequest",
        game_id,
        turn_index,
    ), reply


async def only_answer(
    player: Player, rid: str, code: str, game_id: int, reply: Message | None = None
) -> None:
    """The refusal of ``rid`` (``reply``, when it came already), echoing it, and no other
    answer to it."""
    if reply is None:
        reply = await answer(player, rid)
    assert (reply["type"], reply.get("code"), reply.get("game_id")) == ("ErrorRequest", code, game_id), reply
    assert "nothing changed" in reply["message"], reply
    await asyncio.sleep(0.2)
    nothing_yet(player, "ActionCommitedRequest", "ErrorRequest")


async def turns(store: str, game_id: int) -> list[Any]:
    def read() -> list[Any]:
        opened = open_store(store)
        try:
            return [turn.turn_index for turn in opened.async_turns(game_id)]
        finally:
            opened.close()

    return await asyncio.to_thread(read)


# -- PostgreSQL stopped at once right after acknowledged turns ---------------------------------


async def server_rules_game(
    cluster: Cluster, clients: list[AsyncClient], turns: int
) -> tuple[int, dict[int, Player], int]:
    """A 2-seat Fish game under server rules between a player on the first node and one on the
    second, ``turns`` turns played as fast as they are acknowledged: the game, its players by
    seat, and its turn_index now."""
    first, second = cluster.nodes[:2]
    a = await player_on(first.port, clients, "A")
    b = await player_on(second.port, clients, "B")
    await enter_lobby(a)
    config = {"game_type": "fish", "max_players": 2, "rules": "fish"}
    await a.client.send({"type": "LobbyCreateGameRequest", "configuration": config})
    game_id: int = (await a.client.expect("LobbyGameCreatedRequest"))["game_id"]
    await enter_lobby(b)
    await b.client.send({"type": "LobbyJoinGameRequest", "game_id": game_id})
    for player in (a, b):
        await player.client.expect("GameCreatedRequest", game_id=game_id)
    seats = {1: a, 2: b}
    report = await game_report(a, game_id)
    turn_index: int = report["turn_index"]
    for played in range(1, turns + 1):
        await play_turn(seats[report["active_player"]], game_id, turn_index)
        turn_index += 1
        if played < turns:  # the last one is followed at once by what the test does next
            report = await game_report(a, game_id)
    return game_id, seats, turn_index


async def game_report(player: Player, game_id: int) -> Message:
    """The game's one StatusReport (asked again while its shard is moving: a node that came late
    to renew its liveness on a busy machine hands shards over)."""
    reply = await whats_new(player, game_id)
    assert reply["type"] == "GameStatusReportRequest", reply
    reports: list[Message] = reply["status_reports"]
    assert [report.get("game_id") for report in reports] == [game_id], reports
    return reports[0]


async def play_turn(player: Player, game_id: int, turn_index: int, rid: str | None = None) -> Message:
    """The first legal action of the turn the player is asked for, committed; its answer (an
    acknowledgement, unless ``rid`` is given: then nothing is awaited)."""
    asked = await player.client.expect("ActionRequiredRequest", game_id=game_id, turn_index=turn_index)
    commit = {
        "type": "CommitActionRequest",
        "game_id": game_id,
        "turn_index": turn_index,
        "action": asked["legal_actions"][0],
    }
    if rid is not None:
        await player.client.send({**commit, "request_id": rid})
        return asked
    await player.client.send(commit)
    return await player.client.expect("ActionCommitedRequest", game_id=game_id, turn_index=turn_index + 1)


async def whats_new(player: Player, game_id: int, timeout: float = 10.0) -> Message:
    """WhatsNewPussycatRequest for the game until it is answered other than TRY_AGAIN (a shard
    may be moving for a moment): that answer; the last TRY_AGAIN after ``timeout`` seconds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        rid = request_id("w")
        await player.client.send({"type": "WhatsNewPussycatRequest", "game_id": game_id, "request_id": rid})
        reply = await player.client.expect(("GameStatusReportRequest", "ErrorRequest"), 10.0, request_id=rid)
        if reply.get("code") != "TRY_AGAIN" or asyncio.get_running_loop().time() > deadline:
            return reply
        await asyncio.sleep(0.2)


def test_acknowledged_turns_survive_postgresql_stopped_at_once(
    tmp_path: Path, redis_url: str, postgres: PostgresServer
) -> None:
    """Three nodes with the default store_sync (normal). Three turns acknowledged in quick
    succession, PostgreSQL stopped at once (pg_ctl stop -m immediate: a crash of the database
    server) right after the last acknowledgement, for 3 s: once it is back, every acknowledged
    turn is in the store, and the game reports the turn after them on both players' nodes."""
    store = postgres.database()
    with cluster_of(tmp_path, redis_url, store, count=3, lease=3.0) as cluster:

        async def scenario(clients: list[AsyncClient]) -> None:
            await owners(cluster)
            game_id, seats, turn_index = await server_rules_game(cluster, clients, 3)
            await asyncio.to_thread(postgres.stop_now)
            await asyncio.sleep(3.0)
            await asyncio.to_thread(postgres.start)
            assert await turns(store, game_id) == list(range(1, turn_index))
            await store_ok(cluster)
            for player in seats.values():
                report = await game_report(player, game_id)
                assert report["turn_index"] == turn_index, report

        run(cluster, scenario)


async def store_ok(cluster: Cluster, timeout: float = 20.0) -> None:
    """Until every node commits again (a request it holds while it reads back what a failed
    commit stored is dropped if that is refused, unanswered when it stores nothing)."""
    deadline = asyncio.get_running_loop().time() + timeout
    for node in cluster.nodes:
        while (await asyncio.to_thread(health, node.port)).get("store") != "ok":
            assert asyncio.get_running_loop().time() < deadline, f"node on {node.port}: store still failing"
            await asyncio.sleep(0.1)


async def asked(seats: dict[int, Player], game_id: int, turn_index: int, timeout: float = 5.0) -> Player:
    """The player asked for this turn (the ActionRequiredRequest that came with the last
    acknowledgement), once it has arrived; nothing is sent."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        for player in seats.values():
            if any(
                (m.get("type"), m.get("game_id"), m.get("turn_index"))
                == ("ActionRequiredRequest", game_id, turn_index)
                for m in player.client.inbox
            ):
                return player
        assert asyncio.get_running_loop().time() < deadline, f"nobody was asked for turn {turn_index}"
        await asyncio.sleep(0.02)


def test_a_started_game_the_store_lost_is_unknown_not_moving(
    tmp_path: Path, redis_url: str, postgres: PostgresServer
) -> None:
    """Three nodes; the store loses a started game behind their backs (its rows deleted, and its
    turns refused from now on), so that the next commit of the game fails: its shard's owner
    reads the game back, finds none, and drops it. The hub's copy goes too: every request for
    the game is answered UNKNOWN_GAME, not TRY_AGAIN as if the game were moving between nodes
    for ever."""
    store = postgres.database()
    with cluster_of(tmp_path, redis_url, store, count=3, lease=3.0) as cluster:

        async def scenario(clients: list[AsyncClient]) -> None:
            await owners(cluster)
            game_id, seats, turn_index = await server_rules_game(cluster, clients, 1)
            await asyncio.to_thread(lose_game, store, game_id)
            mover = await asked(seats, game_id, turn_index)
            rid = request_id("c")
            await play_turn(mover, game_id, turn_index, rid)
            reply = await answer(mover, rid)
            assert (reply["type"], reply.get("code")) == ("ErrorRequest", "INTERNAL_ERROR"), reply
            for player in seats.values():
                reply = await whats_new(player, game_id)
                assert (reply["type"], reply.get("code")) == ("ErrorRequest", "UNKNOWN_GAME"), reply
            assert await turns(store, game_id) == []

        run(cluster, scenario)


def lose_game(store: str, game_id: int) -> None:
    """The game's rows deleted (its turns with them), and any turn of it refused from now on:
    the store no longer has the game, and the next commit of it fails."""
    with psycopg.connect(store, autocommit=True) as conn:
        conn.execute("DELETE FROM async_games WHERE id = %s", (game_id,))
        conn.execute(
            f"ALTER TABLE async_turns ADD CONSTRAINT lost CHECK (game_id <> {int(game_id)}) NOT VALID"
        )
