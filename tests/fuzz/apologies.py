"""The Apologies websocket (docs/apologies-protocol.md, "Requests"): cases built from the
requests of ``protocols/apologies_ws/requests.py``, and the oracle.

Oracle: a frame that is malformed, unknown, at the wrong time or in someone else's name gets
``REQUEST_FAILED`` and the connection stays open; a frame over 1 MiB is closed with 1009; any
other frame gets whatever it gets, but the connection stays open. Each case ends with a sentinel
(a chat message to oneself, unique text) so the runner knows where the case's answers end.
A victim player on its own connection, with a private game, is impersonated by the fuzz
clients; at the end it must still be registered, in its game, and have heard from nobody.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import time
from typing import Any

from tests.fuzz.cases import Case, Tally, weighted_cases
from tests.fuzz.values import Raw, deep, dumps, hostile_string, huge_number, wrong_value
from tests.fuzz.wsclient import Closed, WsPeer

__all__ = ["cases", "run"]

MAX_MESSAGE = 65_536
HARD_LIMIT = 1 << 20

#: Valid contexts, field by field: (JSON type, example). ``@handle@`` is the sender's handle.
CONTEXTS: dict[str, dict[str, tuple[str, Any]]] = {
    "handle": {"handle": ("string", "@handle@")},
    "advertise": {
        "name": ("string", "fuzz game"),
        "mode": ("string", "STANDARD"),
        "players": ("integer", 2),
        "visibility": ("string", "PRIVATE"),
        "invited_handles": ("array", []),
    },
    "join": {"game_id": ("string", "@vgame@")},
    "move": {"move_id": ("string", "0123456789abcdef")},
    "chat": {"message": ("string", "hello"), "recipient_handles": ("array", ["@handle@"])},
}

#: Request -> (needs a player id, context kind or None).
REQUESTS: dict[str, tuple[bool, str | None]] = {
    "REGISTER_PLAYER": (False, "handle"),
    "REREGISTER_PLAYER": (True, "handle"),
    "UNREGISTER_PLAYER": (True, None),
    "LIST_PLAYERS": (True, None),
    "ADVERTISE_GAME": (True, "advertise"),
    "LIST_AVAILABLE_GAMES": (True, None),
    "JOIN_GAME": (True, "join"),
    "QUIT_GAME": (True, None),
    "START_GAME": (True, None),
    "CANCEL_GAME": (True, None),
    "EXECUTE_MOVE": (True, "move"),
    "OPTIMAL_MOVE": (True, None),
    "RETRIEVE_GAME_STATE": (True, None),
    "SEND_MESSAGE": (True, "chat"),
}

#: Requests that fail for a fuzz client, which is never in a game (it cannot join the victim's
#: private game, and its own advertisements are always malformed).
NEEDS_GAME = ("QUIT_GAME", "START_GAME", "CANCEL_GAME", "EXECUTE_MOVE", "OPTIMAL_MOVE", "RETRIEVE_GAME_STATE")
#: Requests a fuzz client may send well-formed without leaving the state the runner relies on.
HARMLESS = ("LIST_PLAYERS", "LIST_AVAILABLE_GAMES", "SEND_MESSAGE", "REREGISTER_PLAYER")
EVENT_NAMES = ("REQUEST_FAILED", "GAME_PLAYER_TURN", "PLAYER_REGISTERED", "SERVER_SHUTDOWN")


def _request(name: str, pid: str = "@pid@") -> dict[str, Any]:
    needs_player, kind = REQUESTS[name]
    body: dict[str, Any] = {"message": name}
    if needs_player:
        body["player_id"] = pid
    if kind is not None:
        body["context"] = {field: example for field, (_, example) in CONTEXTS[kind].items()}
    return body


def _case(cls: str, body: Any, expect: str, note: str) -> Case:
    return Case(cls, (dumps(body),), expect, note)


def wrong_type(rng: random.Random) -> Case:
    name = rng.choice(list(REQUESTS))
    body = _request(name)
    needs_player, kind = REQUESTS[name]
    places = ["message", *(["player_id"] if needs_player else []), "context"]
    if kind is not None:
        places += [f"context.{field}" for field in CONTEXTS[kind]]
    place = rng.choice(places)
    if place == "message":
        body["message"] = wrong_value(rng, {"string", "null"})
    elif place == "player_id":
        body["player_id"] = wrong_value(rng, {"string", "null"})
    elif place == "context":
        body["context"] = wrong_value(rng, {"object", "null"})
    else:
        field = place.split(".", 1)[1]
        kind_of, _example = CONTEXTS[kind][field]  # type: ignore[index]
        if kind_of == "array" and rng.random() < 0.5:
            body["context"][field] = [wrong_value(rng, {"string"})]
        else:
            body["context"][field] = wrong_value(rng, {kind_of})
    return _case("wrong_type", body, "failed", f"{name} {place}")


def missing(rng: random.Random) -> Case:
    name = rng.choice(list(REQUESTS))
    body = _request(name)
    needs_player, kind = REQUESTS[name]
    places = ["message", *(["player_id"] if needs_player else []), *(["context"] if kind else [])]
    places += [f"context.{field}" for field in CONTEXTS[kind]] if kind else []
    place = rng.choice(places)
    if place.startswith("context."):
        del body["context"][place.split(".", 1)[1]]
    else:
        del body[place]
    return _case("missing", body, "failed", f"{name} {place}")


def extra(rng: random.Random) -> Case:
    """Unknown fields are ignored: the request stands or fails on its own."""
    name = rng.choice(HARMLESS)
    body = _request(name)
    target = body["context"] if "context" in body and rng.random() < 0.5 else body
    target[rng.choice(["extra", "type", "id", "__proto__", "x" * 300])] = rng.choice([1, None, "x", [1], {}])
    return _case("extra", body, "any", name)


def unknown_type(rng: random.Random) -> Case:
    name = rng.choice(
        [*EVENT_NAMES, "", "register_player", "REGISTER PLAYER", "LIST_PLAYERS ", "X" * 1000, "\u00e9"]
    )
    body = _request(rng.choice(list(REQUESTS)))
    body["message"] = name
    return _case("unknown_type", body, "failed", name[:20])


def wrong_time(rng: random.Random) -> Case:
    """Valid requests that cannot succeed now: game requests out of a game, a taken handle."""
    if rng.random() < 0.15:
        body = _request("REGISTER_PLAYER")
        body["context"]["handle"] = "@vhandle@"
        return _case("wrong_time", body, "failed", "taken handle")
    name = rng.choice(NEEDS_GAME)
    return _case("wrong_time", _request(name), "failed", name)


def others(rng: random.Random) -> Case:
    """Requests in the victim's name, or for its private game (after harden: INVALID_PLAYER)."""
    if rng.random() < 0.2:
        return _case("others", _request("JOIN_GAME"), "failed", "join private game")
    # Not REREGISTER_PLAYER: with a known player id it is the protocol's one way to move a
    # player to a new connection, so it succeeds by design: the player id is the secret, and a
    # client holding it is that player.
    name = rng.choice([n for n, (needs, _) in REQUESTS.items() if needs and n != "REREGISTER_PLAYER"])
    body = _request(name, pid="@victim@")
    return _case("others", body, "failed", name)


def _raw_in_field(rng: random.Random, value: Raw, harmless_if_ignored: bool = False) -> tuple[Any, str]:
    """A request with ``value`` in one of its fields. With ``harmless_if_ignored``, a request
    whose value lands in the ignored "extra" field is a harmless one: a value the decoder accepts
    there (``0.000...1`` is a valid number) leaves a well-formed request, and an UNREGISTER_PLAYER
    or ADVERTISE_GAME that succeeds would change the state the runner relies on."""
    name = rng.choice(list(REQUESTS))
    body = _request(name)
    needs_player, kind = REQUESTS[name]
    places = ["message", "extra", *(["player_id"] if needs_player else []), "context"]
    places += [f"context.{f}" for f in CONTEXTS[kind]] if kind else []
    place = rng.choice(places)
    if place == "extra" and harmless_if_ignored and name not in HARMLESS:
        name = rng.choice(HARMLESS)
        body = _request(name)
    if place.startswith("context."):
        body["context"][place.split(".", 1)[1]] = value
    else:
        body[place] = value
    return body, f"{name} {place}"


def nested(rng: random.Random) -> Case:
    if rng.random() < 0.3:
        return Case("deep", (deep(rng).text,), "failed", "whole frame")
    body, note = _raw_in_field(rng, deep(rng))
    return _case("deep", body, "failed", note)


def huge(rng: random.Random) -> Case:
    body, note = _raw_in_field(rng, huge_number(rng), harmless_if_ignored=True)
    # A huge number where the field is ignored may stand; elsewhere it is malformed.
    expect = "any" if note.endswith(" extra") else "failed"
    return _case("huge_number", body, expect, note)


def strings(rng: random.Random) -> Case:
    """Lone surrogates, NULs, control characters: in a handle they are refused, in chat text
    they may pass; raw control characters make the JSON invalid."""
    if rng.random() < 0.2:
        return Case("strings", ('{"message":"LIST_PLAYERS","player_id":"@pid@\x00"}',), "failed", "raw NUL")
    body = _request("REGISTER_PLAYER" if rng.random() < 0.5 else "SEND_MESSAGE")
    if body["message"] == "REGISTER_PLAYER":
        body["context"]["handle"] = hostile_string(rng)
        return _case("strings", body, "failed", "handle")
    body["context"]["message"] = hostile_string(rng)
    return _case("strings", body, "any", "chat")


def framing(rng: random.Random) -> Case:
    """Truncated frames, several requests in one frame, not JSON at all, empty frames."""
    text = dumps(_request(rng.choice(list(REQUESTS))))
    roll = rng.random()
    if roll < 0.4:
        return Case("framing", (text[: rng.randint(0, len(text) - 1)],), "failed", "truncated")
    if roll < 0.7:
        return Case("framing", (text + rng.choice(["", "\n", " "]) + text,), "failed", "coalesced")
    junk = rng.choice(["null", "[]", "42", '"LIST_PLAYERS"', "{", "}{", "\ufeff{}", "garbage", " "])
    return Case("framing", (junk,), "failed", "not an object")


def binary(rng: random.Random) -> Case:
    payload = (
        dumps(_request("LIST_PLAYERS")).encode() if rng.random() < 0.5 else rng.randbytes(rng.randint(0, 64))
    )
    return Case("binary", (payload,), "failed", "binary frame")


def oversize(rng: random.Random) -> Case:
    if rng.random() < 0.25:
        size = rng.randint(HARD_LIMIT + 1, HARD_LIMIT + 4096)
        return Case("oversize", ("x" * size,), "closed 1009", f"{size} bytes")
    body = _request("SEND_MESSAGE")
    body["context"]["message"] = "y" * rng.randint(MAX_MESSAGE, MAX_MESSAGE * 4)
    return _case("oversize", body, "failed", "over max_message_bytes")


MAKERS = [
    (10.0, wrong_type),
    (6.0, missing),
    (4.0, extra),
    (3.0, unknown_type),
    (5.0, wrong_time),
    (5.0, others),
    (3.0, nested),
    (3.0, huge),
    (3.0, strings),
    (5.0, framing),
    (2.0, binary),
    (0.4, oversize),
]


def cases(rng: random.Random, count: int) -> list[Case]:
    return list(weighted_cases(rng, count, MAKERS))


# --- running -------------------------------------------------------------------------------------

_handles = itertools.count(1)


class Player:
    """A registered player on its own connection."""

    def __init__(self, url: str, prefix: str) -> None:
        self.peer = WsPeer(url)
        self.prefix = prefix
        self.handle = ""
        self.pid = ""
        self.sentinels = itertools.count(1)

    async def register(self) -> None:
        await self.peer.open()
        self.handle = f"{self.prefix}{next(_handles)}"
        await self.peer.send(json.dumps({"message": "REGISTER_PLAYER", "context": {"handle": self.handle}}))
        (*_, registered) = await self.peer.until(
            lambda m: m.get("message") in ("PLAYER_REGISTERED", "REQUEST_FAILED")
        )
        if registered.get("message") != "PLAYER_REGISTERED":
            raise AssertionError(f"could not register {self.handle}: {registered}")
        self.pid = registered["player_id"]

    def request(self, message: str, context: dict[str, Any] | None = None) -> str:
        body: dict[str, Any] = {"message": message, "player_id": self.pid}
        if context is not None:
            body["context"] = context
        return json.dumps(body)

    async def sentinel(self) -> list[dict[str, Any]]:
        """Everything the connection receives up to the echo of a chat message to oneself."""
        text = f"sentinel {next(self.sentinels)}"
        await self.peer.send(
            self.request("SEND_MESSAGE", {"message": text, "recipient_handles": [self.handle]})
        )
        return await self.peer.until(
            lambda m: (
                m.get("message") == "PLAYER_MESSAGE_RECEIVED" and m.get("context", {}).get("message") == text
            )
        )


def _fill(frame: str | bytes, player: Player, victim: Player, vgame: str) -> str | bytes:
    if isinstance(frame, bytes):
        return frame
    return (
        frame.replace("@pid@", player.pid)
        .replace("@handle@", player.handle)
        .replace("@victim@", victim.pid)
        .replace("@vhandle@", victim.handle)
        .replace("@vgame@", vgame)
    )


async def _worker(url: str, queue: list[Case], tally: Tally, victim: Player, vgame: str) -> None:
    player = Player(url, "fz")
    await player.register()
    while queue:
        case = queue.pop()
        try:
            for frame in case.frames:
                await player.peer.send(_fill(frame, player, victim, vgame))
            seen = await player.sentinel()
        except Closed as closed:
            outcome = f"closed {closed.code}"
            tally.record(case, outcome, None if outcome == case.expect else f"unexpected {outcome}")
            await player.peer.close()
            await player.register()
            continue
        except TimeoutError:
            tally.record(case, "no answer", "no answer (the sentinel never came back)")
            await player.peer.close()
            await player.register()
            continue
        failures = [m for m in seen[:-1] if m.get("message") == "REQUEST_FAILED"]
        outcome = f"REQUEST_FAILED {failures[0]['context'].get('reason')}" if failures else "answered"
        problem = None
        if case.expect == "failed" and not failures:
            problem = f"no REQUEST_FAILED, got {[m.get('message') for m in seen[:-1]]}"
        elif case.expect.startswith("closed"):
            problem = f"expected {case.expect}, got {outcome}"
        tally.record(case, outcome, problem)


async def _victim(url: str) -> tuple[Player, str]:
    victim = Player(url, "victim")
    await victim.register()
    context = {
        "name": "victim's",
        "mode": "STANDARD",
        "players": 4,
        "visibility": "PRIVATE",
        "invited_handles": [],
    }
    await victim.peer.send(victim.request("ADVERTISE_GAME", context))
    (*_, advertised) = await victim.peer.until(
        lambda m: m.get("message") in ("GAME_ADVERTISED", "REQUEST_FAILED")
    )
    assert advertised.get("message") == "GAME_ADVERTISED", advertised
    return victim, advertised["context"]["game"]["game_id"]


async def _check_victim(victim: Player, vgame: str, tally: Tally) -> None:
    """Nobody but the victim may have acted for it: still registered, still in its game, and no
    chat it did not send itself."""
    try:
        seen = await victim.sentinel()
        await victim.peer.send(victim.request("RETRIEVE_GAME_STATE"))
        seen += await victim.peer.until(lambda m: m.get("message") in ("GAME_STATE_CHANGE", "REQUEST_FAILED"))
    except (Closed, TimeoutError) as error:
        tally.fail(f"the impersonated victim lost its connection or answers: {error!r}")
        return
    # GAME_IDLE is the server's own word to an advertised game's players after 10 minutes
    # (`game_idle`): a long run reaches it; nobody sent it in the victim's name.
    strange = [m for m in seen[:-2] if m.get("message") not in ("GAME_STATE_CHANGE", "GAME_IDLE")]
    if strange:
        tally.fail(
            f"the victim heard what others sent in its name: {[m.get('message') for m in strange][:5]}"
        )
    # Its game is advertised, not started: RETRIEVE_GAME_STATE answers INVALID_GAME "Game is not
    # being played" for a player in such a game, and NOT_PLAYING for one in no game at all;
    # GAME_STATE_CHANGE if someone started it.
    last = seen[-1]
    in_game = last.get("message") == "GAME_STATE_CHANGE" or (
        last.get("message") == "REQUEST_FAILED" and last.get("context", {}).get("reason") == "INVALID_GAME"
    )
    if not in_game:
        tally.fail(f"the victim is no longer in its game: {last}")
    await victim.peer.close()


async def probe(port: int, tally: Tally, stop: asyncio.Event) -> None:
    """A well-behaved player: games against a robot, one after another; latency from each
    EXECUTE_MOVE to the server's first answer."""
    player = Player(f"ws://127.0.0.1:{port}/", "probe")
    await player.register()
    peer = player.peer
    while not stop.is_set():
        context = {
            "name": "probe",
            "mode": "STANDARD",
            "players": 2,
            "visibility": "PRIVATE",
            "invited_handles": [],
        }
        await peer.send(player.request("ADVERTISE_GAME", context))
        await peer.until(lambda m: m.get("message") == "GAME_ADVERTISED")
        await peer.send(player.request("START_GAME"))
        while not stop.is_set():
            message = await peer.receive()
            kind = message.get("message")
            if kind in ("GAME_COMPLETED", "GAME_CANCELLED"):
                break
            if kind == "REQUEST_FAILED":
                tally.fail(f"the well-behaved player was refused: {message}")
                return
            if kind == "GAME_PLAYER_TURN" and message["context"]["handle"] == player.handle:
                move = next(iter(message["context"]["moves"]))
                sent = time.perf_counter()
                await peer.send(player.request("EXECUTE_MOVE", {"move_id": move}))
                await peer.receive()
                tally.latencies.append(time.perf_counter() - sent)
                tally.probe_rounds += 1
    await peer.close()


async def run(port: int, work: list[Case], tally: Tally, stop: asyncio.Event, workers: int = 4) -> None:
    url = f"ws://127.0.0.1:{port}/"
    victim, vgame = await _victim(url)
    queue = list(reversed(work))
    await asyncio.gather(*(_worker(url, queue, tally, victim, vgame) for _ in range(workers)))
    await _check_victim(victim, vgame, tally)
