"""Store faults under a real websocket server: a full disk and a locked file.

While the store fails, nothing unsaved is acknowledged (the request gets REQUEST_FAILED and
nobody sees the change), reads are still served, /healthz says "failing"; when the store works
again, the same requests succeed (the same move id, since the pending turn is stored).
"""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import urllib.request
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from random import Random
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from parlour.protocols.apologies_ws import ApologiesService
from parlour.settings import Settings
from parlour.storage import Record, StoreFailure
from parlour.storage.sqlite import SQLiteStore
from parlour.transport.runtime import Runtime
from parlour.transport.websocket import serve_websocket
from parlour.transport.writer import ProcessCommitter


@asynccontextmanager
async def server(
    path: Path, kind: type[SQLiteStore] = SQLiteStore, writer: str = "thread"
) -> AsyncIterator[tuple[Any, int, Runtime]]:
    """A server on a store. Faults are injected into this process's store object, so the
    commits happen on its writer thread here (the writer process is tested at the end)."""
    store = kind(path)
    runtime = Runtime(store=store, store_writer=writer)
    service = ApologiesService(replace(Settings(), robot="random"), Random(5))
    runtime.execute(service.restore(store.load_live(), runtime.clock()), service)
    async with serve_websocket(service, "127.0.0.1", 0, runtime) as listener:
        yield store, listener.port, runtime
    await runtime.close_store()


class Player:
    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.id: str | None = None

    async def send(self, message: str, **context: Any) -> None:
        body: dict[str, Any] = {"message": message}
        if self.id is not None:
            body["player_id"] = self.id
        if context:
            body["context"] = context
        await self.ws.send(json.dumps(body))

    async def advertise(self) -> None:
        """A public 2-seat ADULT game."""
        await self.send(
            "ADVERTISE_GAME", name="g", mode="ADULT", players=2, visibility="PUBLIC", invited_handles=[]
        )

    async def recv(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(await asyncio.wait_for(self.ws.recv(), 10))
        return message

    async def until(self, kind: str) -> dict[str, Any]:
        while True:
            message = await self.recv()
            if message["message"] in (kind, "REQUEST_FAILED"):
                return message


def health(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as answer:
        result: dict[str, Any] = json.loads(answer.read())
        return result


async def start_game(player: Player) -> tuple[dict[str, Any], dict[str, Any]]:
    """Register, advertise a 4-seat game, start it with robots: the first state and turn."""
    await player.send("REGISTER_PLAYER", handle="alice")
    player.id = (await player.until("PLAYER_REGISTERED"))["player_id"]
    await player.send(
        "ADVERTISE_GAME", name="g", mode="STANDARD", players=4, visibility="PUBLIC", invited_handles=[]
    )
    await player.until("GAME_ADVERTISED")
    await player.send("START_GAME")
    turn = await player.until("GAME_PLAYER_TURN")
    await player.send("RETRIEVE_GAME_STATE")
    state = await player.until("GAME_STATE_CHANGE")
    return state, turn


class FullDisk(SQLiteStore):
    """A store on a disk that fills up when told to: commits raise what SQLite raises then."""

    full = False

    def commit(self, records: Sequence[Record]) -> None:
        if self.full:
            raise StoreFailure(f"{self.location}: database or disk is full")
        super().commit(records)


def test_a_full_disk_refuses_changes_serves_reads_and_recovers(tmp_path: Path) -> None:
    async def test() -> None:
        async with (
            server(tmp_path / "p.db", FullDisk) as (store, port, runtime),
            connect(f"ws://127.0.0.1:{port}/") as ws1,
            connect(f"ws://127.0.0.1:{port}/") as ws2,
        ):
            alice, bob = Player(ws1), Player(ws2)
            state, turn = await start_game(alice)
            moves_before = store.load_game(state["context"]["game_id"])
            assert moves_before is not None
            store.full = True
            move_id = sorted(turn["context"]["moves"])[0]
            await alice.send("EXECUTE_MOVE", move_id=move_id)
            failed = await alice.recv()
            assert failed["message"] == "REQUEST_FAILED", failed
            assert failed["context"]["reason"] == "INTERNAL_ERROR"
            assert "could not save" in failed["context"]["comment"]
            assert (await asyncio.to_thread(health, port))["store"] == "failing"
            # Reads still work, and show the game as it was before the refused move.
            await alice.send("RETRIEVE_GAME_STATE")
            again = await alice.until("GAME_STATE_CHANGE")
            assert again["context"]["player"] == state["context"]["player"]
            assert again["context"]["opponents"] == state["context"]["opponents"]
            await alice.send("LIST_PLAYERS")
            assert (await alice.until("REGISTERED_PLAYERS"))["message"] == "REGISTERED_PLAYERS"
            # A registration is refused too, and leaves nothing behind.
            await bob.send("REGISTER_PLAYER", handle="bob")
            refused = await bob.recv()
            assert refused["message"] == "REQUEST_FAILED"
            await alice.send("LIST_PLAYERS")
            listed = await alice.until("REGISTERED_PLAYERS")
            assert [p["handle"] for p in listed["context"]["players"]] == ["alice"]
            assert store.load_game(state["context"]["game_id"]) == moves_before
            # The disk has room again: the same move id plays, bob registers.
            store.full = False
            await alice.send("EXECUTE_MOVE", move_id=move_id)
            moved = await alice.until("GAME_STATE_CHANGE")
            assert moved["message"] == "GAME_STATE_CHANGE"
            await bob.send("REGISTER_PLAYER", handle="bob")
            assert (await bob.until("PLAYER_REGISTERED"))["message"] == "PLAYER_REGISTERED"
            assert (await asyncio.to_thread(health, port))["store"] == "ok"
            await runtime.drain_store()
            stored = store.load_game(state["context"]["game_id"])
            assert stored is not None and len(stored[1]) > len(moves_before[1])
            assert store.check()["ok"]

    asyncio.run(asyncio.wait_for(test(), 30))


def test_a_locked_store_refuses_changes_until_the_lock_goes(tmp_path: Path) -> None:
    async def test() -> None:
        async with server(tmp_path / "p.db") as (store, port, _):
            store.db.execute("PRAGMA busy_timeout = 50")
            async with connect(f"ws://127.0.0.1:{port}/") as ws:
                alice = Player(ws)
                await alice.send("REGISTER_PLAYER", handle="alice")
                alice.id = (await alice.until("PLAYER_REGISTERED"))["player_id"]
                other = sqlite3.connect(tmp_path / "p.db", isolation_level=None)
                other.execute("BEGIN EXCLUSIVE")  # another process holds the file
                await alice.advertise()
                failed = await alice.recv()
                assert failed["message"] == "REQUEST_FAILED"
                assert (await asyncio.to_thread(health, port))["store"] == "failing"
                other.execute("ROLLBACK")
                other.close()
                # Nothing was advertised: the player is free to advertise again, and it works.
                await alice.send("LIST_AVAILABLE_GAMES")
                assert (await alice.until("AVAILABLE_GAMES"))["context"]["games"] == []
                await alice.advertise()
                assert (await alice.until("GAME_ADVERTISED"))["message"] == "GAME_ADVERTISED"
                assert (await asyncio.to_thread(health, port))["store"] == "ok"

    asyncio.run(asyncio.wait_for(test(), 30))


def test_a_read_only_store_refuses_changes_until_it_is_writable(tmp_path: Path) -> None:
    async def test() -> None:
        async with (
            server(tmp_path / "p.db") as (store, port, _),
            connect(f"ws://127.0.0.1:{port}/") as ws,
        ):
            alice = Player(ws)
            store.db.execute("PRAGMA query_only = ON")  # SQLite: "attempt to write a readonly database"
            await alice.send("REGISTER_PLAYER", handle="alice")
            failed = await alice.recv()
            assert failed["message"] == "REQUEST_FAILED" and failed["context"]["reason"] == "INTERNAL_ERROR"
            assert (await asyncio.to_thread(health, port))["store"] == "failing"
            store.db.execute("PRAGMA query_only = OFF")
            await alice.send("REGISTER_PLAYER", handle="alice")  # the handle was never taken
            assert (await alice.until("PLAYER_REGISTERED"))["message"] == "PLAYER_REGISTERED"
            assert (await asyncio.to_thread(health, port))["store"] == "ok"

    asyncio.run(asyncio.wait_for(test(), 30))


def test_when_the_writer_process_dies_changes_are_refused_and_a_new_one_takes_over(tmp_path: Path) -> None:
    async def test() -> None:
        async with (
            server(tmp_path / "p.db", writer="process") as (store, port, runtime),
            connect(f"ws://127.0.0.1:{port}/") as ws,
        ):
            alice = Player(ws)
            await alice.send("REGISTER_PLAYER", handle="alice")
            alice.id = (await alice.until("PLAYER_REGISTERED"))["player_id"]
            assert store.load_player(alice.id) is not None  # committed by the writer process
            committer = runtime._committer
            assert isinstance(committer, ProcessCommitter) and committer._process is not None
            # The writer dies with a change on its way to it: that change is refused.
            committer._process.send_signal(signal.SIGSTOP)
            await alice.advertise()
            await asyncio.sleep(0.2)
            committer._process.send_signal(signal.SIGKILL)
            await asyncio.to_thread(committer._process.wait, 10)
            failed = await alice.recv()
            assert failed["message"] == "REQUEST_FAILED" and failed["context"]["reason"] == "INTERNAL_ERROR"
            assert (await asyncio.to_thread(health, port))["store"] == "failing"
            # The next change starts a new writer process, and is stored.
            await alice.advertise()
            advertised = await alice.until("GAME_ADVERTISED")
            assert advertised["message"] == "GAME_ADVERTISED"
            assert (await asyncio.to_thread(health, port))["store"] == "ok"
            assert store.load_game(advertised["context"]["game"]["game_id"]) is not None

    asyncio.run(asyncio.wait_for(test(), 30))


def test_the_read_back_after_a_failed_commit_covers_ratings_relations_devices_and_chat(
    tmp_path: Path,
) -> None:
    from parlour.protocols.async_ws.state.readback import read_back
    from parlour.storage import (
        ChatRow,
        DeviceGone,
        DeviceRow,
        RatingRow,
        RelationGone,
        RelationRow,
    )
    from tests.storage.rows import account

    store = SQLiteStore(tmp_path / "read-back.db")
    buddy = RelationRow(1, 2, "buddy", 10.0)
    line = ChatRow(0, 1, 1, "Player1", "kept", 0, 11.0)
    rating = RatingRow(1, "fish", 28.0, 7.0, 3, 12.0, 7.0)
    device = DeviceRow(1, "APNS", "t1", 13.0)
    store.commit([account(1), account(2), account(3), buddy, line, rating, device])
    failed: list[Record] = [
        RelationGone(1, 2, "buddy"),
        RelationRow(1, 3, "ignore", 20.0),
        ChatRow(0, 2, 1, "Player1", "lost", 0, 21.0),
        RatingRow(1, "fish", 30.0, 6.0, 4, 22.0, 12.0),
        RatingRow(2, "fish", 26.0, 8.0, 1, 22.0, 2.0),
        DeviceGone(1, "APNS", "t1"),
        DeviceRow(2, "APNS", "t2", 23.0),
    ]
    reload = read_back(failed, store)  # what the /async service reads back (its reload)
    assert reload.failure is None
    assert reload.relations == {(1, 2, "buddy"): buddy, (1, 3, "ignore"): None}
    assert reload.chat == {0: [line]}
    assert reload.ratings == {(1, "fish"): rating, (2, "fish"): None}
    assert reload.devices == {(1, "APNS", "t1"): device, (2, "APNS", "t2"): None}
    store.close()
