"""Servers as subprocesses on free loopback ports, for integration tests and benchmarks."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

__all__ = [
    "BIN",
    "RestartableServer",
    "clean_env",
    "free_port",
    "running",
    "serve_command",
    "started",
    "wait_for_port",
]

#: Where this interpreter's scripts are (``parlour``, ``apologies-server``).
BIN = Path(sys.executable).parent


def serve_command(port: int, *extra: str, store: str = "none") -> list[str]:
    """``parlour serve`` on 127.0.0.1:``port`` alone (no Fish or Tsuro listener), keeping its
    state in ``store`` (nothing kept by default), with ``extra`` flags."""
    return [
        str(BIN / "parlour"),
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--fish-port",
        "0",
        "--tsuro-port",
        "0",
        "--store",
        store,
        *extra,
    ]


def clean_env() -> dict[str, str]:
    """This environment without PARLOUR_* settings, so that a server gets only its flags."""
    return {key: value for key, value in os.environ.items() if not key.startswith("PARLOUR_")}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for_port(process: subprocess.Popen[bytes], port: int, seconds: float = 20) -> None:
    """Until something accepts connections on 127.0.0.1:``port``; fails if the process exits."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited with {process.returncode}") from None
            if time.monotonic() > deadline:
                raise TimeoutError(f"nothing listening on port {port}") from None
            time.sleep(0.05)


@contextmanager
def started(
    command: list[str], output: IO[bytes] | int = subprocess.DEVNULL, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """A subprocess for the duration of the block, then terminated (killed if it lingers)."""
    process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextmanager
def running(
    command: list[str],
    port: int,
    output: IO[bytes] | int = subprocess.DEVNULL,
    env: dict[str, str] | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """A server subprocess, ready on ``port`` for the duration of the block, then stopped."""
    with started(command, output, env) as process:
        wait_for_port(process, port)
        yield process


@dataclass
class RestartableServer:
    """One store (a file or a postgresql:// URL), served by one ``parlour serve`` process at a
    time (on a new free port each start), for tests that kill it and start it again; ``extra``
    flags go to every start."""

    store: Path | str
    log: Path
    extra: tuple[str, ...] = ()
    process: subprocess.Popen[bytes] | None = None
    port: int = 0

    def start(self) -> None:
        self.port = free_port()
        command = serve_command(self.port, *self.extra, store=str(self.store))
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=clean_env())
        wait_for_port(self.process, self.port)

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        """A graceful stop; one that does not come within 10 s is killed and fails the test."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise
