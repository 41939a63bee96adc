"""The system under test: PostgreSQL, Redis and the nodes of a cluster, real processes on
loopback, each node reaching Redis and PostgreSQL through faulty links (links.py), and the
faults the nemesis injects into them."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.cluster.nodes import health
from tests.pg import PostgresServer
from tests.processes import clean_env, free_port, serve_command, wait_for_port
from tests.redisserver import RestartableRedis, redis_binary

__all__ = ["Node", "System"]


@dataclass
class Node:
    """One ``parlour serve --cluster`` node, always on the same port (a client reconnects to the
    address it knows), with its own links to Redis and PostgreSQL."""

    number: int
    port: int
    log: Path
    store: str
    flags: list[str]
    process: subprocess.Popen[bytes] | None = None
    paused: bool = False
    #: When it was last started (time.monotonic), for the report.
    started: float = 0.0

    @property
    def name(self) -> str:
        return f"n{self.number}"

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        self.launch()
        self.ready()

    def launch(self) -> None:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                serve_command(self.port, *self.flags, store=self.store),
                stdout=log,
                stderr=subprocess.STDOUT,
                env=clean_env(),
            )
        self.paused = False

    def ready(self) -> None:
        """Until it listens."""
        assert self.process is not None
        wait_for_port(self.process, self.port, 60)
        self.started = time.monotonic()

    def kill(self) -> None:
        if self.alive():
            assert self.process is not None
            if self.paused:
                self.process.send_signal(signal.SIGCONT)
            self.process.kill()
            self.process.wait()
        self.paused = False

    def stop(self, timeout: float = 20.0) -> bool:
        """A graceful stop (SIGTERM); whether it ended in time (else it is killed)."""
        if not self.alive():
            return True
        assert self.process is not None
        if self.paused:
            self.resume()
        self.process.terminate()
        try:
            self.process.wait(timeout)
            return True
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            return False

    def pause(self) -> None:
        if self.alive() and not self.paused:
            assert self.process is not None
            self.process.send_signal(signal.SIGSTOP)
            self.paused = True

    def resume(self) -> None:
        if self.alive() and self.paused:
            assert self.process is not None
            self.process.send_signal(signal.SIGCONT)
        self.paused = False

    def health(self) -> dict[str, Any]:
        return health(self.port)


@dataclass
class System:
    """Everything a chaos run starts, in ``folder``."""

    folder: Path
    seed: int
    nodes_count: int = 3
    lease: float = 3.0
    nodes: list[Node] = field(default_factory=list)
    postgres: PostgresServer | None = None
    redis: RestartableRedis | None = None
    store: str = ""
    links: subprocess.Popen[str] | None = None
    #: Link names (``n1-redis``, ``n1-pg``...) to the port each listens on.
    link_ports: dict[str, int] = field(default_factory=dict)
    postgres_paused: list[int] = field(default_factory=list)
    redis_paused: bool = False
    #: One command to the links' process at a time: the nemesis acts from several threads, and
    #: two exchanges interleaved on its pipes lose an answer (the run then waits for ever).
    commanding: threading.Lock = field(default_factory=threading.Lock)

    # -- Starting and stopping ----------------------------------------------------------------

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        binary = redis_binary()
        if binary is None:
            raise RuntimeError("redis-server is not installed (make redis)")
        self.postgres = PostgresServer()
        self.store = self.postgres.database()
        self.redis = RestartableRedis(self.folder / "redis", binary)
        self.redis.start()
        self.links = subprocess.Popen(
            [sys.executable, "-m", "tests.chaos.links", "--seed", str(self.seed)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        # The first node migrates the store; the others, started together, find it done.
        self.add_node(1).start()
        others = [self.add_node(number) for number in range(2, self.nodes_count + 1)]
        for node in others:
            node.launch()
        for node in others:
            node.ready()

    def add_node(self, number: int) -> Node:
        """A node (not started): its links to Redis and PostgreSQL, its flags."""
        assert self.redis is not None and self.postgres is not None
        redis_link = self._link(f"n{number}-redis", self.redis.port)
        pg_link = self._link(f"n{number}-pg", self.postgres.port)
        store = self.store.replace(f"127.0.0.1:{self.postgres.port}/", f"127.0.0.1:{pg_link}/")
        flags = [
            "--cluster",
            f"redis://127.0.0.1:{redis_link}/0",
            "--cluster-lease",
            str(self.lease),
        ]
        node = Node(number, free_port(), self.folder / f"node{number}.log", store, flags)
        self.nodes.append(node)
        return node

    def _link(self, name: str, target: int) -> int:
        port = free_port()
        self.command({"op": "add", "name": name, "listen": port, "target": target})
        self.link_ports[name] = port
        return port

    def command(self, command: dict[str, Any]) -> None:
        """Tell the links' process, and wait until it has done it."""
        links = self.links
        assert links is not None and links.stdin is not None and links.stdout is not None
        with self.commanding:
            links.stdin.write(json.dumps(command) + "\n")
            links.stdin.flush()
            answer = links.stdout.readline()
        if not answer:
            raise RuntimeError("the links' process is gone")

    def stop(self) -> None:
        for node in self.nodes:
            node.stop(10)
        if self.redis is not None:
            if self.redis_paused:
                self.redis_resume()
            self.redis.kill()
        if self.postgres is not None:
            self.postgres_resume()
            self.postgres.stop()
        if self.links is not None:
            if self.links.stdin is not None:
                self.links.stdin.close()
            try:
                self.links.wait(5)
            except subprocess.TimeoutExpired:
                self.links.kill()

    # -- Faults ---------------------------------------------------------------------------------

    def redis_kill(self) -> None:
        assert self.redis is not None
        if self.redis_paused:
            self.redis_resume()
        self.redis.kill()

    def redis_start(self) -> None:
        assert self.redis is not None
        if self.redis.process is None or self.redis.process.poll() is not None:
            self.redis.start()

    def redis_pause(self) -> None:
        assert self.redis is not None and self.redis.process is not None
        if self.redis.process.poll() is None and not self.redis_paused:
            self.redis.process.send_signal(signal.SIGSTOP)
            self.redis_paused = True

    def redis_resume(self) -> None:
        assert self.redis is not None and self.redis.process is not None
        if self.redis_paused and self.redis.process.poll() is None:
            self.redis.process.send_signal(signal.SIGCONT)
        self.redis_paused = False

    def postgres_stop(self) -> None:
        assert self.postgres is not None
        self.postgres_resume()
        if (self.postgres.data / "postmaster.pid").exists():
            self.postgres.stop_now()

    def postgres_start(self) -> None:
        assert self.postgres is not None
        if not (self.postgres.data / "postmaster.pid").exists():
            self.postgres.start()

    def postgres_pause(self) -> None:
        """SIGSTOP the postmaster and every backend (a database host that froze)."""
        if self.postgres_paused:
            return
        pids = self._postgres_pids()
        for pid in pids:
            _signal(pid, signal.SIGSTOP)
        self.postgres_paused = pids

    def postgres_resume(self) -> None:
        for pid in self.postgres_paused:
            _signal(pid, signal.SIGCONT)
        self.postgres_paused = []

    def _postgres_pids(self) -> list[int]:
        assert self.postgres is not None
        pidfile = self.postgres.data / "postmaster.pid"
        try:
            postmaster = int(pidfile.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return []
        children = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # The parent's pid is the second field after the command, which may hold spaces.
            if int(stat.rsplit(")", 1)[1].split()[1]) == postmaster:
                children.append(int(entry.name))
        return [*children, postmaster]

    def link(self, name: str, delay: float = 0.0, loss: float = 0.0, hold: bool = False) -> None:
        self.command({"op": "set", "name": name, "delay": delay, "loss": loss, "hold": hold})

    def cut(self, name: str) -> None:
        self.command({"op": "cut", "name": name})

    def heal(self) -> None:
        """Undo every fault in force: resume what is paused, start what is down, clear links."""
        self.redis_resume()
        self.redis_start()
        self.postgres_resume()
        self.postgres_start()
        for name in self.link_ports:
            self.link(name)
        for node in self.nodes:
            if node.paused:
                node.resume()


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)
