"""GET /metrics of a real ``parlour serve`` (store on, every listener) after some play on every
protocol: each family is there, in Prometheus' text format, with what was done counted."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import connect

from tests.processes import BIN, clean_env, free_port, running, wait_for_port


def scrape(port: int) -> tuple[str, dict[str, list[tuple[str, dict[str, str], float]]]]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        kind = response.headers["Content-Type"]
        text = response.read().decode()
    families = {
        family.name: [(sample.name, sample.labels, sample.value) for sample in family.samples]
        for family in text_string_to_metric_families(text)
    }
    return kind, families


def value(families: dict[str, list[tuple[str, dict[str, str], float]]], sample: str, **labels: str) -> float:
    """The sum of ``sample`` over the series whose labels include ``labels``."""
    return sum(
        v
        for family in families.values()
        for name, have, v in family
        if name == sample and all(have.get(k) == w for k, w in labels.items())
    )


async def a_few_turns(port: int, turns: int) -> None:
    """A 2-player Apologies game with a programmatic seat, the server's robot choosing the
    registered player's moves too (OPTIMAL_MOVE), for ``turns`` of its turns."""
    async with connect(f"ws://127.0.0.1:{port}/") as ws:

        async def send(message: str, player_id: str | None = None, **context: object) -> None:
            await ws.send(
                json.dumps({"message": message, "player_id": player_id, "context": context or None})
            )

        await send("REGISTER_PLAYER", handle="ada")
        player_id = json.loads(await ws.recv())["player_id"]
        await send(
            "ADVERTISE_GAME",
            player_id,
            name="g",
            mode="STANDARD",
            players=2,
            visibility="PRIVATE",
            invited_handles=[],
        )
        await send("START_GAME", player_id)
        while turns:
            message = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert message["message"] != "REQUEST_FAILED", message
            if message["message"] == "GAME_PLAYER_TURN":
                await send("OPTIMAL_MOVE", player_id)
                turns -= 1


async def play_everywhere(port: int, fish_port: int, tsuro_port: int) -> None:
    # Apologies: a few turns (robots decide, moves are committed), then a refusal.
    await a_few_turns(port, 6)
    async with connect(f"ws://127.0.0.1:{port}/") as ws:
        await ws.send(json.dumps({"message": "LIST_PLAYERS", "player_id": "nobody"}))
        assert json.loads(await ws.recv())["context"]["reason"] == "INVALID_PLAYER"
    # /async: a frame that is not a message of the protocol.
    async with connect(f"ws://127.0.0.1:{port}/async") as ws:
        await ws.send(json.dumps({"type": "NoSuchRequest"}))
        assert json.loads(await ws.recv())["code"] == "BAD_REQUEST"
    # Fish: one player joins and stays (a connection, a seated player, a waiting table); one
    # sends what is not JSON and is refused.
    _, fish = await asyncio.open_connection("127.0.0.1", fish_port)
    fish.write(b'{"type": "PlayerConnect", "age": 30}\n')
    bad_reader, bad = await asyncio.open_connection("127.0.0.1", fish_port)
    bad.write(b"}}}not json\n")
    await asyncio.wait_for(bad_reader.read(), 10)  # refused: the server closes
    # Tsuro: a player asked for its name joins.
    tsuro_reader, tsuro = await asyncio.open_connection("127.0.0.1", tsuro_port)
    assert json.loads(await tsuro_reader.readline())["type"] == "ASK_FOR_PLAYER_INFO"
    tsuro.write(b'{"type": "JOIN", "name": "ada", "strategy": "careful"}\n')
    await asyncio.sleep(0.3)  # the listeners have read what was written
    await asyncio.to_thread(check_scrape, port)
    for writer in (fish, bad, tsuro):
        writer.close()


def check_scrape(port: int) -> None:
    # The redo log's writer applies what was acknowledged a moment later, in a process of its
    # own: its transactions are counted once it has (within seconds, on a busy machine too).
    deadline = time.monotonic() + 10
    kind, families = scrape(port)
    while value(families, "parlour_store_transactions_total") < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
        kind, families = scrape(port)
    assert kind.startswith("text/plain; version=0.0.4")
    # Gauges read at scrape time: the connections still open, and who sits where.
    assert value(families, "parlour_connections", protocol="fish") == 1
    assert value(families, "parlour_connections", protocol="tsuro") == 1
    assert value(families, "parlour_players", protocol="fish") == 1
    assert value(families, "parlour_players", protocol="apologies") == 1  # registered, not yet idle
    assert (
        value(families, "parlour_games", protocol="apologies", state="CANCELLED") == 1
    )  # its only human left
    assert value(families, "parlour_games", protocol="fish", state="WAITING") == 1
    assert value(families, "parlour_games", protocol="tsuro", state="WAITING") == 1
    # Counters and histograms the transports and the runtime keep.
    for protocol in ("apologies", "async", "fish", "tsuro"):
        assert value(families, "parlour_connections_opened_total", protocol=protocol) >= 1, protocol
        assert value(families, "parlour_request_seconds_count", protocol=protocol) >= 1, protocol
    assert value(families, "parlour_request_seconds_count", protocol="apologies", type="OPTIMAL_MOVE") == 6
    assert value(families, "parlour_request_seconds_count", protocol="apologies", type="REGISTER_PLAYER") == 1
    assert value(families, "parlour_request_seconds_count", protocol="async", type="invalid") == 1
    assert value(families, "parlour_request_seconds_bucket", protocol="fish", le="+Inf") >= 1
    assert value(families, "parlour_errors_total", protocol="apologies", reason="INVALID_PLAYER") == 1
    assert value(families, "parlour_errors_total", protocol="async", reason="BAD_REQUEST") == 1
    assert value(families, "parlour_errors_total", protocol="fish", reason="MALFORMED") == 1
    assert value(families, "parlour_moves_total") >= 6
    assert value(families, "parlour_store_transactions_total") >= 1
    assert value(families, "parlour_store_records_total") > value(families, "parlour_moves_total")
    assert value(families, "parlour_store_commit_seconds_count") >= 1
    assert value(families, "parlour_store_commit_seconds_sum") > 0
    assert value(families, "parlour_store_batch_records_count") >= 1
    assert value(families, "parlour_store_up") == 1
    assert value(families, "parlour_store_unapplied_batches") >= 0  # the redo log's (the default)
    assert value(families, "parlour_robot_decision_seconds_count", game="apologies") >= 6
    # The process collector of the app's own registry.
    assert value(families, "process_resident_memory_bytes") > 0


def test_metrics_after_play_on_every_protocol(tmp_path: Path) -> None:
    port, fish_port, tsuro_port = free_port(), free_port(), free_port()
    command = [
        str(BIN / "parlour"),
        "serve",
        "--port",
        str(port),
        "--fish-port",
        str(fish_port),
        "--tsuro-port",
        str(tsuro_port),
        "--store",
        str(tmp_path / "parlour.db"),
        "--fish-wait",
        "600",
        "--tsuro-wait",
        "600",
    ]
    with (tmp_path / "server.log").open("wb") as log, running(command, port, log, clean_env()) as server:
        for listener in (fish_port, tsuro_port):
            wait_for_port(server, listener)
        asyncio.run(play_everywhere(port, fish_port, tsuro_port))
    text = (tmp_path / "server.log").read_text()
    assert "Traceback" not in text and " ERROR " not in text, text[-2000:]
