"""Fish tables over TCP (docs/fish-protocol.md): cases built from the messages of
``protocols/fish_tcp/messages.py``, and the oracle.

Oracle: before a player has joined, a bad message gets ``PlayerConnected`` with an
``error_message`` and the connection is closed ("refused"); a seated player that sends a bad
message is kicked: its connection is closed, with no message required ("kicked").
Well-formed joins ("joined") get ``PlayerConnected`` with a ``player_id``.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import Any

from tests.fuzz.cases import Case, Tally, weighted_cases
from tests.fuzz.tcp import PAUSE, WAIT, Exchange, run_cases
from tests.fuzz.values import deep, dumps, hostile_string, huge_number, wrong_value

__all__ = ["cases", "judge", "run"]

LIMIT = 65_536


def connect(age: Any = 10) -> dict[str, Any]:
    return {"type": "PlayerConnect", "age": age}


def place(tile: Any = 3) -> dict[str, Any]:
    return {"type": "PlacePenguin", "tile_id": tile}


def move(penguin: Any = 0, tile: Any = 3) -> dict[str, Any]:
    return {"type": "MovePenguin", "penguin_id": penguin, "next_tile_id": tile}


def line(body: Any) -> str:
    return dumps(body) + "\n"


def _bad(rng: random.Random) -> tuple[dict[str, Any], str]:
    """A message no seated player may send: malformed, or naming a tile no board has."""
    roll = rng.random()
    if roll < 0.3:
        return place(wrong_value(rng, {"integer"})), "PlacePenguin tile_id"
    if roll < 0.5:
        return move(wrong_value(rng, {"integer"}), 3), "MovePenguin penguin_id"
    if roll < 0.7:
        return move(0, rng.randint(1_000, 10**9)), "MovePenguin off the board"
    if roll < 0.85:
        return place(rng.randint(1_000, 10**9)), "PlacePenguin off the board"
    return {"type": rng.choice(["Move", "NewGameState", "PlayerConnected", ""])}, "unknown type"


def _seated(cls: str, bad: str, note: str) -> Case:
    return Case(cls, (line(connect()), WAIT, bad), "kicked", f"seated {note}")


def wrong_type(rng: random.Random) -> Case:
    if rng.random() < 0.5:
        age = wrong_value(rng, {"integer"}) if rng.random() < 0.8 else rng.randint(-(10**6), -1)
        return Case("wrong_type", (line(connect(age)),), "refused", "PlayerConnect age")
    body, note = _bad(rng)
    return _seated("wrong_type", line(body), note)


def missing(rng: random.Random) -> Case:
    roll = rng.random()
    if roll < 0.4:
        return Case("missing", (line({"type": "PlayerConnect"}),), "refused", "age")
    if roll < 0.5:
        return Case("missing", (line({"age": 10}),), "refused", "type")
    return _seated(
        "missing",
        line(rng.choice([{"type": "PlacePenguin"}, {"type": "MovePenguin", "penguin_id": 0}])),
        "move field",
    )


def extra(rng: random.Random) -> Case:
    body = connect(rng.randint(0, 99))
    body[rng.choice(["name", "extra", "player_id"])] = rng.choice([1, "x", None, [], {}])
    if rng.random() < 0.3:  # the later externally tagged form
        body = {"PlayerConnect": {"age": 7}}
    return Case("extra", (line(body),), "joined", "PlayerConnect")


def unknown_type(rng: random.Random) -> Case:
    kind = rng.choice(["playerconnect", "Connect", "", None, 5, ["PlayerConnect"], "NewGameState"])
    return Case("unknown_type", (line({"type": kind, "age": 5}),), "refused", str(kind)[:20])


def wrong_time(rng: random.Random) -> Case:
    roll = rng.random()
    if roll < 0.4:
        body = place(rng.randint(0, 24)) if rng.random() < 0.5 else move(0, rng.randint(0, 24))
        return Case("wrong_time", (line(body),), "refused", "move before PlayerConnect")
    if roll < 0.7:
        return _seated("wrong_time", line(connect(11)), "PlayerConnect twice")
    body, note = _bad(rng)
    return _seated("wrong_time", line(body), note)


def nested(rng: random.Random) -> Case:
    text = deep(rng, 1_000, 15_000).text
    if rng.random() < 0.4:
        return Case("deep", (text + "\n",), "refused", "whole message")
    if rng.random() < 0.5:
        return Case(
            "deep",
            (line({"type": "PlayerConnect", "age": 1, "x": deep(rng, 1_000, 15_000)}),),
            "refused",
            "extra field",
        )
    return _seated("deep", line(place(deep(rng, 1_000, 15_000))), "tile_id")


def huge(rng: random.Random) -> Case:
    if rng.random() < 0.6:
        return Case("huge_number", (line(connect(huge_number(rng))),), "refused", "age")
    return _seated("huge_number", line(place(huge_number(rng))), "tile_id")


def strings(rng: random.Random) -> Case:
    roll = rng.random()
    if roll < 0.4:
        return Case("strings", (line(connect(hostile_string(rng))),), "refused", "age")
    if roll < 0.7:
        junk = rng.choice(
            [b"\xff\xfe{}\n", b'{"type":"PlayerConnect","age":1\x00}\n', b"\xc0\x80\n", b"\xed\xa0\x80\n"]
        )
        return Case("strings", (junk,), "refused", "bytes")
    body = {"type": hostile_string(rng), "age": 3}
    return Case("strings", (line(body),), "refused", "type")


def framing(rng: random.Random) -> Case:
    good = line(connect(rng.randint(0, 99)))
    roll = rng.random()
    if roll < 0.2:  # a join split across writes is still a join
        cut = sorted(rng.sample(range(1, len(good) - 1), 2))
        return Case(
            "framing",
            (good[: cut[0]], PAUSE, good[cut[0] : cut[1]], PAUSE, good[cut[1] :]),
            "joined",
            "split join",
        )
    if roll < 0.35:
        bad = line(connect("ten"))
        cut = rng.randint(1, len(bad) - 2)
        return Case("framing", (bad[:cut], PAUSE, bad[cut:]), "refused", "split bad")
    if roll < 0.55:
        # A message cut short, then a whole one; where the cut leaves a value open after a ':'
        # the whole one is its value, valid JSON still waiting for more, so a closing '}' ends the
        # wait: every cut is then refused at once.
        cut = rng.randint(1, len(good) - 3)
        return Case("framing", (good[:cut] + "\n" + good + "}\n",), "refused", "truncated then more")
    if roll < 0.75:  # several messages in one write: a join, then a bad one
        body, note = _bad(rng)
        return Case(
            "framing", (good + rng.choice(["", "\n", " "]) + line(body),), "kicked", f"coalesced {note}"
        )
    junk = rng.choice(
        ["[]\n", "42\n", '"PlayerConnect"\n', "null\n", "}\n", "garbage\n", "{]\n", "true false\n"]
    )
    return Case("framing", (junk,), "refused", "not an object")


def oversize(rng: random.Random) -> Case:
    size = rng.randint(LIMIT + 1, LIMIT * 2)
    return Case(
        "oversize", ('{"type":"PlayerConnect","age":1,"pad":"' + "p" * size,), "refused", f"{size} bytes"
    )


MAKERS = [
    (10.0, wrong_type),
    (5.0, missing),
    (3.0, extra),
    (3.0, unknown_type),
    (6.0, wrong_time),
    (3.0, nested),
    (3.0, huge),
    (3.0, strings),
    (8.0, framing),
    (0.5, oversize),
]


def cases(rng: random.Random, count: int) -> list[Case]:
    return list(weighted_cases(rng, count, MAKERS))


def _error(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and message.get("type") == "PlayerConnected"
        and isinstance(message.get("error_message"), str)
    )


def _joined(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and message.get("type") == "PlayerConnected"
        and isinstance(message.get("player_id"), int)
    )


def judge(case: Case, got: Exchange) -> tuple[str, str | None]:
    lines = got.lines
    if case.expect == "refused":
        outcome = f"refused, {got.end}" if lines and _error(lines[-1]) else f"{len(lines)} lines, {got.end}"
        ok = bool(lines) and _error(lines[-1]) and got.end in ("eof", "reset")
        return (
            outcome,
            None if ok else f"expected PlayerConnected error_message and a close: {lines[-2:]}, {got.end}",
        )
    if case.expect == "kicked":
        ok = bool(lines) and _joined(lines[0]) and got.end in ("eof", "reset")
        return (
            f"kicked, {got.end}" if ok else f"{got.end}",
            None if ok else f"expected a close after joining: {lines[:2]}, {got.end}",
        )
    ok = bool(lines) and _joined(lines[0])
    return (
        "joined" if ok else f"{got.end}",
        None if ok else f"expected PlayerConnected player_id: {lines[:2]}, {got.end}",
    )


async def probe(port: int, tally: Tally, stop: asyncio.Event) -> None:
    """A well-behaved newcomer, again and again: the time from PlayerConnect to PlayerConnected."""
    while not stop.is_set():
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        sent = time.perf_counter()
        writer.write(json.dumps(connect(30)).encode() + b"\n")
        answer = await asyncio.wait_for(reader.readline(), 15)
        tally.latencies.append(time.perf_counter() - sent)
        tally.probe_rounds += 1
        if not _joined(json.loads(answer or b"null")):
            tally.fail(f"the well-behaved player was not seated: {answer[:200]!r}")
        writer.close()
        await asyncio.sleep(0.02)


async def run(port: int, work: list[Case], tally: Tally, stop: asyncio.Event, workers: int = 8) -> None:
    await run_cases(port, work, tally, judge, greeting=False, workers=workers)
