"""A throwaway ``redis-server`` for cluster tests and benchmarks: a temporary folder, a free
loopback port, no persistence, stopped at the end. Debian's ``redis-server`` is installed when
it is missing and this user may install packages (as ``make cluster`` does)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.processes import free_port, started, wait_for_port

__all__ = ["RestartableRedis", "redis_binary", "redis_server"]


def redis_binary() -> str | None:
    """The path of redis-server, installing Debian's package once if it is missing (as root);
    None when it cannot be had."""
    found = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else None
    )
    if found is not None or os.geteuid() != 0 or shutil.which("apt-get") is None:
        return found
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "redis-server"]):
        if subprocess.run(command, env=env, capture_output=True, check=False).returncode != 0:
            return None
    return shutil.which("redis-server")


def _command(binary: str, port: int, folder: Path) -> list[str]:
    return [
        binary,
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        str(folder),
        "--save",
        "",
        "--appendonly",
        "no",
        "--daemonize",
        "no",
    ]


@contextmanager
def redis_server(folder: Path, binary: str) -> Iterator[str]:
    """A Redis on 127.0.0.1 for the duration of the block; yields its URL."""
    port = free_port()
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "redis.log").open("wb") as log, started(_command(binary, port, folder), log) as process:
        wait_for_port(process, port)
        yield f"redis://127.0.0.1:{port}/0"


class RestartableRedis:
    """A Redis that a test kills (SIGKILL) and starts again, empty, on the same port."""

    def __init__(self, folder: Path, binary: str) -> None:
        self.folder, self.binary, self.port = folder, binary, free_port()
        folder.mkdir(parents=True, exist_ok=True)
        self.process: subprocess.Popen[bytes] | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        with (self.folder / "redis.log").open("ab") as log:
            self.process = subprocess.Popen(
                _command(self.binary, self.port, self.folder), stdout=log, stderr=subprocess.STDOUT
            )
        wait_for_port(self.process, self.port)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
