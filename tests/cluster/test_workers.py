"""``parlour serve --workers N``: a supervisor of N cluster nodes on one port.

The supervisor's parts with stand-in workers (a few lines of Python each, no Redis); then the
real thing on loopback: two workers on one Redis and one SQLite file, the kernel spreading
connections over them, a game between players on different workers, a worker killed with
SIGKILL and restarted, and a SIGTERM that stops every worker cleanly."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from parlour.cli import main
from parlour.settings import SettingError, Settings
from parlour.workers import (
    Backoff,
    Supervisor,
    WorkerLabel,
    claim_port,
    read_spec,
    serve_worker,
    spec_line,
    worker_count,
    worker_settings,
)
from tests.asyncclient import (
    AsyncClient,
    Player,
    acreate_account,
    alogin,
    enter_lobby,
    play_first_legal_actions,
    unique_name,
)
from tests.cluster.nodes import LEASE, health
from tests.processes import clean_env, free_port, serve_command, wait_for_port

REDIS = "redis://127.0.0.1:6379/0"


# -- The parts --------------------------------------------------------------------------------------


def test_workers_need_a_cluster_and_count_the_cores_for_zero() -> None:
    assert Settings().workers == 1  # one process, no Redis: `make run` as ever
    with pytest.raises(SettingError, match="workers other than 1 need cluster"):
        Settings(workers=2)
    with pytest.raises(SettingError, match="workers other than 1 need cluster"):
        Settings(workers=0)
    with pytest.raises(SettingError, match="workers must be between 0 and 256"):
        Settings(workers=257, cluster=REDIS)
    assert worker_count(Settings(workers=3, cluster=REDIS)) == 3
    assert worker_count(Settings(workers=0, cluster=REDIS)) == len(os.sched_getaffinity(0))


def test_only_the_first_worker_serves_fish_and_tsuro_tables() -> None:
    settings = Settings(workers=3, cluster=REDIS, port=0, fish_port=8001, tsuro_port=8000)
    first, second = worker_settings(settings, 0, 9000), worker_settings(settings, 1, 9000)
    assert (first.workers, first.port, first.fish_port, first.tsuro_port) == (1, 9000, 8001, 8000)
    assert (second.workers, second.port, second.fish_port, second.tsuro_port) == (1, 9000, 0, 0)
    assert second.cluster == REDIS and second.store == settings.store


def test_a_worker_reads_its_settings_secrets_included_from_one_line(tmp_path: Path) -> None:
    key = "k" * 40
    settings = Settings(cluster=REDIS, auth_jwt_key=key, auth_jwt_algorithms="HS256", max_players=7)
    line = spec_line(2, settings)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    spec = tmp_path / "spec"
    spec.write_bytes(line + b"ignored")
    with spec.open("rb") as stream:
        assert read_spec(stream) == (2, settings)
    for bad in (b"", b"not json\n", b'{"index": "1", "settings": {}}\n', b'{"index": 1}\n'):
        spec.write_bytes(bad)
        with spec.open("rb") as stream, pytest.raises(SettingError, match="no worker settings"):
            read_spec(stream)
    spec.write_bytes(b'{"index": 1, "settings": {"workers": 2}}\n')
    with spec.open("rb") as stream, pytest.raises(SettingError, match="need cluster"):
        read_spec(stream)


def test_the_worker_command_is_for_the_supervisor_only(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``parlour worker`` without its settings line refuses to start, and says who starts it;
    it is not listed among the commands."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    assert main(["worker"]) == 2
    assert "started by parlour serve --workers" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--help"])
    listed = capsys.readouterr().out
    assert "serve" in listed and "worker" not in listed


def test_the_backoff_doubles_up_to_its_bound() -> None:
    backoff = Backoff(first=0.5, most=4.0)
    assert [backoff.delay(n) for n in range(1, 7)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]


def test_a_worker_names_itself_in_every_line() -> None:
    record = logging.LogRecord("parlour.cluster", 20, __file__, 1, "owns %s", ("async",), None)
    label = WorkerLabel(2)
    assert label.filter(record) and label.filter(record)  # once per record, however many handlers
    assert record.name == "parlour.cluster (worker 2)"


def test_a_worker_stops_when_its_supervisor_is_gone() -> None:
    """The end of the pipe from the supervisor (standard input) stops the server."""

    async def main() -> int:
        read, write = os.pipe()
        with os.fdopen(read, "rb", buffering=0) as supervisor:

            async def serve(stop: asyncio.Event) -> int:
                asyncio.get_running_loop().call_later(0.05, os.close, write)
                await asyncio.wait_for(stop.wait(), 5)
                return 7

            return await serve_worker(serve, supervisor)

    assert asyncio.run(main()) == 7


def test_the_port_must_be_free_even_of_a_server_sharing_it() -> None:
    async def main() -> None:
        with socket.socket() as other:
            other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            other.bind(("127.0.0.1", 0))
            other.listen()
            with pytest.raises(OSError):
                await claim_port("127.0.0.1", other.getsockname()[1])
        port = await claim_port("127.0.0.1", 0)
        assert port > 0
        assert await claim_port("127.0.0.1", port) == port  # released at once

    asyncio.run(main())


#: A stand-in worker: reads its settings line, reports it, then listens on the shared port until
#: SIGTERM (exit 0), or exits at once with the code in STAND_IN_EXIT.
STAND_IN = """
import json, os, signal, socket, sys, time
spec = json.loads(sys.stdin.readline())
print("worker", spec["index"], spec["settings"]["port"], spec["settings"]["fish_port"], flush=True)
code = int(os.environ.get("STAND_IN_EXIT", "-1"))
if code >= 0:
    sys.exit(code)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
listener.bind(("127.0.0.1", spec["settings"]["port"]))
listener.listen()
while True:
    time.sleep(1)
"""


def supervisor(env: dict[str, str], workers: int = 2) -> Supervisor:
    settings = Settings(workers=workers, cluster=REDIS, port=0, fish_port=8001)
    return Supervisor(
        settings,
        command=(sys.executable, "-c", STAND_IN),
        backoff=Backoff(first=0.01, most=0.05, stable=60.0, restarts=2),
        env={**os.environ, **env},
    )


def test_the_supervisor_forwards_a_stop_and_waits_for_every_worker(capfd: pytest.CaptureFixture[str]) -> None:
    async def main() -> tuple[int, Supervisor]:
        boss = supervisor({})
        running = asyncio.get_running_loop().create_task(boss.run())
        out = ""
        while not ("worker 0" in out and "worker 1" in out):  # both read their settings
            await asyncio.sleep(0.02)
            out += capfd.readouterr().out
        # Worker 1 was started once worker 0 listened (it had read its settings by then).
        assert out.index("worker 0") < out.index("worker 1"), out
        boss.stop(signal.SIGTERM)  # what its handler of SIGTERM does
        return await asyncio.wait_for(running, 10), boss

    code, boss = asyncio.run(main())
    assert code == 0
    assert [slot.process.returncode for slot in boss.slots if slot.process] == [0, 0]


def test_a_worker_that_keeps_failing_is_restarted_then_given_up_on(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    async def main() -> tuple[int, Supervisor]:
        boss = supervisor({"STAND_IN_EXIT": "3"}, workers=1)
        return await asyncio.wait_for(boss.run(), 10), boss

    caplog.set_level("INFO", "parlour.workers")
    code, boss = asyncio.run(main())
    assert code == 1
    assert boss.slots[0].failures == 3  # the first run and two restarts, each exiting at once
    started = capfd.readouterr().out.splitlines()
    assert len(started) == 3 and all(line.startswith(f"worker 0 {boss.port} 8001") for line in started)
    text = caplog.text
    assert text.count("exited unasked (code 3)") == 2, text
    assert "worker 0 exited 3 times in a row within 60 s of starting (last: code 3): giving up" in text


# -- The real thing ---------------------------------------------------------------------------------


async def pinned_client(port: int) -> tuple[int, AsyncClient]:
    """A websocket to /async and the cluster node (worker) it reached: ``GET /healthz`` then the
    upgrade, on one keep-alive connection, so that both reach the same worker."""
    loop = asyncio.get_running_loop()
    sock = socket.socket()
    sock.setblocking(False)
    await loop.sock_connect(sock, ("127.0.0.1", port))
    await loop.sock_sendall(sock, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = await loop.sock_recv(sock, 65536)
        assert chunk, data
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    found = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
    assert found is not None, head
    while len(body) < int(found[1]):
        body += await loop.sock_recv(sock, 65536)
    node: int = json.loads(body)["cluster_node"]
    ws = await connect(
        f"ws://127.0.0.1:{port}/async", sock=sock, open_timeout=5, close_timeout=1, ping_interval=None
    )
    return node, AsyncClient(ws, f"node {node}")


async def signed_in(port: int, client: AsyncClient, prefix: str) -> Player:
    name = unique_name(prefix)
    player_id = await acreate_account(port, name)
    token = await alogin(port, name)
    connected = await client.auth(name, token)
    assert connected["type"] == "AsyncConnectedRequest", connected
    return Player(name, player_id, token, client, connected)


def pids(log: Path, index: int) -> list[int]:
    """The pids of worker ``index``, in the order the supervisor started them."""
    return [int(pid) for pid in re.findall(rf"worker {index} started \(pid (\d+)\)", log.read_text())]


def wait_until(check: Callable[[], object], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_two_workers_share_a_port_play_together_restart_and_stop(tmp_path: Path, redis_url: str) -> None:
    port = free_port()
    log = tmp_path / "serve.log"
    command = serve_command(
        port,
        "--workers",
        "2",
        "--cluster",
        redis_url,
        "--cluster-lease",
        str(LEASE),
        store=str(tmp_path / "parlour.db"),
    )
    with log.open("ab") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=clean_env())
    try:
        wait_for_port(process, port)
        # Worker 1 starts once worker 0 listens; then the kernel spreads connections by a hash
        # of their addresses and ports: a few connections reach both (each answering with its
        # own node number).
        answered: set[int] = set()
        wait_until(lambda: answered.add(health(port)["cluster_node"]) or len(answered) == 2, 20, "2 nodes")

        async def scenario() -> tuple[set[int], Player, int]:
            clients: dict[int, AsyncClient] = {}
            try:
                for _ in range(60):
                    node, client = await pinned_client(port)
                    if node in clients:
                        await client.close()
                    else:
                        clients[node] = client
                    if len(clients) == 2:
                        break
                assert len(clients) == 2, f"every connection reached node {set(clients)}"
                (_, client_a), (_, client_b) = sorted(clients.items())
                a = await signed_in(port, client_a, "wa")
                b = await signed_in(port, client_b, "wb")
                # A whole server-rules game between a player on each worker.
                await enter_lobby(a)
                config = {"game_type": "fish", "max_players": 2, "rules": "fish"}
                await a.client.send({"type": "LobbyCreateGameRequest", "configuration": config})
                game_id = (await a.client.expect("LobbyGameCreatedRequest"))["game_id"]
                await enter_lobby(b)
                await b.client.send({"type": "LobbyJoinGameRequest", "game_id": game_id})
                for player in (a, b):
                    await player.client.expect("GameCreatedRequest", game_id=game_id)
                assert await play_first_legal_actions(a, {1: a, 2: b}, game_id) > 4
                for player in (a, b):
                    await player.client.expect("GameOutcomeRequest", game_id=game_id)
                return set(clients), a, game_id
            finally:
                for client in clients.values():
                    await client.close()

        nodes, player, game_id = asyncio.run(scenario())

        # Worker 0, started first, owns every service. Killed with SIGKILL, it is started again,
        # as a new node on the same port, and worker 1 takes the services over.
        (killed,) = pids(log, 0)
        os.kill(killed, signal.SIGKILL)
        wait_until(lambda: len(pids(log, 0)) == 2, 10, "worker 0 restarted")
        assert f"worker 0 (pid {killed}) exited unasked (SIGKILL)" in log.read_text()
        seen: set[int] = set()
        wait_until(
            lambda: seen.add(health(port)["cluster_node"]) or seen - nodes, 10, "the new worker answers"
        )

        # A live worker owns /async within the lease, and a player coming back with its token
        # finds its game there.
        wait_until(lambda: "async" in health(port)["cluster_owns"], 10, "a live worker owns /async")

        async def come_back() -> None:
            for attempt in range(3):
                client = await AsyncClient.connect(port, label=player.name)
                try:
                    connected = await client.auth(player.name, player.token)
                    assert connected["type"] == "AsyncConnectedRequest", connected
                    report = await client.report(game_id)
                    assert report["status"] != "RUNNING", report
                    return
                except AssertionError:
                    # A connection to a gateway that had not yet heard of the takeover is
                    # closed with 1012 when it does: clients reconnect, as this one does.
                    if not client.closed or attempt == 2:
                        raise
                finally:
                    await client.close()

        asyncio.run(come_back())

        # SIGTERM: every worker stops cleanly (a graceful stop: leases handed over), soon.
        workers = [pids(log, 0)[-1], pids(log, 1)[-1]]
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert process.wait(15) == 0
        assert time.monotonic() - started < 8
        text = log.read_text()
        for index, pid in enumerate(workers):
            assert f"worker {index} (pid {pid}) stopped (code 0)" in text, text
        assert "every worker stopped\n" in text
        assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()]  # none left behind
        assert "Traceback" not in text, text
    except BaseException:
        print(log.read_text(errors="replace"))
        raise
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
