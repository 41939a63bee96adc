"""The nemesis: a schedule of faults drawn from the run's seed, and its execution.

The schedule is a pure function of the seed, the length of the run, the nodes and the lease:
a failing seed gives the same faults at the same times again. Faults overlap (a node paused
while PostgreSQL is down, a link delayed while a shard moves), with two limits that keep a run
meaningful: one fault at a time per target, and at least one node of the cluster up.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import asdict, dataclass
from typing import Any

from tests.chaos.history import History
from tests.chaos.system import System

__all__ = ["KINDS", "Fault", "Nemesis", "schedule"]

#: Each kind of fault with its weight in the draw.
KINDS: dict[str, int] = {
    "node-kill": 3,  # kill -9, started again after the fault
    "node-pause": 3,  # SIGSTOP for longer than a lease, then SIGCONT: fenced out when it wakes
    "node-leave": 1,  # a graceful stop (its shards handed over), started again after the fault
    "node-join": 1,  # a spare node starts (shards move to it) and later leaves gracefully
    "redis-kill": 2,  # kill -9, started again empty
    "redis-pause": 2,  # SIGSTOP
    "pg-stop": 3,  # pg_ctl stop -m immediate, started again
    "pg-pause": 2,  # SIGSTOP of the postmaster and every backend
    "link-delay": 2,  # a node's link to Redis or PostgreSQL delays every chunk
    "link-loss": 2,  # ... loses chunks (TCP retransmits them late)
    "link-hold": 2,  # ... forwards nothing (a partition) for a while
    "link-cut": 1,  # ... resets its connections
}


@dataclass(frozen=True)
class Fault:
    kind: str
    #: Seconds after the faults begin, and for how long.
    at: float
    duration: float
    #: n1, n2... the spare node, redis, pg, or a link (n1-redis, n2-pg...).
    target: str
    delay: float = 0.0
    loss: float = 0.0

    def describe(self) -> str:
        extra = ""
        if self.delay:
            extra += f" delay {self.delay * 1000:.0f} ms"
        if self.loss:
            extra += f" loss {self.loss:.0%}"
        return f"{self.at:7.1f}s {self.kind:<11} {self.target:<9} for {self.duration:4.1f}s{extra}"


def schedule(seed: int, seconds: float, nodes: int, lease: float, spare: int) -> list[Fault]:
    """The faults of a run of ``seconds``, on ``nodes`` nodes (numbered from 1) and a spare."""
    rng = random.Random(seed)
    faults: list[Fault] = []
    busy: dict[str, float] = {}
    #: When each node is back (node faults), to keep one node up at least.
    down: dict[str, float] = {}
    kinds = [kind for kind, weight in KINDS.items() for _ in range(weight)]
    at = rng.uniform(3.0, 6.0)
    while at < seconds - 2.0:
        kind = rng.choice(kinds)
        fault = _draw(rng, kind, at, nodes, lease, spare)
        end = min(fault.at + fault.duration, seconds)
        fault = Fault(fault.kind, fault.at, round(end - fault.at, 2), fault.target, fault.delay, fault.loss)
        node_fault = kind in ("node-kill", "node-pause", "node-leave")
        out = sum(1 for until in down.values() if until > at)
        if busy.get(fault.target, 0.0) <= at and not (node_fault and out >= nodes - 1):
            faults.append(fault)
            busy[fault.target] = end + 1.0
            if node_fault:
                down[fault.target] = end
        at += rng.uniform(1.5, 6.0)
    return faults


def _draw(rng: random.Random, kind: str, at: float, nodes: int, lease: float, spare: int) -> Fault:
    at = round(at, 2)
    node = f"n{rng.randint(1, nodes)}"
    if kind == "node-kill":
        return Fault(kind, at, round(rng.uniform(1.0, 6.0), 2), node)
    if kind == "node-pause":
        return Fault(kind, at, round(rng.uniform(1.2 * lease, 3.0 * lease), 2), node)
    if kind == "node-leave":
        return Fault(kind, at, round(rng.uniform(2.0, 8.0), 2), node)
    if kind == "node-join":
        return Fault(kind, at, round(rng.uniform(8.0, 20.0), 2), f"n{spare}")
    if kind == "redis-kill":
        return Fault(kind, at, round(rng.uniform(0.5, 4.0), 2), "redis")
    if kind == "redis-pause":
        return Fault(kind, at, round(rng.uniform(1.0, 2.0) * lease, 2), "redis")
    if kind in ("pg-stop", "pg-pause"):
        return Fault(kind, at, round(rng.uniform(1.0, 5.0), 2), "pg")
    link = f"{node}-{rng.choice(['redis', 'pg'])}"
    if kind == "link-delay":
        return Fault(kind, at, round(rng.uniform(5.0, 20.0), 2), link, delay=round(rng.uniform(0.1, 0.5), 3))
    if kind == "link-loss":
        return Fault(kind, at, round(rng.uniform(5.0, 20.0), 2), link, loss=round(rng.uniform(0.05, 0.3), 3))
    if kind == "link-hold":
        return Fault(kind, at, round(rng.uniform(0.5, 1.5 * lease), 2), link)
    return Fault(kind, at, 0.0, link)


class Nemesis:
    """Carries out a schedule against a system, recording each fault's start and end."""

    def __init__(self, system: System, faults: list[Fault], history: History) -> None:
        self.system = system
        self.faults = faults
        self.history = history
        #: Node numbers that should be running now (the spare only while it has joined).
        self.wanted: set[int] = {node.number for node in system.nodes if node.alive()}

    async def run(self, began: float) -> None:
        """Start and end each fault at its time (``began``: the history's time of second 0).
        Each action runs on its own: a slow one (a graceful stop waits for the handover) never
        delays the others."""
        await asyncio.gather(*(self._fault(fault, began) for fault in self.faults))

    async def _fault(self, fault: Fault, began: float) -> None:
        await asyncio.sleep(max(0.0, began + fault.at - self.history.now()))
        # The fault's window starts as it is made and ends once it is undone.
        self.history.add("fault", "nemesis", **asdict(fault))
        await self._act(self._start, fault)
        await asyncio.sleep(max(0.0, began + fault.at + fault.duration - self.history.now()))
        await self._act(self._end, fault)
        self.history.add("heal", "nemesis", **asdict(fault))

    async def _act(self, action: Any, fault: Fault) -> None:
        try:
            await asyncio.to_thread(action, fault)
        except Exception as error:
            self.history.add("note", "nemesis", what="fault failed", fault=asdict(fault), error=repr(error))

    def _node(self, target: str) -> Any:
        return next(node for node in self.system.nodes if node.name == target)

    def _start(self, fault: Fault) -> None:
        system, kind = self.system, fault.kind
        if kind == "node-kill":
            self._node(fault.target).kill()
        elif kind == "node-pause":
            self._node(fault.target).pause()
        elif kind == "node-leave":
            self._node(fault.target).stop()
        elif kind == "node-join":
            node = self._node(fault.target)
            node.start()
            self.wanted.add(node.number)
        elif kind == "redis-kill":
            system.redis_kill()
        elif kind == "redis-pause":
            system.redis_pause()
        elif kind == "pg-stop":
            system.postgres_stop()
        elif kind == "pg-pause":
            system.postgres_pause()
        elif kind == "link-delay":
            system.link(fault.target, delay=fault.delay)
        elif kind == "link-loss":
            system.link(fault.target, loss=fault.loss)
        elif kind == "link-hold":
            system.link(fault.target, hold=True)
        elif kind == "link-cut":
            system.cut(fault.target)

    def _end(self, fault: Fault) -> None:
        system, kind = self.system, fault.kind
        if kind in ("node-kill", "node-leave"):
            node = self._node(fault.target)
            if not node.alive():
                node.start()
        elif kind == "node-pause":
            self._node(fault.target).resume()
        elif kind == "node-join":
            self._node(fault.target).stop()
            self.wanted.discard(self._node(fault.target).number)
        elif kind == "redis-kill":
            system.redis_start()
        elif kind == "redis-pause":
            system.redis_resume()
        elif kind == "pg-stop":
            system.postgres_start()
        elif kind == "pg-pause":
            system.postgres_resume()
        elif kind.startswith("link-") and kind != "link-cut":
            system.link(fault.target)

    def heal(self) -> None:
        """Whatever is still in force ends: every wanted node runs, nothing is paused or slow."""
        self.system.heal()
        for node in self.system.nodes:
            if node.number in self.wanted and not node.alive():
                node.start()
