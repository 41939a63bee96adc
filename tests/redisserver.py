"""A throwaway ``redis-server`` for cluster tests and benchmarks: a temporary folder, a free
loopback port, no persistence, stopped at the end; optionally with a password, over TLS (a
self-signed certificate made by ``openssl``), or reached by its socket file. Debian's
``redis-server`` is installed when it is missing and this user may install packages (as
``make cluster`` does)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.processes import free_port, started, wait_for_port

__all__ = ["RestartableRedis", "certificate", "redis_binary", "redis_server"]


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


def certificate(folder: Path) -> Path:
    """A self-signed certificate for 127.0.0.1 (``cert.pem``, its key ``key.pem``), made by
    ``openssl``: the server's, and the one authority a client trusts."""
    cert = folder / "cert.pem"
    command = [
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
    ]
    command += [
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-keyout",
        str(folder / "key.pem"),
        "-out",
        str(cert),
    ]
    subprocess.run(command, check=True, capture_output=True)
    return cert


@contextmanager
def redis_server(
    folder: Path, binary: str, *, password: str | None = None, tls: bool = False, unix: bool = False
) -> Iterator[str]:
    """A Redis on 127.0.0.1 for the duration of the block; yields its URL: ``redis://``, with
    ``password`` in it if it requires one; ``rediss://`` (trusting its certificate) with
    ``tls``, then served over TLS only; ``unix://`` with ``unix``, its socket file in a short
    temporary folder (a socket's path is limited to about 100 bytes)."""
    port = free_port()
    folder.mkdir(parents=True, exist_ok=True)
    command = _command(binary, port, folder)
    userinfo = "" if password is None else f":{password}@"
    url = f"redis://{userinfo}127.0.0.1:{port}/0"
    if password is not None:
        command += ["--requirepass", password]
    if tls:
        cert = certificate(folder)
        command[command.index("--port") + 1] = "0"
        command += ["--tls-port", str(port), "--tls-cert-file", str(cert)]
        command += ["--tls-key-file", str(folder / "key.pem"), "--tls-ca-cert-file", str(cert)]
        command += ["--tls-auth-clients", "no"]
        url = f"rediss://{userinfo}127.0.0.1:{port}/0?ssl_ca_certs={cert}"
    with tempfile.TemporaryDirectory(prefix="redis") as sockets:
        if unix:
            command += ["--unixsocket", f"{sockets}/redis.sock", "--unixsocketperm", "700"]
            url = f"unix://{userinfo}{sockets}/redis.sock?db=0"
        with (folder / "redis.log").open("wb") as log, started(command, log) as process:
            wait_for_port(process, port)
            yield url


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
