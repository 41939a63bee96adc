"""The ``/async`` websocket: cases built from the JSON Schema the server publishes at
``GET /async/schema.json`` (every client message, its fields, types and which are required).

Oracle: a malformed frame (wrong type, a missing or unknown field, an unknown message, deep
nesting, huge numbers, truncated or coalesced JSON, a binary frame, a frame over the frame limit),
a request before signing in, and a request for a game the sender is not in, each get an
``ErrorRequest`` and the connection stays open; a frame over 1 MiB is closed with 1009. A
``PingRequest`` with a unique timestamp, echoed as sent (S5), marks where a case's answers end.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import time
import urllib.request
from typing import Any

from tests.asyncclient import acreate_account, alogin, unique_name
from tests.fuzz.cases import Case, Tally, weighted_cases
from tests.fuzz.values import JSON_TYPES, Raw, deep, dumps, hostile_string, huge_number, wrong_value
from tests.fuzz.wsclient import Closed, WsPeer

__all__ = ["Schema", "cases", "fetch_schema", "run"]

HARD_LIMIT = 1 << 20
ERRORS = ("ErrorRequest", "AsyncConnectionErrorRequest")


def refusal(message: dict[str, Any]) -> bool:
    """The protocol's ways of saying no: an error, a ``...DeniedRequest``, a reply whose
    ``status`` is not OK (S17's observing refusals)."""
    kind = str(message.get("type"))
    return kind in ERRORS or kind.endswith("DeniedRequest") or message.get("status", "OK") != "OK"


def fetch_schema(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/async/schema.json", timeout=15) as answer:
        schema: dict[str, Any] = json.load(answer)
    return schema


class Schema:
    """The client messages of the published schema, and valid or invalid values for its fields."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.defs: dict[str, Any] = schema["$defs"]
        client = [ref["$ref"].rsplit("/", 1)[1] for ref in self.defs["ClientMessage"]["anyOf"]]
        server = [ref["$ref"].rsplit("/", 1)[1] for ref in self.defs["ServerMessage"]["anyOf"]]
        self.client = client
        self.server_only = [name for name in server if name not in client]

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            schema = self.defs[schema["$ref"].rsplit("/", 1)[1]]
        return schema

    def types(self, schema: dict[str, Any]) -> set[str]:
        """The JSON types a field admits."""
        schema = self.resolve(schema)
        if "enum" in schema:
            return {"string" if isinstance(v, str) else "integer" for v in schema["enum"]}
        if "anyOf" in schema:
            return set().union(*(self.types(option) for option in schema["anyOf"]))
        kind = schema.get("type")
        if kind is None:
            return set(JSON_TYPES)
        return set(kind) if isinstance(kind, list) else {kind}

    def example(self, schema: dict[str, Any]) -> Any:
        """A valid value, as small as the schema allows."""
        schema = self.resolve(schema)
        if "enum" in schema:
            return schema["enum"][0]
        if "anyOf" in schema:
            options = [o for o in schema["anyOf"] if self.resolve(o).get("type") != "null"]
            return self.example(options[0]) if options else None
        kind = schema.get("type")
        if kind == "object":
            props = schema.get("properties", {})
            return {name: self.example(props[name]) for name in schema.get("required", []) if name in props}
        if kind == "string":
            return "x" * max(1, schema.get("minLength", 1))
        if kind == "integer":
            return max(1, schema.get("minimum", 1))
        if kind == "number":
            return 1.0
        if kind == "boolean":
            return False
        if kind == "array":
            return [self.example(schema.get("items", {}))] * schema.get("minItems", 0)
        return None

    def message(self, name: str) -> dict[str, Any]:
        body = self.example(self.defs[name])
        body["type"] = name
        return dict(body)

    def fields(self, name: str) -> dict[str, Any]:
        props: dict[str, Any] = self.defs[name].get("properties", {})
        return {field: schema for field, schema in props.items() if field != "type"}


class Generator:
    def __init__(self, schema: Schema) -> None:
        self.s = schema

    def wrong_type(self, rng: random.Random) -> Case:
        while True:
            name = rng.choice(self.s.client)
            fields = {
                f: t
                for f, sch in self.s.fields(name).items()
                if len(t := self.s.types(sch)) < len(JSON_TYPES)
            }
            if fields:
                break
        field = rng.choice(sorted(fields))
        body = self.s.message(name)
        body[field] = wrong_value(rng, fields[field])
        return Case("wrong_type", (dumps(body),), "error", f"{name}.{field}")

    def missing(self, rng: random.Random) -> Case:
        while True:
            name = rng.choice(self.s.client)
            required = [f for f in self.s.defs[name].get("required", []) if f != "type"]
            if required or rng.random() < 0.1:
                break
        body = self.s.message(name)
        field = rng.choice(required) if required else "type"
        del body[field]
        return Case("missing", (dumps(body),), "error", f"{name}.{field}")

    def extra(self, rng: random.Random) -> Case:
        name = rng.choice(self.s.client)
        body = self.s.message(name)
        body[rng.choice(["extra", "Type", "gameId", "player", "__proto__"])] = rng.choice([1, None, "x", []])
        return Case("extra", (dumps(body),), "error", name)

    def unknown_type(self, rng: random.Random) -> Case:
        kind = rng.choice([*self.s.server_only, "", "pingrequest", "Ping", "X" * 500, None, 7])
        body = self.s.message(rng.choice(self.s.client))
        body["type"] = kind
        return Case("unknown_type", (dumps(body),), "error", str(kind)[:30])

    def unauthenticated(self, rng: random.Random) -> Case:
        """Valid requests before AsyncAuthRequest (sent on a connection that never signs in)."""
        name = rng.choice([n for n in self.s.client if n not in ("PingRequest", "AsyncAuthRequest")])
        return Case("unauthenticated", (dumps(self.s.message(name)),), "error", name)

    def others(self, rng: random.Random) -> Case:
        """Requests for games the sender is not in (fuzz clients never join a game)."""
        names = [n for n in self.s.client if "game_id" in self.s.defs[n].get("required", [])]
        name = rng.choice(names)
        body = self.s.message(name)
        body["game_id"] = rng.choice([1, 2, 3, rng.randint(1, 10_000), 2**31])
        return Case("others", (dumps(body),), "refused", name)

    def _somewhere(self, rng: random.Random, value: Raw) -> tuple[dict[str, Any], str]:
        name = rng.choice(self.s.client)
        body = self.s.message(name)
        field = rng.choice(["type", *self.s.fields(name)])
        body[field] = value
        return body, f"{name}.{field}"

    def nested(self, rng: random.Random) -> Case:
        if rng.random() < 0.3:
            return Case("deep", (deep(rng).text,), "error", "whole frame")
        body, note = self._somewhere(rng, deep(rng))
        return Case("deep", (dumps(body),), "error", note)

    def huge(self, rng: random.Random) -> Case:
        value = huge_number(rng)
        body, note = self._somewhere(rng, value)
        # "0.000...1" (5,000 zeros) is a valid JSON number that is a finite double (0.0): a field
        # that takes a number (PingRequest.timestamp) may accept it; elsewhere it is ill-typed.
        expect = "any" if value.text.startswith("0.") and note.endswith(".timestamp") else "error"
        return Case("huge_number", (dumps(body),), expect, note)

    def strings(self, rng: random.Random) -> Case:
        body = {"type": "PingRequest", "timestamp": 1, "request_id": hostile_string(rng)}
        return Case("strings", (dumps(body),), "any", "request_id")

    def framing(self, rng: random.Random) -> Case:
        text = dumps(self.s.message(rng.choice(self.s.client)))
        roll = rng.random()
        if roll < 0.4:
            return Case("framing", (text[: rng.randint(0, len(text) - 1)],), "error", "truncated")
        if roll < 0.7:
            return Case("framing", (text + rng.choice(["", "\n"]) + text,), "error", "coalesced")
        junk = rng.choice(["null", "[]", "42", '"PingRequest"', "{", "}{", "garbage", " ", "\ufeff{}"])
        return Case("framing", (junk,), "error", "not an object")

    def binary(self, rng: random.Random) -> Case:
        payload = (
            b'{"type":"PingRequest","timestamp":1}'
            if rng.random() < 0.5
            else rng.randbytes(rng.randint(0, 64))
        )
        return Case("binary", (payload,), "error", "binary frame")

    def oversize(self, rng: random.Random) -> Case:
        if rng.random() < 0.25:
            size = rng.randint(HARD_LIMIT + 1, HARD_LIMIT + 4096)
            return Case("oversize", ("x" * size,), "closed 1009", f"{size} bytes")
        size = rng.randint(768 * 1024 + 1, HARD_LIMIT - 100)
        body = {"type": "PingRequest", "timestamp": 1, "request_id": "z" * size}
        return Case("oversize", (dumps(body),), "error", f"{size} bytes")


def cases(rng: random.Random, count: int, schema: dict[str, Any]) -> list[Case]:
    g = Generator(Schema(schema))
    makers = [
        (10.0, g.wrong_type),
        (5.0, g.missing),
        (4.0, g.extra),
        (3.0, g.unknown_type),
        (5.0, g.unauthenticated),
        (4.0, g.others),
        (3.0, g.nested),
        (3.0, g.huge),
        (2.0, g.strings),
        (5.0, g.framing),
        (2.0, g.binary),
        (0.3, g.oversize),
    ]
    return list(weighted_cases(rng, count, makers))


# --- running -------------------------------------------------------------------------------------

_stamps = itertools.count(1_000_000)


class Session:
    """A connection, signed in with an account unless ``anonymous``."""

    def __init__(self, port: int, name: str, token: str | None) -> None:
        self.peer = WsPeer(f"ws://127.0.0.1:{port}/async")
        self.name, self.token = name, token

    async def open(self) -> None:
        await self.peer.open()
        if self.token is not None:
            await self.peer.send(
                json.dumps({"type": "AsyncAuthRequest", "name": self.name, "sessionToken": self.token})
            )
            (*_, reply) = await self.peer.until(lambda m: m.get("type") in ("AsyncConnectedRequest", *ERRORS))
            assert reply["type"] == "AsyncConnectedRequest", reply

    async def ping(self) -> list[dict[str, Any]]:
        stamp = next(_stamps)
        await self.peer.send(json.dumps({"type": "PingRequest", "timestamp": stamp}))
        return await self.peer.until(lambda m: m.get("type") == "PingRequest" and m.get("timestamp") == stamp)


async def _account(port: int, prefix: str) -> tuple[str, str]:
    name = unique_name(prefix)
    await acreate_account(port, name)
    return name, await alogin(port, name)


async def _worker(port: int, queue: list[Case], tally: Tally) -> None:
    name, token = await _account(port, "fz")
    signed, anonymous = Session(port, name, token), Session(port, name, None)
    await signed.open()
    await anonymous.open()
    while queue:
        case = queue.pop()
        session = anonymous if case.cls == "unauthenticated" else signed
        try:
            for frame in case.frames:
                await session.peer.send(frame)
            seen = await session.ping()
        except (Closed, TimeoutError) as error:
            outcome = f"closed {error.code}" if isinstance(error, Closed) else "no answer"
            tally.record(case, outcome, None if outcome == case.expect else f"unexpected {outcome}")
            await session.peer.close()
            await session.open()
            continue
        errors = [m for m in seen[:-1] if m.get("type") in ERRORS]
        refusals = [m for m in seen[:-1] if refusal(m)]
        outcome = "answered"
        if refusals:
            first = refusals[0]
            outcome = f"{first['type']} {first.get('code', first.get('reason', first.get('cause', first.get('status'))))}"
        problem = None
        if case.expect == "error" and not errors:
            problem = f"no ErrorRequest, got {[m.get('type') for m in seen[:-1]]}"
        elif case.expect == "refused" and not refusals:
            problem = f"no refusal, got {[m.get('type') for m in seen[:-1]]}"
        elif case.expect.startswith("closed"):
            problem = f"expected {case.expect}, got {outcome}"
        tally.record(case, outcome, problem)
    await signed.peer.close()
    await anonymous.peer.close()


async def probe(port: int, tally: Tally, stop: asyncio.Event) -> None:
    """A well-behaved signed-in client pinging throughout: the ping's round trip is the latency."""
    name, token = await _account(port, "probe")
    session = Session(port, name, token)
    await session.open()
    while not stop.is_set():
        sent = time.perf_counter()
        await session.ping()
        tally.latencies.append(time.perf_counter() - sent)
        tally.probe_rounds += 1
        await asyncio.sleep(0.005)
    await session.peer.close()


async def run(port: int, work: list[Case], tally: Tally, stop: asyncio.Event, workers: int = 4) -> None:
    queue = list(reversed(work))
    await asyncio.gather(*(_worker(port, queue, tally) for _ in range(workers)))
