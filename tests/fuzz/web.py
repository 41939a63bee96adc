"""The HTTP listener: raw requests over a socket (an HTTP library would refuse to send most of
them): the routes of ``/api/...``, ``/healthz``, the schema and the static files.

Oracle: every request gets a well-formed HTTP response, never a 5xx (a ``505`` for an HTTP
version the server does not speak is the one exception); a request that is malformed, or has a
bad method, body, length or parameter, gets a 4xx, with a JSON ``error`` under ``/api/``; no
path serves a file from outside the web client's folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from typing import Any

from tests.fuzz.cases import Case, Tally, weighted_cases
from tests.fuzz.values import deep, dumps, hostile_string, huge_number, wrong_value

__all__ = ["cases", "judge", "run"]

ANSWER_TIMEOUT = 8.0
BODY_LIMIT = 65_536
#: Text from files a traversal could reach: /etc/passwd, the project's own sources and settings.
SECRETS = (b"root:x:0:0", b"[tool.", b"__all__", b"[core]", b"import msgspec")


def request(method: str, target: str, body: bytes = b"", headers: dict[str, str] | None = None) -> bytes:
    head = {"Host": "127.0.0.1", "Connection": "close", **(headers or {})}
    if body and "Content-Length" not in head:
        head["Content-Length"] = str(len(body))
    lines = [f"{method} {target} HTTP/1.1", *(f"{k}: {v}" for k, v in head.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogateescape") + body


def _json_post(path: str, body: Any) -> bytes:
    data = (body if isinstance(body, str) else dumps(body)).encode("utf-8", "surrogatepass")
    return request("POST", path, data, {"Content-Type": "application/json"})


def bad_params(rng: random.Random) -> Case:
    bad = rng.choice(
        [
            "abc",
            "-1",
            "0",
            "999999",
            "1e3",
            "",
            "%00",
            "%ff",
            "1%20OR%201=1",
            "9" * 5000,
            "[]",
            "null",
            "%C2%B2",
            "%D9%A3",
            "nan",
            "inf",
            "-inf_x",
            "1e999_",
            "%ud800",
            "+5",
            "%207",
            "0x1f",
        ]
    )
    choice = rng.choice(
        ["limit", "state", "game_type", "before", "id", "leaderboard", "player", "replay", "name", "profile"]
    )
    if choice == "limit":
        return Case(
            "bad_params", (request("GET", f"/api/games?limit={bad}"),), "4xx", f"games limit={bad[:20]}"
        )
    if choice == "state":
        return Case("bad_params", (request("GET", f"/api/games?state={bad}X"),), "4xx", "games state")
    if choice == "game_type":
        return Case("bad_params", (request("GET", f"/api/games?game_type={bad}X"),), "4xx", "games game_type")
    if choice == "before":
        return Case("bad_params", (request("GET", f"/api/games?before={bad}"),), "not5xx", "games before")
    if choice == "id":
        return Case("bad_params", (request("GET", f"/api/games/{bad or 'x'}"),), "4xx", "games id")
    if choice == "leaderboard":
        return Case(
            "bad_params",
            (request("GET", f"/api/leaderboard?game_type={bad}&limit={bad}"),),
            "not5xx",
            "leaderboard",
        )
    if choice == "player":
        return Case("bad_params", (request("GET", f"/api/players?name={bad}"),), "not5xx", "players name")
    if choice == "profile":
        return Case(
            "bad_params", (request("GET", f"/api/profile?name={bad}&{bad}={bad}"),), "not5xx", "profile"
        )
    if choice == "replay":
        return Case(
            "bad_params", (request("GET", f"/api/async/replay?game_id={bad}&name={bad}"),), "4xx", "replay"
        )
    return Case("bad_params", (request("GET", f"/api/games?{bad}={bad}&&&=&limit"),), "not5xx", "odd query")


def bad_body(rng: random.Random) -> Case:
    path = rng.choice(["/api/accounts", "/api/sessions"])
    roll = rng.random()
    # Bodies never hold a valid name and password: a valid one would cost an Argon2 hash.
    if roll < 0.2:
        field = rng.choice(["name", "password"])
        body: Any = {"name": "fuzzer", "password": "short", field: wrong_value(rng, {"string"})}
        note = f"{field} wrong type"
    elif roll < 0.3:
        body, note = rng.choice([{"name": "fuzzer"}, {"password": "long enough pw"}, {}]), "missing"
    elif roll < 0.45:
        body, note = {"name": "fuzzer", "password": "short", "x": deep(rng, 1_000, 20_000)}, "deep"
    elif roll < 0.55:
        body, note = deep(rng, 1_000, 20_000), "deep body"
    elif roll < 0.65:
        body, note = {"name": huge_number(rng), "password": "long enough pw"}, "huge number"
    elif roll < 0.75:
        body, note = {"name": hostile_string(rng), "password": "long enough pw"}, "surrogates"
    elif roll < 0.85:
        body, note = (
            rng.choice(["", "not json", "[1,2]", "null", '{"name":', "\x00", "{}{}"]),
            "not an object",
        )
    else:
        body, note = {"name": "fuzzer" * 20, "password": "x" * 300, "extra": 1}, "too long"
    return Case("bad_body", (_json_post(path, body),), "4xx", f"{path} {note}")


def bad_method(rng: random.Random) -> Case:
    method = rng.choice(["DELETE", "PUT", "PATCH", "OPTIONS", "TRACE", "CONNECT", "FOO", "get", "POST"])
    path = rng.choice(
        ["/healthz", "/api/games", "/api/leaderboard", "/index.html", "/async/schema.json", "/api/games/1"]
    )
    if method == "POST" and path.startswith("/api/games/"):
        path = "/api/games"
    if method == "CONNECT":
        path = "127.0.0.1:1"
    return Case("bad_method", (request(method, path, b"{}"),), "4xx", f"{method} {path}")


def bad_length(rng: random.Random) -> Case:
    path = rng.choice(["/api/accounts", "/api/sessions"])
    roll = rng.random()
    body = b'{"name":"fuzzer","password":"short"}'
    if roll < 0.3:
        value = rng.choice(["abc", "-1", "1.5", "0x10", "", " ", "9" * 30, "9" * 5000, "\u00b2", "+5"])
        return Case(
            "bad_length",
            (request("POST", path, body, {"Content-Length": value}),),
            "4xx",
            f"length {value[:10]}",
        )
    if roll < 0.5:
        raw = request("POST", path, body).replace(
            b"Content-Length", b"Content-Length: 3\r\nContent-Length", 1
        )
        return Case("bad_length", (raw,), "4xx", "two lengths")
    if roll < 0.7:
        size = rng.randint(BODY_LIMIT + 1, 10**9)
        return Case(
            "bad_length",
            (request("POST", path, body, {"Content-Length": str(size)}),),
            "4xx",
            "over the limit",
        )
    if roll < 0.85:
        return Case(
            "bad_length",
            (request("POST", path, body, {"Content-Length": str(len(body) + 50)}),),
            "4xx_or_close",
            "short body",
        )
    raw = request(
        "POST", path, b"5\r\n{}{}{\r\n0\r\n\r\n", {"Transfer-Encoding": "chunked", "Content-Length": "4"}
    )
    return Case("bad_length", (raw,), "4xx", "chunked and a length")


def bad_request(rng: random.Random) -> Case:
    raw = rng.choice(
        [
            b"GARBAGE\r\n\r\n",
            b"GET /healthz\r\n\r\n",
            b"GET /healthz HTTP/1.1\r\n\r\n",  # no Host
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n",
            b"GET /healthz HTTP/1.1\r\nHost: x\r\n X: folded\r\n\r\n",
            b"GET /he\x00althz HTTP/1.1\r\nHost: x\r\n\r\n",
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nX: " + b"h" * 70_000 + b"\r\n\r\n",
            b"\r\n\r\n\r\n",
            b"GET " + b"/a" * 40_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
            b"\xff\xfe\xfd\r\n\r\n",
        ]
    )
    # Some are lenient readings h11 allows (a folded header, a long one): any answer but a 5xx.
    return Case("bad_request", (raw,), "not5xx", repr(raw[:24]))


def bad_version(rng: random.Random) -> Case:
    version = rng.choice(["HTTP/2.0", "HTTP/0.9", "HTTP/9.9", "HTTP/1.1.1", "HTTX/1.1"])
    raw = f"GET /healthz {version}\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
    # h11 reads any HTTP/1.x-shaped version; a 505 is the one 5xx allowed.
    return Case("bad_version", (raw,), "not5xx_or_505", version)


TRAVERSALS = [
    "/../../../../etc/passwd",
    "/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    "/..%2f..%2f..%2fpyproject.toml",
    "/js/../../settings.py",
    "/js/..%2f..%2f__init__.py",
    "//etc/passwd",
    "/%00",
    "/index.html%00.js",
    "/..\\..\\..\\etc\\passwd",
    "/%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd",
    "/.git/config",
    "/~root",
    "/%ff%fe",
    "/./././index.html",
    "/js/",
    "/css/../index.html",
    "/web/../cli.py",
    "/../__init__.py",
    "/proc/self/environ",
    "/index.html/",
    "/index.html/..",
    "/" + "a" * 300,
    "/" + "a/" * 3000,
    "/" + "b" * 5000 + ".js",
    "/\u00e9.html",
    "*",
    "http://127.0.0.1/../../etc/passwd",
]


def traversal(rng: random.Random) -> Case:
    path = rng.choice(TRAVERSALS)
    if rng.random() < 0.2:
        path += "?" + rng.choice(["x=%", "a=../../etc/passwd", "%%%%"])
    method = rng.choice(["GET", "GET", "HEAD"])
    return Case("static", (request(method, path),), "static", path[:40])


def split(rng: random.Random) -> Case:
    """A good request in pieces (one write each), or several requests in one write."""
    good = request("GET", "/healthz")
    if rng.random() < 0.5:
        cut = sorted(rng.sample(range(1, len(good) - 1), 3))
        pieces = (good[: cut[0]], good[cut[0] : cut[1]], good[cut[1] : cut[2]], good[cut[2] :])
        return Case("split", pieces, "ok", "one request in four writes")
    keep = request("GET", "/healthz").replace(b"Connection: close", b"Connection: keep-alive")
    return Case("split", (keep * rng.randint(2, 5) + good,), "ok", "pipelined")


MAKERS = [
    (6.0, bad_params),
    (6.0, bad_body),
    (3.0, bad_method),
    (3.0, bad_length),
    (3.0, bad_request),
    (1.0, bad_version),
    (6.0, traversal),
    (2.0, split),
]


def cases(rng: random.Random, count: int) -> list[Case]:
    return list(weighted_cases(rng, count, MAKERS))


def _sent(case: Case) -> bytes:
    return b"".join(f if isinstance(f, bytes) else f.encode() for f in case.frames)


async def _exchange(port: int, case: Case) -> tuple[bytes, str]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    data = b""
    try:
        try:
            for frame in case.frames:
                writer.write(frame if isinstance(frame, bytes) else frame.encode())
                await writer.drain()
                await asyncio.sleep(0)
            if case.expect == "4xx_or_close":
                writer.write_eof()
        except (ConnectionResetError, BrokenPipeError):
            pass
        sent = _sent(case)
        wanted = max(1, sent.count(b"GET ")) if case.cls == "split" else 1
        deadline = asyncio.get_running_loop().time() + ANSWER_TIMEOUT
        while len(_responses(data, complete=True, head_only=sent.startswith(b"HEAD"))) < wanted:
            try:
                chunk = await asyncio.wait_for(
                    reader.read(65_536), deadline - asyncio.get_running_loop().time()
                )
            except TimeoutError:
                return data, "timeout"
            except ConnectionResetError:
                return data, "reset"
            if not chunk:
                return data, "eof"
            data += chunk
        return data, "answered"
    finally:
        writer.close()
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            await writer.wait_closed()


def _responses(
    data: bytes, complete: bool = False, head_only: bool = False
) -> list[tuple[int, bytes, bytes]]:
    """(status, head, body) of each response in ``data`` (bodies by Content-Length); with
    ``complete``, only those whose body has fully arrived (none comes after a HEAD)."""
    out = []
    while data.startswith(b"HTTP/1.1 ") and b"\r\n\r\n" in data:
        head, _, rest = data.partition(b"\r\n\r\n")
        status = int(head[9:12])
        length = 0
        for header in head.split(b"\r\n")[1:]:
            name, _, value = header.partition(b":")
            if name.strip().lower() == b"content-length":
                length = 0 if head_only else int(value)
        if complete and len(rest) < length and not head.startswith(b"HTTP/1.1 304"):
            break
        out.append((status, head, rest[:length]))
        data = rest[length:]
    return out


def judge(case: Case, data: bytes, end: str) -> tuple[str, str | None]:
    answers = _responses(data, head_only=_sent(case).startswith(b"HEAD"))
    if not answers:
        if case.expect == "4xx_or_close" and end in ("eof", "reset"):
            return "closed", None
        return f"no response, {end}", f"no HTTP response ({end}): {data[:100]!r}"
    status, _head, body = answers[0]
    outcome = str(status)
    if status >= 500 and not (status == 505 and case.expect == "not5xx_or_505"):
        return outcome, f"server error {status}: {body[:200]!r}"
    if case.expect in ("4xx", "4xx_or_close") and not 400 <= status < 500:
        return outcome, f"expected a 4xx, got {status}"
    sent = _sent(case)
    if case.expect == "ok" and (status != 200 or len(answers) < sent.count(b"GET ")):
        return outcome, f"expected 200 to every request, got {[a[0] for a in answers]}"
    target = sent.split(b" ", 2)[1] if sent.count(b" ") >= 2 else b""
    readable = case.cls not in ("bad_length", "bad_request", "bad_version")  # h11 refused the head
    if status >= 400 and readable and target.startswith(b"/api/") and not sent.startswith(b"HEAD"):
        try:
            error = json.loads(body)
        except ValueError:
            return outcome, f"an /api/ error without a JSON body: {body[:100]!r}"
        if not isinstance(error, dict) or "error" not in error:
            return outcome, f"an /api/ error without 'error': {body[:100]!r}"
    if case.expect == "static" and status == 200 and any(secret in body for secret in SECRETS):
        return "LEAKED", f"a file from outside the web folder was served: {body[:100]!r}"
    return outcome, None


async def probe(port: int, tally: Tally, stop: asyncio.Event) -> None:
    """A well-behaved monitor polling /healthz: its round trip is the latency."""
    while not stop.is_set():
        sent = time.perf_counter()
        data, _ = await _exchange(port, Case("probe", (request("GET", "/healthz"),), "ok"))
        tally.latencies.append(time.perf_counter() - sent)
        tally.probe_rounds += 1
        answers = _responses(data)
        if not answers or answers[0][0] != 200 or json.loads(answers[0][2]).get("status") != "ok":
            tally.fail(f"/healthz did not answer ok: {data[:200]!r}")
        await asyncio.sleep(0.02)


async def run(port: int, work: list[Case], tally: Tally, stop: asyncio.Event, workers: int = 6) -> None:
    queue = list(reversed(work))

    async def worker() -> None:
        while queue:
            case = queue.pop()
            try:
                data, end = await asyncio.wait_for(_exchange(port, case), 30)
            except (TimeoutError, OSError) as error:
                tally.record(case, "hang", f"no end within 30 s: {error!r}")
                continue
            outcome, problem = judge(case, data, end)
            tally.record(case, outcome, problem)

    await asyncio.gather(*(worker() for _ in range(workers)))
