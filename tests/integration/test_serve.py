"""``parlour serve`` as a process: health, and a graceful shutdown on SIGTERM."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import urllib.request
from pathlib import Path

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from parlour.protocols.async_ws.reference.schema import schema
from tests.processes import BIN, clean_env, free_port, serve_command, wait_for_port


def test_sigterm_sends_server_shutdown_then_closes_1001(tmp_path: Path) -> None:
    port = free_port()
    log = (tmp_path / "server.log").open("wb")
    process = subprocess.Popen(serve_command(port), stdout=log, stderr=subprocess.STDOUT, env=clean_env())
    try:
        wait_for_port(process, port)

        async def scenario() -> tuple[list[str], int | None]:
            async with connect(f"ws://127.0.0.1:{port}/") as ws:
                await ws.send(json.dumps({"message": "REGISTER_PLAYER", "context": {"handle": "leela"}}))
                received = [str(await ws.recv())]
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
                    health = json.loads(response.read())
                assert health["players"] == 1 and health["connections"] == 1
                process.send_signal(signal.SIGTERM)
                try:
                    while True:
                        received.append(str(await asyncio.wait_for(ws.recv(), 10)))
                except ConnectionClosed as closed:
                    return received, closed.rcvd.code if closed.rcvd else None

        received, code = asyncio.run(scenario())
        assert json.loads(received[-1]) == {"message": "SERVER_SHUTDOWN"}
        assert code == 1001
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        log.close()
    text = (tmp_path / "server.log").read_text()
    assert "REGISTER_PLAYER by leela" in text
    player_id = json.loads(received[0])["player_id"]
    assert player_id not in text  # player ids are secrets: never logged


def test_a_file_that_is_not_a_store_is_refused_in_one_line_and_left_alone(tmp_path: Path) -> None:
    notes = tmp_path / "notes.db"
    notes.write_text("my notes, not a database\n")
    done = subprocess.run(
        serve_command(0, store=str(notes)),
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=30,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"parlour: {notes}: not a Parlour store (not an SQLite database)"
    ]
    assert notes.read_text() == "my notes, not a database\n"


def test_the_default_store_is_created_under_the_working_directory(tmp_path: Path) -> None:
    port = free_port()
    # No --store flag: the default, var/parlour.db under the working directory.
    command = [str(BIN / "parlour"), "serve", "--port", str(port), "--fish-port", "0", "--tsuro-port", "0"]
    process = subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, env=clean_env()
    )
    try:
        wait_for_port(process, port)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
            assert json.loads(response.read())["store"] == "ok"
        assert (tmp_path / "var" / "parlour.db").is_file()
    finally:
        process.terminate()
        process.wait(10)


def test_the_async_protocol_schema_is_served(parlour_port: int) -> None:
    with urllib.request.urlopen(f"http://127.0.0.1:{parlour_port}/async/schema.json", timeout=5) as response:
        assert response.headers["Content-Type"] == "application/schema+json"
        served = json.loads(response.read())
    assert served == schema()
    assert {"ClientMessage", "ServerMessage", "CommitActionRequest"} <= set(served["$defs"])
