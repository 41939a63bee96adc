"""The example clients in examples/ play whole games against a real server on loopback.

Each example is run as its own program, as a reader of docs/clients.md would run it, against
one server subprocess with a store (tables wait a moment for players, then robots sit down).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.processes import BIN, clean_env, free_port, running

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@dataclass(frozen=True)
class Server:
    port: int
    fish_port: int
    tsuro_port: int
    log: Path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("examples")
    found = Server(free_port(), free_port(), free_port(), folder / "server.log")
    command = [str(BIN / "parlour"), "serve", "--port", str(found.port)]
    command += ["--fish-port", str(found.fish_port), "--tsuro-port", str(found.tsuro_port)]
    command += ["--store", str(folder / "parlour.db"), "--fish-wait", "0.2", "--tsuro-wait", "0.2"]
    command += ["--tick-seconds", "0.05"]
    with found.log.open("wb") as log, running(command, found.port, log, clean_env()):
        yield found
    text = found.log.read_text()
    assert "Traceback" not in text and " ERROR " not in text, text


def run_example(name: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("game over: "), done.stdout
    return done.stdout


def test_apologies_client_plays_a_game_against_robots(server: Server) -> None:
    out = run_example("apologies_client.py", "--url", f"ws://127.0.0.1:{server.port}/", "--handle", "ex1")
    assert out.endswith(" won\n")


@pytest.mark.parametrize("game", ["fish", "tsuro"])
def test_async_client_plays_server_rules_with_a_robot(server: Server, game: str) -> None:
    out = run_example("async_client.py", "--server", f"http://127.0.0.1:{server.port}", "--game", game)
    assert '"rank": 1' in out


def test_fish_client_plays_a_table_against_robots(server: Server) -> None:
    out = run_example("fish_client.py", "--port", str(server.fish_port))
    assert "winners [" in out


def test_tsuro_client_plays_a_table_against_robots(server: Server) -> None:
    out = run_example("tsuro_client.py", "--port", str(server.tsuro_port))
    assert "0: " in out  # the first place


def test_an_unreachable_server_is_one_line_and_exit_1() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "fish_client.py"), "--port", str(free_port())],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 1 and done.stderr.startswith("fish_client: ") and "Traceback" not in done.stderr
