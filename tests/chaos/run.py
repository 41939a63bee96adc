"""One chaos run: start the system, sign the players in, play while the nemesis works, heal
everything, play every game to its end, read the store, check and report."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import psycopg
from redis.exceptions import RedisError

from tests.asyncclient import acreate_account, alogin
from tests.chaos.checker import Stored, Verdict, check
from tests.chaos.history import History
from tests.chaos.nemesis import Nemesis, schedule
from tests.chaos.report import render
from tests.chaos.system import System
from tests.chaos.workload import Agent, Director

__all__ = ["chaos"]

#: After the faults: how long every game may take to end (they are short, but a few are long).
FINISH_SECONDS = 150.0


async def _accounts(system: System, count: int, seed: int) -> list[tuple[str, int, str]]:
    port = system.nodes[0].port

    async def account(number: int) -> tuple[str, int, str]:
        name = f"c{seed % 10000}p{number}"
        player_id = await acreate_account(port, name)
        return name, player_id, await alogin(port, name)

    return list(await asyncio.gather(*(account(number) for number in range(count))))


async def _play(agents: list[Agent], director: Director, until: float, history: History) -> None:
    """Every agent steps every 50-250 ms, the director every 0.5 s, until ``until``."""

    async def live(agent: Agent) -> None:
        while history.now() < until:
            try:
                await agent.step(agents)
            except Exception as error:  # a client's own bug must not end the run
                history.add("note", agent.name, what="client error", error=repr(error))
            await asyncio.sleep(agent.rng.uniform(0.05, 0.25))

    async def direct() -> None:
        while history.now() < until:
            await director.step()
            await asyncio.sleep(0.5)

    await asyncio.gather(direct(), *(live(agent) for agent in agents))


async def _census(system: System, history: History, until: asyncio.Event) -> None:
    """Twice a second, straight from Redis (not through a node's link): every service channel
    with more than one subscriber. Only its owner should hear what is published there; another
    subscriber counts a note heard that nobody takes (the checker lists them)."""
    import redis.asyncio as aioredis

    assert system.redis is not None
    client = aioredis.Redis(port=system.redis.port, socket_timeout=0.5, socket_connect_timeout=0.5)
    since: dict[str, float] = {}
    try:
        while not until.is_set():
            with contextlib.suppress(RedisError, OSError, TimeoutError):
                channels = await client.pubsub_channels("parlour:*:owner")
                if channels:
                    counts = await client.pubsub_numsub(*channels)
                    crowded = {name.decode(): count for name, count in counts if count > 1}
                    if crowded:
                        history.add("note", "census", what="crowded channels", channels=crowded)
                    now = history.now()
                    since = {name: since.get(name, now) for name in crowded}
                    if any(5.0 <= now - first < 5.5 for first in since.values()):
                        # Crowded for a while: who listens (each client's age tells which
                        # connection of which node it is).
                        clients = [
                            {key: c.get(key) for key in ("id", "addr", "age", "idle", "sub")}
                            for c in await client.client_list(_type="pubsub")
                        ]
                        history.add("note", "census", what="subscribers", clients=clients)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(until.wait(), 0.5)
    finally:
        await client.aclose()


async def _run(
    system: System,
    seed: int,
    seconds: float,
    players: int,
    games: int,
    history: History,
    kinds: Sequence[str] | None = None,
) -> dict[str, Any]:
    rng = random.Random(seed)
    accounts = await _accounts(system, players, seed)
    ports = lambda: {node.number: node.port for node in system.nodes if node.number <= system.nodes_count}  # noqa: E731
    watchable: set[int] = set()
    agents = [
        Agent(
            name,
            player_id,
            token,
            1 + number % system.nodes_count,
            random.Random(rng.random()),
            history,
            ports,
            watchable=watchable,
        )
        for number, (name, player_id, token) in enumerate(accounts)
    ]
    director = Director(agents, random.Random(rng.random()), games, kinds)
    spare = system.nodes_count + 1
    faults = schedule(seed, seconds, system.nodes_count, system.lease, spare)
    nemesis = Nemesis(system, faults, history)
    began = history.now() + 3.0  # the players sign in first
    history.add("note", "run", what="faults begin", at=began)
    play = asyncio.ensure_future(_play(agents, director, began + seconds, history))
    _say(f"{len(agents)} players signed in; {len(faults)} faults for {seconds:.0f} s")
    done = asyncio.Event()
    census = asyncio.ensure_future(_census(system, history, done))
    await nemesis.run(began)
    await asyncio.to_thread(nemesis.heal)
    healed = history.now()
    history.add("note", "run", what="healed")
    await play
    _say(f"healed at {healed:.0f} s; {len(director.live_games())} games to finish")
    # After the faults: no new games, nothing but play; each game is asked about until it
    # answers, and played to its end.
    director.active = False
    for agent in agents:
        agent.busy = False
        agent.probe()
    deadline = history.now() + FINISH_SECONDS
    while history.now() < deadline:
        await _play(agents, director, min(deadline, history.now() + 5.0), history)
        if not any(agent.playing or agent.probing for agent in agents):
            break
    playing = set().union(*(agent.playing for agent in agents))
    _say(f"finished at {history.now():.0f} s; {len(playing)} games still played")
    # The last view of every client.
    for agent in agents:
        if agent.ws is None:
            await agent.sign_in()
        agent._last_report = -1e9
        await agent.step(agents)
    await asyncio.sleep(2.0)
    done.set()
    await census
    for agent in agents:
        await agent.close()
    return {
        "seed": seed,
        "seconds": seconds,
        "lease": system.lease,
        "healed": healed,
        "wall start": history.wall,
        "faults": [asdict(f) for f in faults],
    }


def _say(text: str) -> None:
    print(f"chaos: {text}", file=sys.stderr, flush=True)


def _stored(url: str) -> Stored:
    from parlour.protocols.async_ws.game.model import decode_game

    stored = Stored()
    with psycopg.connect(url) as db:
        for game_id, status, doc in db.execute("SELECT id, status, doc FROM async_games"):
            stored.games[game_id] = (status, decode_game(bytes(doc)).turn_index)
        import msgspec

        for game_id, turn_index, doc in db.execute("SELECT game_id, turn_index, doc FROM async_turns"):
            stored.turns[game_id, turn_index] = msgspec.msgpack.decode(bytes(doc)).get("action")
        for scope, sender, text in db.execute("SELECT scope, sender, text FROM chat"):
            stored.chat.add((scope, sender, text))
    return stored


def chaos(
    seed: int,
    minutes: float,
    folder: Path,
    players: int = 24,
    games: int = 12,
    nodes: int = 3,
    lease: float = 3.0,
    kinds: Sequence[str] | None = None,
) -> Verdict:
    """A whole run; its files go to ``folder`` (history, schedule, store, node logs, report)."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    system = System(folder, seed, nodes, lease)
    history = History()
    started = time.monotonic()
    try:
        system.start()
        system.add_node(nodes + 1)  # the spare, started by a node-join fault
        run = asyncio.run(_run(system, seed, minutes * 60, players, games, history, kinds))
        health: dict[str, Any] = {}
        for node in system.nodes:
            if node.alive():
                try:
                    health[node.name] = node.health()
                except OSError as error:
                    health[node.name] = {"status": f"unreachable: {error}"}
        run["health"] = health
        stored = _stored(system.store)
    finally:
        system.stop()
    run["wall seconds"] = round(time.monotonic() - started, 1)
    run["namespace"] = os.environ.get("PARLOUR_CHAOS_NAMESPACE", "")
    history.write(folder / "history.jsonl")
    (folder / "store.json").write_text(json.dumps(stored.to_json()))
    (folder / "run.json").write_text(json.dumps(run, indent=1))
    logs = {node.log.stem: node.log.read_text(errors="replace") for node in system.nodes if node.log.exists()}
    verdict = check(history, stored, lease, run["healed"], logs, run["health"])
    report = render(run, verdict)
    (folder / "report.txt").write_text(report)
    print(report, flush=True)
    return verdict
