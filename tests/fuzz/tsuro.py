"""Tsuro tables over TCP (docs/tsuro-protocol.md): cases built from the messages of
``protocols/tsuro_tcp/messages.py``, and the oracle.

Oracle: the server greets every connection with ``ASK_FOR_PLAYER_INFO``; any bad message, before
or after ``JOIN``, gets ``EJECTED`` with a reason and the connection is closed ("ejected"). A
well-formed ``JOIN`` ("joined") leaves the connection open.

A joined player's table may start (its seats are other fuzz cases) and end before the player's
own bad message is read: the others, misbehaving too, are ejected, and a game with at most one
player ALIVE is over, so the player gets ``GAME_END`` and its connection closes. That ending is
accepted for an "ejected" case as long as the player is not EJECTED in the results: an
ejection always comes with its own ``EJECTED`` message.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import Any

from tests.fuzz.cases import Case, Tally, weighted_cases
from tests.fuzz.tcp import PAUSE, Exchange, run_cases
from tests.fuzz.values import deep, dumps, hostile_string, huge_number, wrong_value

__all__ = ["cases", "judge", "run"]

LIMIT = 65_536
#: What each field of MOVE_REQUEST may hold (messages.decode).
MOVE_FIELDS = {
    "placement_type": {"string"},
    "rotation": {"integer"},
    "color": {"string"},
    "port": {"string"},
    "index": {"integer"},
    "x": {"integer"},
    "y": {"integer"},
}


def join(**extra: Any) -> dict[str, Any]:
    return {"type": "JOIN", "name": "fuzz", "strategy": "dumb", **extra}


def move(**fields: Any) -> dict[str, Any]:
    # "purple" is nobody's colour: even the player whose turn it is is ejected for it.
    body = {"type": "MOVE_REQUEST", "placement_type": "INITIAL", "rotation": 0, "color": "purple"}
    body.update({"port": "A", "index": 0, "x": 0, "y": 0})
    body.update(fields)
    return body


def line(body: Any) -> str:
    return dumps(body) + "\n"


def _joined_then(cls: str, bad: str, note: str) -> Case:
    return Case(cls, (line(join()), PAUSE, bad), "ejected", f"joined, then {note}")


def wrong_type(rng: random.Random) -> Case:
    if rng.random() < 0.4:
        field = rng.choice(["name", "strategy"])
        value = wrong_value(rng, {"string"}) if rng.random() < 0.8 else ""
        if field == "strategy" and value is None:
            value = 5  # a missing strategy is allowed; null is a wrong type but .get() reads it as absent
        body = join(**{field: value})
        if field == "name" and value == "":
            body["name"] = "   "
        if field == "strategy" and value == "":
            # JOIN needs a non-empty name but accepts any strategy string (recorded, ignored):
            # the empty one is a good JOIN.
            return Case("wrong_type", (line(body),), "joined", "JOIN empty strategy")
        return Case("wrong_type", (line(body),), "ejected", f"JOIN {field}")
    field = rng.choice(sorted(MOVE_FIELDS))
    return _joined_then(
        "wrong_type", line(move(**{field: wrong_value(rng, MOVE_FIELDS[field])})), f"MOVE_REQUEST {field}"
    )


def missing(rng: random.Random) -> Case:
    if rng.random() < 0.3:
        return Case("missing", (line({"type": "JOIN", "strategy": "x"}),), "ejected", "JOIN name")
    body = move()
    field = rng.choice(sorted(MOVE_FIELDS))
    del body[field]
    return _joined_then("missing", line(body), f"MOVE_REQUEST {field}")


def extra(rng: random.Random) -> Case:
    body = join(**{rng.choice(["color", "extra", "id"]): rng.choice([1, "x", None, [], {}])})
    return Case("extra", (line(body),), "joined", "JOIN")


def unknown_type(rng: random.Random) -> Case:
    kind = rng.choice(["join", "JOINED", "", None, 1, "ASK_FOR_MOVE", "MOVE_ACCEPTED", "EJECTED"])
    return Case("unknown_type", (line({"type": kind, "name": "n"}),), "ejected", str(kind)[:20])


def wrong_time(rng: random.Random) -> Case:
    roll = rng.random()
    if roll < 0.4:
        return Case("wrong_time", (line(move()),), "ejected", "MOVE_REQUEST before JOIN")
    if roll < 0.6:
        return _joined_then("wrong_time", line(join()), "JOIN twice")
    fields = {"x": rng.randint(0, 5), "y": rng.randint(0, 5), "index": rng.randint(0, 34)}
    return _joined_then("wrong_time", line(move(**fields)), "a move out of turn or in another colour")


def nested(rng: random.Random) -> Case:
    text = deep(rng, 1_000, 15_000).text
    if rng.random() < 0.4:
        return Case("deep", (text + "\n",), "ejected", "whole message")
    if rng.random() < 0.5:
        return Case("deep", (line(join(strategy=deep(rng, 1_000, 15_000))),), "ejected", "JOIN strategy")
    return _joined_then("deep", line(move(index=deep(rng, 1_000, 15_000))), "MOVE_REQUEST index")


def huge(rng: random.Random) -> Case:
    if rng.random() < 0.4:
        return Case("huge_number", (line(join(extra=huge_number(rng))),), "ejected", "JOIN extra")
    field = rng.choice(["rotation", "index", "x", "y"])
    return _joined_then("huge_number", line(move(**{field: huge_number(rng)})), f"MOVE_REQUEST {field}")


def strings(rng: random.Random) -> Case:
    roll = rng.random()
    if roll < 0.4:
        junk = rng.choice(
            [b"\xff\xfe{}\n", b'{"type":"JOIN","name":"a\x00"}\n', b"\xc0\x80\n", b"\xed\xa0\x80\n"]
        )
        return Case("strings", (junk,), "ejected", "bytes")
    if roll < 0.7:
        return _joined_then("strings", line(move(color=hostile_string(rng))), "colour")
    return Case("strings", (line(join(name=hostile_string(rng))),), "any", "JOIN name")


def framing(rng: random.Random) -> Case:
    good = line(join())
    roll = rng.random()
    if roll < 0.2:
        cut = sorted(rng.sample(range(1, len(good) - 1), 2))
        return Case(
            "framing",
            (good[: cut[0]], PAUSE, good[cut[0] : cut[1]], PAUSE, good[cut[1] :]),
            "joined",
            "split join",
        )
    if roll < 0.35:
        bad = line(move())
        cut = rng.randint(1, len(bad) - 2)
        return Case("framing", (bad[:cut], PAUSE, bad[cut:]), "ejected", "split bad")
    if roll < 0.55:
        # A message cut short, then a whole one: where the cut leaves a value open after a ':'
        # ('{"type":' + the JOIN) the whole one is its value, still valid JSON waiting for more
        # (the stream is read as it comes). The closing '}' ends that wait, so every cut is
        # refused at once: a malformed object, or one whose field holds an object.
        cut = rng.randint(1, len(good) - 3)
        return Case("framing", (good[:cut] + "\n" + good + "}\n",), "ejected", "truncated then more")
    if roll < 0.75:
        return Case("framing", (good + rng.choice(["", "\n", " "]) + line(move()),), "ejected", "coalesced")
    junk = rng.choice(["[]\n", "42\n", '"JOIN"\n', "null\n", "}\n", "garbage\n", "{]\n"])
    return Case("framing", (junk,), "ejected", "not an object")


def oversize(rng: random.Random) -> Case:
    size = rng.randint(LIMIT + 1, LIMIT * 2)
    return Case("oversize", ('{"type":"JOIN","name":"' + "n" * size,), "ejected", f"{size} bytes")


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


def _greeting(message: Any) -> bool:
    return isinstance(message, dict) and message.get("type") == "ASK_FOR_PLAYER_INFO"


def _ejected(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and message.get("type") == "EJECTED"
        and isinstance(message.get("reason"), str)
    )


def _game_end(message: Any) -> bool:
    return isinstance(message, dict) and message.get("type") == "GAME_END"


def _own_state(lines: list[Any]) -> str | None:
    """The player's own state in the final GAME_END, found by the colour it was given."""
    colors = [m.get("color") for m in lines if isinstance(m, dict) and m.get("type") == "RECEIVE_COLOR"]
    results = lines[-1].get("results")
    if len(colors) != 1 or not isinstance(results, dict):
        return None
    for ranked in results.values():
        for entry in ranked if isinstance(ranked, list) else []:
            ours = isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], dict)
            if ours and entry[0].get("color") == colors[0]:
                return str(entry[1])
    return None


def _kinds(lines: list[Any]) -> list[Any]:
    """The types of the messages received (a state or a board is too long to print)."""
    return [m.get("type", m) if isinstance(m, dict) else m for m in lines]


def judge(case: Case, got: Exchange) -> tuple[str, str | None]:
    lines = got.lines
    if not lines or not _greeting(lines[0]):
        return "no greeting", f"expected ASK_FOR_PLAYER_INFO first: {lines[:1]}, {got.end}"
    if case.expect == "ejected":
        closed = got.end in ("eof", "reset")
        if any(_ejected(m) for m in lines):
            ok = closed
            outcome = f"EJECTED, {got.end}"
        elif _game_end(lines[-1]):
            ok = closed and _own_state(lines) not in (None, "EJECTED")
            outcome = f"GAME_END first, {got.end}"
        else:
            ok, outcome = False, f"{len(lines)} lines, {got.end}"
        return outcome, None if ok else f"expected EJECTED and a close: {_kinds(lines)}, {got.end}"
    if case.expect == "joined":
        # Open still, or its table already played out (the same race as above).
        over = _game_end(lines[-1]) and got.end in ("eof", "reset")
        ok = (got.end == "open" or over) and not any(_ejected(m) for m in lines)
        return (
            "joined" if ok else got.end
        ), None if ok else f"a good JOIN was refused: {_kinds(lines)}, {got.end}"
    return got.end, None


async def probe(port: int, tally: Tally, stop: asyncio.Event) -> None:
    """A well-behaved newcomer, again and again: the time from connecting to the greeting, and
    a JOIN that must not be refused."""
    while not stop.is_set():
        sent = time.perf_counter()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        greeting = await asyncio.wait_for(reader.readline(), 15)
        tally.latencies.append(time.perf_counter() - sent)
        tally.probe_rounds += 1
        if not _greeting(json.loads(greeting or b"null")):
            tally.fail(f"the well-behaved player was not greeted: {greeting[:200]!r}")
        writer.write(json.dumps(join()).encode() + b"\n")
        await writer.drain()
        writer.close()
        await asyncio.sleep(0.02)


async def run(port: int, work: list[Case], tally: Tally, stop: asyncio.Event, workers: int = 8) -> None:
    await run_cases(port, work, tally, judge, greeting=True, workers=workers)
