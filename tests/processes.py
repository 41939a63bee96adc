"""Servers as subprocesses on free loopback ports, for integration tests and benchmarks."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

__all__ = ["free_port", "running", "started", "wait_for_port"]


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
