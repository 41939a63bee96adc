"""Logs: the ``json`` format (one object per line), the ``log_format`` setting, and a whole
server's log kept free of passwords, tokens and player ids through sign-up, sign-in and play."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect

from parlour.app import run_server
from parlour.cli import build_parser
from parlour.jsonlog import JsonFormatter, configure_logging
from parlour.settings import SettingError, Settings, load_settings
from tests.processes import free_port


def record(message: str, *args: object, exc: bool = False) -> logging.LogRecord:
    exc_info = None
    if exc:
        try:
            raise ValueError("boom")
        except ValueError:
            exc_info = sys.exc_info()
    entry = logging.LogRecord("parlour.transport", logging.WARNING, __file__, 1, message, args, exc_info)
    entry.created = 1_700_000_000.25
    return entry


def test_a_json_line_holds_time_level_logger_and_message() -> None:
    line = JsonFormatter().format(record("table %d: %s joined", 3, "Éowyn\nnext"))
    assert "\n" not in line and line.isascii()
    assert json.loads(line) == {
        "time": "2023-11-14T22:13:20.250Z",
        "level": "WARNING",
        "logger": "parlour.transport",
        "message": "table 3: Éowyn\nnext joined",
    }


def test_a_json_line_carries_the_traceback_of_an_exception() -> None:
    entry = json.loads(JsonFormatter().format(record("failed", exc=True)))
    assert entry["message"] == "failed"
    assert entry["exception"].startswith("Traceback") and "ValueError: boom" in entry["exception"]


def test_log_format_is_a_setting_a_flag_and_an_environment_variable() -> None:
    assert Settings().log_format == "text"
    assert load_settings(environ={"PARLOUR_LOG_FORMAT": "json"}).log_format == "json"
    args = build_parser().parse_args(["serve", "--log-format", "json"])
    assert load_settings(environ={}, overrides={"log_format": args.log_format}).log_format == "json"
    with pytest.raises(SettingError, match="log_format must be text or json"):
        Settings(log_format="yaml")


def test_configure_logging_writes_json_lines_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        configure_logging("info", "json")
        logging.getLogger("parlour.test").info("hello %s", "there")
        logging.getLogger("parlour.test").debug("not at INFO")
    finally:
        root.handlers[:], root.level = saved
    lines = capsys.readouterr().err.splitlines()
    assert [json.loads(line)["message"] for line in lines] == ["hello there"]
    assert json.loads(lines[0])["level"] == "INFO" and json.loads(lines[0])["logger"] == "parlour.test"


async def sign_up_sign_in_and_play(port: int) -> list[str]:
    """Every secret the server hands out or is given along the way."""
    base = f"http://127.0.0.1:{port}"
    password = "correct horse battery staple"
    async with httpx.AsyncClient(base_url=base, timeout=10) as http:
        created = await http.post("/api/accounts", json={"name": "ada", "password": password})
        assert created.status_code == 201
        wrong = await http.post("/api/sessions", json={"name": "ada", "password": password + "!"})
        assert wrong.status_code == 401
        signed_in = await http.post("/api/sessions", json={"name": "ada", "password": password})
        token = signed_in.json()["token"]
    async with connect(f"ws://127.0.0.1:{port}/async") as ws:
        await ws.send(json.dumps({"type": "AsyncAuthRequest", "name": "ada", "sessionToken": token}))
        assert json.loads(await ws.recv())["type"] == "AsyncConnectedRequest"
    async with connect(f"ws://127.0.0.1:{port}/") as ws:
        await ws.send(json.dumps({"message": "REGISTER_PLAYER", "context": {"handle": "leela"}}))
        player_id = json.loads(await ws.recv())["player_id"]
        await ws.send(json.dumps({"message": "LIST_PLAYERS", "player_id": player_id}))
        await ws.recv()
    return [password, password + "!", token, player_id]


def test_sign_up_sign_in_and_register_log_no_password_token_or_id(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    port = free_port()
    settings = Settings(
        port=port, store=str(tmp_path / "parlour.db"), store_writer="thread", fish_port=0, tsuro_port=0
    )

    async def scenario() -> list[str]:
        stop = asyncio.Event()
        server = asyncio.create_task(run_server(settings, stop))
        for _ in range(200):
            try:
                await asyncio.open_connection("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.02)
        try:
            return await sign_up_sign_in_and_play(port)
        finally:
            stop.set()
            assert await asyncio.wait_for(server, 20) == 0

    with caplog.at_level(logging.DEBUG):
        secrets = asyncio.run(scenario())
    formatter = JsonFormatter()
    # The server's records (this process's websockets and httpx clients log what they send).
    records = [entry for entry in caplog.records if entry.name.split(".")[0] in ("parlour", "websockets")]
    records = [entry for entry in records if not entry.name.startswith("websockets.client")]
    lines = [formatter.format(entry) for entry in records]
    text = "\n".join(lines + [entry.getMessage() for entry in records])
    assert any("REGISTER_PLAYER by leela" in line for line in lines)  # the log does say who
    for secret in secrets:
        assert secret not in text
