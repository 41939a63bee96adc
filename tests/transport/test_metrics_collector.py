"""parlour.metrics without sockets: tallies, message types as labels, timed robots, and the
collector reading real services at scrape time."""

from __future__ import annotations

import json
from random import Random

from prometheus_client.parser import text_string_to_metric_families

from parlour.accounts.tokens import SessionTokens
from parlour.metrics.collector import CONTENT_TYPE, Exporter, Watched
from parlour.metrics.kinds import INVALID, apologies_kind, async_kind, stream_kind
from parlour.metrics.tally import BATCH_BUCKETS, Meter, Tally, TimedRobot
from parlour.protocols.apologies_ws import ApologiesService
from parlour.protocols.async_ws.service import AsyncService
from parlour.protocols.fish_tcp import FishService
from parlour.robots.registry import robot
from parlour.settings import Settings
from parlour.storage.records import AsyncTurnRow, MetaRow, MoveRow
from parlour.transport.runtime import Runtime

Samples = dict[str, list[tuple[str, dict[str, str], float]]]


def samples(exporter: Exporter) -> Samples:
    return {
        family.name: [(s.name, s.labels, s.value) for s in family.samples]
        for family in text_string_to_metric_families(exporter.render().decode())
    }


def find(families: Samples, sample: str, **labels: str) -> float | None:
    for family in families.values():
        for name, have, value in family:
            if name == sample and have == labels:
                return value
    return None


def test_a_tally_counts_each_value_in_the_first_bucket_that_holds_it() -> None:
    tally = Tally((1, 5, 10))
    for value in (0.5, 1, 1.5, 5, 7, 10, 11, 1000):
        tally.observe(value)
    assert tally.counts == [2, 2, 2, 2]  # <=1, <=5, <=10, above
    assert tally.count == 8
    assert tally.sum == 0.5 + 1 + 1.5 + 5 + 7 + 10 + 11 + 1000
    assert tally.cumulative() == [("1.0", 2), ("5.0", 4), ("10.0", 6), ("+Inf", 8)]


def test_message_types_are_the_protocols_own_or_invalid() -> None:
    assert apologies_kind('{"message": "EXECUTE_MOVE", "player_id": "x"}') == "EXECUTE_MOVE"
    assert apologies_kind(b'{"player_id": "x", "message": "REGISTER_PLAYER"}') == "REGISTER_PLAYER"
    # A label is a time series kept for ever: what a client makes up never becomes one.
    assert apologies_kind('{"message": "made up 7"}') == INVALID
    assert apologies_kind('{"message": 3}') == INVALID
    assert apologies_kind("[" * 10_000) == INVALID
    assert apologies_kind("\ud800") == INVALID
    assert apologies_kind("") == INVALID
    assert async_kind('{"type": "CommitActionRequest", "game_id": 1}') == "CommitActionRequest"
    assert async_kind('{"type": "REGISTER_PLAYER"}') == INVALID
    assert stream_kind(b'{"type": "PlayerConnect"') == "data"


def test_a_timed_robot_plays_as_its_robot_and_counts_each_decision() -> None:
    meter = Meter()
    inner = robot("fish", "random")
    timed = TimedRobot(inner, meter.robot("fish"))
    assert timed.name == inner.name
    moves = ["a", "b", "c"]
    chosen = [timed.choose(None, 0, moves, Random(1)) for _ in range(5)]
    assert chosen == [inner.choose(None, 0, moves, Random(1)) for _ in range(5)]
    assert meter.robots["fish"].count == 5 and meter.robots["fish"].sum > 0


def services() -> tuple[Runtime, Meter, ApologiesService, AsyncService, FishService, Exporter]:
    settings = Settings(store="none")
    runtime = Runtime(clock=lambda: 1000.0)
    meter = runtime.meter = Meter()
    apologies = ApologiesService(settings, Random(1))
    async_service = AsyncService(SessionTokens(b"k" * 32, 60), rng=Random(2))
    fish = FishService(settings, Random(3))
    watched = [Watched("apologies", apologies), Watched("async", async_service), Watched("fish", fish)]
    for item, classify in zip(watched, (apologies_kind, async_kind, stream_kind), strict=True):
        meter.watch(item.service, item.protocol, classify)
    return runtime, meter, apologies, async_service, fish, Exporter(runtime, meter, watched)


def test_gauges_are_read_from_the_services_when_scraped() -> None:
    _, _, apologies, async_service, fish, exporter = services()
    assert exporter.content_type == CONTENT_TYPE
    families = samples(exporter)
    assert find(families, "parlour_connections", protocol="apologies") == 0
    assert find(families, "parlour_games", protocol="apologies", state="ADVERTISED") is None
    # State changes between scrapes are seen without anything recording them on the way.
    for conn in (1, 2):
        apologies.connected(conn, 1000.0)
    out = apologies.received(
        1, json.dumps({"message": "REGISTER_PLAYER", "context": {"handle": "ada"}}), 1000
    )
    player_id = json.loads(out[-1].data)["player_id"]  # type: ignore[attr-defined]
    advertise = {"name": "g", "mode": "STANDARD", "players": 2, "visibility": "PUBLIC", "invited_handles": []}
    apologies.received(
        1, json.dumps({"message": "ADVERTISE_GAME", "player_id": player_id, "context": advertise}), 1000
    )
    async_service.connected(7, 1000.0)
    fish.connected(8, 1000.0)
    fish.received(8, b'{"type": "PlayerConnect", "age": 20}\n', 1000.0)
    families = samples(exporter)
    assert find(families, "parlour_connections", protocol="apologies") == 2
    assert find(families, "parlour_players", protocol="apologies") == 1
    assert find(families, "parlour_games", protocol="apologies", state="ADVERTISED") == 1
    assert find(families, "parlour_connections", protocol="async") == 1
    assert find(families, "parlour_players", protocol="async") == 0  # not signed in
    assert find(families, "parlour_connections", protocol="fish") == 1
    assert find(families, "parlour_players", protocol="fish") == 1
    assert find(families, "parlour_games", protocol="fish", state="WAITING") == 1


def test_errors_come_from_each_protocols_own_failure_boundary() -> None:
    _, meter, apologies, async_service, fish, exporter = services()
    apologies.connected(1, 1000.0)
    apologies.received(1, '{"message": "LIST_PLAYERS", "player_id": "nobody"}', 1000.0)
    apologies.received(1, "not json", 1000.0)
    apologies.received(1, "not json either", 1000.0)
    async_service.connected(2, 1000.0)
    async_service.received(2, '{"type": "Nope"}', 1000.0)
    fish.connected(3, 1000.0)
    fish.received(3, b"}}}\n", 1000.0)
    meter.probes[0].failed("INTERNAL_ERROR")  # what the transport records when a service raises
    meter.commit_failed()  # what the runtime tells the meter of each refused commit
    meter.commit_failed()
    families = samples(exporter)
    assert find(families, "parlour_errors_total", protocol="apologies", reason="INVALID_PLAYER") == 1
    assert find(families, "parlour_errors_total", protocol="apologies", reason="INVALID_REQUEST") == 2
    assert find(families, "parlour_errors_total", protocol="apologies", reason="INTERNAL_ERROR") == 1
    assert find(families, "parlour_errors_total", protocol="async", reason="BAD_REQUEST") == 1
    assert find(families, "parlour_errors_total", protocol="fish", reason="MALFORMED") == 1
    assert find(families, "parlour_errors_total", protocol="store", reason="COMMIT_FAILED") == 2
    # The dashboard's reading adds every protocol's up (metrics/history.py).
    read = exporter.collector.reading(1010.0)
    assert (read.at, read.connections, read.errors) == (1010.0, 2, 8)  # Fish's sender was removed


def test_histograms_and_counters_come_from_the_meter() -> None:
    _, meter, apologies, _, _, exporter = services()
    probe = meter.probe(apologies)
    assert probe is not None and meter.probe(object()) is None
    probe.opened += 3
    probe.observe('{"message": "EXECUTE_MOVE"}', 0.0004)
    probe.observe('{"message": "EXECUTE_MOVE"}', 0.002)
    probe.observe("garbage", 0.00001)
    # The meter counts the moves among a batch's records: three moves and an /async turn.
    moves = [MoveRow("g", seq, 0, "move", 0, 1.0) for seq in range(3)] + [AsyncTurnRow(1, 1, 1.0, b"{}")]
    meter.committed([*moves, *[MetaRow("k", "v")] * 8], 0.003)
    meter.robot("apologies").observe(0.0002)
    families = samples(exporter)
    labels = {"protocol": "apologies", "type": "EXECUTE_MOVE"}
    assert find(families, "parlour_request_seconds_count", **labels) == 2
    assert find(families, "parlour_request_seconds_bucket", **labels, le="0.0005") == 1
    assert find(families, "parlour_request_seconds_bucket", **labels, le="0.0025") == 2
    assert find(families, "parlour_request_seconds_sum", **labels) == 0.0004 + 0.002
    assert find(families, "parlour_request_seconds_count", protocol="apologies", type="invalid") == 1
    assert find(families, "parlour_connections_opened_total", protocol="apologies") == 3
    assert find(families, "parlour_moves_total") == 4
    assert find(families, "parlour_store_batch_records_count") == 1
    assert find(families, "parlour_store_batch_records_bucket", le=repr(float(BATCH_BUCKETS[4]))) == 1
    assert find(families, "parlour_store_commit_seconds_sum") == 0.003
    assert find(families, "parlour_robot_decision_seconds_count", game="apologies") == 1
    assert find(families, "parlour_store_up") == 1  # no store: nothing failing


def test_each_exporter_has_its_own_registry() -> None:
    first, second = services()[-1], services()[-1]
    assert first.registry is not second.registry
    assert b"parlour_connections" in first.render() and b"parlour_connections" in second.render()


def test_the_robots_of_async_server_rules_games_are_timed_too() -> None:
    from parlour.metrics.tally import robot_timer
    from tests.protocols.async_ws.harness import Harness

    meter = Meter()
    h = Harness()
    h.service.games.robot_timer = robot_timer(meter)
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    game_id = h.open_game(ann, bob, game_type="fish", rules="fish")
    h.send(bob, type="GameForfeitRequest", game_id=game_id)  # a robot plays bob's seat on
    for _ in range(200):
        game = h.service.hub.games[game_id]
        if game.status != "RUNNING":
            break
        required = h.expect(ann, "ActionRequiredRequest", game_id=game_id, turn_index=game.turn_index)
        h.send(ann, type="CommitActionRequest", game_id=game_id, action=required["legal_actions"][0])
    assert h.service.hub.games[game_id].status != "RUNNING"
    assert meter.robots["fish"].count > 0 and meter.robots["fish"].sum > 0
