"""A real ``parlour serve`` process on a free loopback port, for wire-level tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for_port(process: subprocess.Popen[bytes], port: int, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if process.poll() is not None:
                raise RuntimeError(f"parlour serve exited with {process.returncode}") from None
            if time.monotonic() > deadline:
                raise TimeoutError(f"nothing listening on port {port}") from None
            time.sleep(0.05)


@pytest.fixture
def parlour_port(tmp_path: Path) -> Iterator[int]:
    """Port of a fresh ``parlour serve``; its log goes to tmp_path."""
    port = free_port()
    log = (tmp_path / "server.log").open("wb")
    command = [
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
    ]
    env = {key: value for key, value in os.environ.items() if not key.startswith("PARLOUR_")}
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        wait_for_port(process, port)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
