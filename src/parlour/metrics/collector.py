"""``GET /metrics``: the server's state and tallies in Prometheus' text exposition format.

Gauges that are cheap to read (connections, players, games by state) are read from the
services when Prometheus scrapes, not kept up to date on every request; counters and
histograms come from the :class:`~parlour.metrics.tally.Meter` the transports fill. Every app
owns its registry (never prometheus-client's global one), so a test can run several servers.
docs/operations.md says what each family means and what to alert on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, ProcessCollector, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from parlour.core.records import GameState
from parlour.metrics.history import Reading, merged
from parlour.metrics.tally import Meter, Tally
from parlour.protocols.apologies_ws import ApologiesService
from parlour.protocols.async_ws.service import AsyncService
from parlour.protocols.async_ws.shards.shard import ShardService
from parlour.protocols.streamed import StreamedService
from parlour.transport.runtime import Runtime

__all__ = ["CONTENT_TYPE", "Exporter", "ParlourCollector", "Watched"]

#: The classic text format, which every Prometheus version reads: generate_latest writes it
#: (with names escaped to underscores, and Parlour's names need no escaping).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
#: Open tables that have not started yet have no rules state: counted as this state.
WAITING = "WAITING"


@dataclass(frozen=True, slots=True)
class Watched:
    """A service and the ``protocol`` label its metrics carry."""

    protocol: str
    service: object


def _histogram(family: HistogramMetricFamily, labels: list[str], tally: Tally) -> None:
    family.add_metric(labels, tally.cumulative(), tally.sum)


class ParlourCollector(Collector):
    """Reads the services and the meter at scrape time (on the event loop, between requests,
    so what it reads is consistent)."""

    def __init__(self, runtime: Runtime, meter: Meter, watched: Sequence[Watched]) -> None:
        self.runtime = runtime
        self.meter = meter
        self.watched = list(watched)
        #: In a cluster: the shards of /async games this node owns now, by number.
        self.shards: Callable[[], Mapping[int, ShardService]] = dict

    def collect(self) -> Iterable[Metric]:
        yield from self._state()
        yield from self._traffic()
        yield from self._store()
        robots = HistogramMetricFamily(
            "parlour_robot_decision_seconds", "Time a robot took to choose a move", labels=["game"]
        )
        for game, tally in sorted(self.meter.robots.items()):
            _histogram(robots, [game], tally)
        yield robots

    def _state(self) -> Iterator[Metric]:
        connections = GaugeMetricFamily(
            "parlour_connections", "Open connections, by protocol", labels=["protocol"]
        )
        players = GaugeMetricFamily(
            "parlour_players",
            "Players: registered (Apologies), signed in and connected (/async), seated (Fish, Tsuro)",
            labels=["protocol"],
        )
        games = GaugeMetricFamily(
            "parlour_games", "Games the server tracks, by protocol and state", labels=["protocol", "state"]
        )
        for watched in self.watched:
            protocol, service = watched.protocol, watched.service
            states: Counter[str] = Counter()
            if isinstance(service, ApologiesService):
                lobby = service.lobby
                open_, playing = len(lobby.connections), len(lobby.players)
                states.update(game.state.value for game in lobby.games.values())
            elif isinstance(service, AsyncService):
                hub = service.hub
                open_, playing = len(hub.sessions), len(hub.online)
                states.update(game.status for game in hub.games.values())
            elif isinstance(service, StreamedService):
                open_, playing = len(service.streams), len(service.seated)
                states.update(WAITING if table.state is None else table.status for table in service.tables)
            else:
                continue
            connections.add_metric([protocol], open_)
            players.add_metric([protocol], playing)
            for state, count in sorted(states.items()):
                games.add_metric([protocol, state], count)
        yield connections
        yield players
        yield games
        yield from self._shards()

    def reading(self, now: float) -> Reading:
        """What the dashboard samples (metrics/history.py): the gauges of every watched
        service added up, games in play only, and the running totals."""
        connections = players = games = 0
        for watched in self.watched:
            service = watched.service
            if isinstance(service, ApologiesService):
                lobby = service.lobby
                connections += len(lobby.connections)
                players += len(lobby.players)
                games += sum(1 for game in lobby.games.values() if game.state is GameState.PLAYING)
            elif isinstance(service, AsyncService):
                hub = service.hub
                connections += len(hub.sessions)
                players += len(hub.online)
                games += sum(1 for game in hub.games.values() if game.status == "RUNNING")
            elif isinstance(service, StreamedService):
                connections += len(service.streams)
                players += len(service.seated)
                games += sum(1 for table in service.tables if table.state is not None and not table.over)
        return Reading(
            at=now,
            connections=connections,
            players=players,
            games=games,
            moves=self.meter.moves,
            commits=self.runtime.transactions,
            errors=sum(self._error_counts().values()),
            requests=merged(tally for probe in self.meter.probes for tally in probe.latency.values()),
            store=merged([self.meter.commit_seconds]),
        )

    def _error_counts(self) -> Counter[tuple[str, str]]:
        counts: Counter[tuple[str, str]] = Counter()
        for probe in self.meter.probes:
            for reason, count in probe.errors.items():
                counts[probe.protocol, reason] += count
        for watched in self.watched:
            service = watched.service
            failures: dict[str, int] = (
                service.hub.errors if isinstance(service, AsyncService) else getattr(service, "failures", {})
            )
            for reason, count in failures.items():
                counts[watched.protocol, reason] += count
        if self.meter.commit_failures:
            counts["store", "COMMIT_FAILED"] += self.meter.commit_failures
        return counts

    def _shards(self) -> Iterator[Metric]:
        """A cluster node's share of the /async games (docs/cluster.md "Placement")."""
        shards = self.shards()
        owned = GaugeMetricFamily("parlour_cluster_shards", "Shards of /async games this node owns")
        owned.add_metric([], len(shards))
        yield owned
        games = GaugeMetricFamily(
            "parlour_shard_games", "Games run by this node, by shard and state", labels=["shard", "state"]
        )
        for number, shard in sorted(shards.items()):
            states = Counter(game.status for game in shard.games.values())
            for state, count in sorted(states.items()):
                games.add_metric([str(number), state], count)
        yield games

    def _traffic(self) -> Iterator[Metric]:
        latency = HistogramMetricFamily(
            "parlour_request_seconds",
            "Time to handle one received frame (decode, rules, effects), by protocol and message type",
            labels=["protocol", "type"],
        )
        opened = CounterMetricFamily(
            "parlour_connections_opened", "Connections accepted, by protocol", labels=["protocol"]
        )
        errors = CounterMetricFamily(
            "parlour_errors",
            "Requests refused or failed, by protocol and reason (the protocol's own error codes)",
            labels=["protocol", "reason"],
        )
        for probe in self.meter.probes:
            opened.add_metric([probe.protocol], probe.opened)
            for kind, tally in sorted(probe.latency.items()):
                _histogram(latency, [probe.protocol, kind], tally)
        for (protocol, reason), count in sorted(self._error_counts().items()):
            errors.add_metric([protocol, reason], count)
        yield latency
        yield opened
        yield errors

    def _store(self) -> Iterator[Metric]:
        runtime, meter = self.runtime, self.meter
        yield GaugeMetricFamily(
            "parlour_store_up",
            "1 while the store commits (or there is none), 0 from a failed commit until one succeeds",
            value=0 if runtime.store_status == "failing" else 1,
        )
        yield CounterMetricFamily(
            "parlour_store_transactions", "Store transactions committed", value=runtime.transactions
        )
        yield GaugeMetricFamily(
            "parlour_store_unapplied_batches",
            "Batches acknowledged from the redo log and not yet applied to the database by its writer",
            value=runtime.unapplied,
        )
        yield CounterMetricFamily(
            "parlour_store_records", "Records committed to the store", value=runtime.committed_records
        )
        yield CounterMetricFamily(
            "parlour_moves", "Moves (and /async turns) committed to the store", value=meter.moves
        )
        commit = HistogramMetricFamily(
            "parlour_store_commit_seconds",
            "From a loop iteration's records leaving for the writer to the writer's answer",
        )
        _histogram(commit, [], meter.commit_seconds)
        yield commit
        batch = HistogramMetricFamily("parlour_store_batch_records", "Records in one loop iteration's batch")
        _histogram(batch, [], meter.batch_records)
        yield batch


class Exporter:
    """The app's registry (Parlour's families and the process's CPU, memory and descriptors)
    and the body of ``/metrics``."""

    content_type = CONTENT_TYPE

    def __init__(self, runtime: Runtime, meter: Meter, watched: Sequence[Watched]) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.collector = ParlourCollector(runtime, meter, watched)
        self.registry.register(self.collector)
        ProcessCollector(registry=self.registry)

    def render(self) -> bytes:
        return generate_latest(self.registry)
