"""Faulty links: a TCP proxy per link between a node and what it shares (Redis, PostgreSQL),
run in a process of its own and steered by one JSON command per line on its standard input.

The kernel of the machines this project runs on has no ``netem`` queueing discipline (``tc``
answers "Specified qdisc kind is unknown"), so the chaos run makes its packet faults here, one
level up: every byte of a link passes through this process, which may hold it back.

- ``delay``: every chunk is forwarded that many seconds after it arrived, in order;
- ``loss``: the share of chunks that are "lost" on the wire, which TCP turns into a
  retransmission: the chunk (and everything behind it, TCP delivers in order) arrives one
  retransmission timeout later (0.2 s, doubling while the loss repeats, as the kernel's does);
- ``cut``: every open connection of the link is reset at once (a middlebox's reset, a host gone);
- ``hold``: nothing is forwarded either way until it is lifted (a partition that TCP rides out
  while it is short: the bytes arrive late, all together).

Commands: ``{"op": "add", "name": ..., "listen": port, "target": port}`` (answered with a line
once it listens), ``{"op": "set", "name": ..., "delay": s, "loss": p, "hold": bool}``,
``{"op": "cut", "name": ...}``. The random source is seeded (``--seed``): which chunks are lost
follows from the seed and the order they arrive in.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
from collections import deque
from dataclasses import dataclass, field
from functools import partial

__all__ = ["Link", "main"]

#: TCP's first retransmission timeout on Linux, and its longest here (what a run tolerates).
RTO = 0.2
RTO_MAX = 1.6
CHUNK = 65536


@dataclass
class Link:
    """One link's faults and its open connections."""

    name: str
    target: int
    rng: random.Random
    delay: float = 0.0
    loss: float = 0.0
    hold: bool = False
    #: Both ends of each open connection, to reset them (cut).
    pipes: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = field(default_factory=set)
    released: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.released.set()

    def lag(self) -> float:
        """How late a chunk arriving now is forwarded."""
        late = self.delay
        rto = RTO
        while self.loss and self.rng.random() < self.loss and rto <= RTO_MAX:
            late += rto
            rto *= 2
        return late


async def _pump(link: Link, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Forward one direction: each chunk at its due time, never before the one ahead of it."""
    loop = asyncio.get_running_loop()
    queue: deque[tuple[float, bytes]] = deque()
    ready = asyncio.Event()
    done = False

    async def read() -> None:
        nonlocal done
        try:
            while chunk := await reader.read(CHUNK):
                due = loop.time() + link.lag()
                if queue:
                    due = max(due, queue[-1][0])
                queue.append((due, chunk))
                ready.set()
        except (ConnectionError, OSError):
            pass
        finally:
            done = True
            ready.set()

    reading = asyncio.ensure_future(read())
    try:
        while True:
            while not queue:
                if done:
                    return
                ready.clear()
                await ready.wait()
            await link.released.wait()
            due, chunk = queue[0]
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            await link.released.wait()
            queue.popleft()
            writer.write(chunk)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        reading.cancel()
        with contextlib.suppress(Exception):
            writer.close()


async def _serve(link: Link, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", link.target)
    except OSError:
        writer.close()
        return
    pipe = (writer, up_writer)
    link.pipes.add(pipe)
    try:
        await asyncio.gather(_pump(link, reader, up_writer), _pump(link, up_reader, writer))
    finally:
        link.pipes.discard(pipe)
        for side in (writer, up_writer):
            with contextlib.suppress(Exception):
                side.close()


def _cut(link: Link) -> None:
    """Reset both ends of every open connection (an RST each way: nothing more is delivered)."""
    for pipe in list(link.pipes):
        for side in pipe:
            side.transport.abort()


async def main(seed: int) -> None:
    loop = asyncio.get_running_loop()
    links: dict[str, Link] = {}
    servers: list[asyncio.Server] = []
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    rng = random.Random(seed)
    while line := await reader.readline():
        command = json.loads(line)
        op, name = command["op"], command["name"]
        if op == "add":
            link = links[name] = Link(name, command["target"], random.Random(rng.random()))
            server = await asyncio.start_server(partial(_serve, link), "127.0.0.1", command["listen"])
            servers.append(server)
        elif op == "set":
            link = links[name]
            link.delay = float(command.get("delay", 0.0))
            link.loss = float(command.get("loss", 0.0))
            link.hold = bool(command.get("hold", False))
            if link.hold:
                link.released.clear()
            else:
                link.released.set()
        elif op == "cut":
            _cut(links[name])
        print(json.dumps({"ok": op, "name": name}), flush=True)
    for server in servers:
        server.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    asyncio.run(main(parser.parse_args().seed))
