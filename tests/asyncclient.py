"""A small asyncio test client for the ``/async`` protocol (docs/async-decisions.md S1, S4).

Written from the workflow text and docs/async-decisions.md, not from the server: messages are
plain dicts decoded with msgspec.json, one JSON object per websocket text frame, tagged on ``type``.

* HTTP: :func:`http_json`, :func:`create_account`, :func:`login` (``http.client``, blocking; the
  ``a``-prefixed variants run them in a thread from async code).
* Websocket: :class:`AsyncClient` keeps every frame it receives in an inbox; :meth:`AsyncClient.expect`
  takes the first queued (or next arriving) message of a type whose fields match, leaving the others
  queued, and fails listing what did arrive.
* Game set-up shared by the /async integration tests: :class:`Player`, :func:`new_player`,
  :func:`start_open_game`, :func:`invite`.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import http.client
import itertools
import json
import secrets
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

__all__ = [
    "GAME_TYPE",
    "PASSWORD",
    "AsyncClient",
    "Message",
    "Player",
    "Response",
    "acreate_account",
    "alogin",
    "configuration",
    "create_account",
    "decode_list",
    "enter_lobby",
    "http_json",
    "invite",
    "login",
    "new_player",
    "reconnect",
    "start_open_game",
    "unique_name",
]

Message = dict[str, Any]

#: A password every test account uses (8+ characters, S4).
PASSWORD: Final = "correct horse"
#: The ``game_type`` of every test game (S7: ``^[a-z0-9_-]{1,32}$``).
GAME_TYPE: Final = "parlourtest"

_names = itertools.count(1)
_requests = itertools.count(1)


def unique_name(prefix: str) -> str:
    """An account name no other test (nor an earlier run on the same store) uses: letters and digits."""
    return f"{prefix}{next(_names)}x{secrets.token_hex(3)}"


def request_id(prefix: str = "r") -> str:
    """A fresh ``request_id`` (S2)."""
    return f"{prefix}{next(_requests)}"


def configuration(max_players: int = 2, **extra: Any) -> Message:
    """A GameConfiguration (S7) for a test game with ``rules: client`` (the default)."""
    return {"game_type": GAME_TYPE, "max_players": max_players, **extra}


# --- HTTP --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Response:
    """An HTTP answer: ``headers`` with lower-cased names, ``body`` the decoded JSON (or the raw text)."""

    status: int
    headers: dict[str, str]
    body: Any


def http_json(port: int, method: str, path: str, body: Any = None, timeout: float = 10) -> Response:
    """One HTTP/1.1 request to 127.0.0.1:``port`` with a JSON body."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        payload = None if body is None else json.dumps(body).encode()
        headers = {} if payload is None else {"Content-Type": "application/json"}
        connection.request(method, path, body=payload, headers=headers)
        answer = connection.getresponse()
        raw = answer.read()
        text = raw.decode("utf-8", "replace")
        decoded: Any
        try:
            decoded = json.loads(text) if text else None
        except ValueError:
            decoded = text
        return Response(answer.status, {k.lower(): v for k, v in answer.getheaders()}, decoded)
    finally:
        connection.close()


#: How long a helper below sends again a request answered 503 with Retry-After (a cluster whose
#: services are between owners, as a loaded machine's lapsed lease makes them for a moment).
RETRY_FOR = 15.0


def http_json_retried(port: int, method: str, path: str, body: Any = None) -> Response:
    """:func:`http_json`, sent again as a polite client does while the answer is 503 with
    Retry-After, for at most :data:`RETRY_FOR` seconds."""
    deadline = time.monotonic() + RETRY_FOR
    while True:
        answer = http_json(port, method, path, body)
        if answer.status != 503 or "retry-after" not in answer.headers or time.monotonic() > deadline:
            return answer
        time.sleep(min(float(answer.headers["retry-after"]), 1.0))


def create_account(port: int, name: str, password: str = PASSWORD) -> int:
    """``POST /api/accounts``: must answer 201 ``{"player_id": <int>, "name": name}``; the player id."""
    answer = http_json_retried(port, "POST", "/api/accounts", {"name": name, "password": password})
    assert answer.status == 201, f"POST /api/accounts {name!r}: {answer}"
    assert isinstance(answer.body, dict), answer
    assert answer.body.get("name") == name, answer
    player_id = answer.body.get("player_id")
    assert isinstance(player_id, int) and not isinstance(player_id, bool) and player_id >= 1, answer
    return player_id


def login(port: int, name: str, password: str = PASSWORD) -> str:
    """``POST /api/sessions``: must answer 200 ``{"token", "expires", "player_id", "name"}``; the token."""
    answer = http_json_retried(port, "POST", "/api/sessions", {"name": name, "password": password})
    assert answer.status == 200, f"POST /api/sessions {name!r}: {answer}"
    assert isinstance(answer.body, dict), answer
    token = answer.body.get("token")
    assert isinstance(token, str) and token, answer
    assert answer.body.get("name") == name, answer
    expires = answer.body.get("expires")
    assert isinstance(expires, int | float) and expires > time.time(), answer
    return token


async def acreate_account(port: int, name: str, password: str = PASSWORD) -> int:
    """:func:`create_account` without blocking the event loop."""
    return await asyncio.to_thread(create_account, port, name, password)


async def alogin(port: int, name: str, password: str = PASSWORD) -> str:
    """:func:`login` without blocking the event loop."""
    return await asyncio.to_thread(login, port, name, password)


def decode_list(data: str) -> list[Any]:
    """A lobby list (S13): base64 of the zlib-deflated JSON array."""
    try:
        raw = base64.b64decode(data, validate=True)
    except binascii.Error as error:
        raise AssertionError(f"not base64: {data[:80]!r}") from error
    try:
        text = zlib.decompress(raw)
    except zlib.error as error:
        raise AssertionError(f"not a zlib stream: {raw[:20]!r}") from error
    decoded = json.loads(text)
    assert isinstance(decoded, list), f"not a JSON array: {decoded!r}"
    return decoded


# --- Websocket ---------------------------------------------------------------------------------------


def _short(message: Message, limit: int = 400) -> str:
    text = json.dumps(message, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + "..."


def _matches(message: Message, types: tuple[str, ...], fields: dict[str, Any]) -> bool:
    if message.get("type") not in types:
        return False
    missing = object()
    return all(message.get(key, missing) == value for key, value in fields.items())


class AsyncClient:
    """One websocket connection to ``/async``; every frame received lands in :attr:`inbox`."""

    def __init__(self, ws: ClientConnection, label: str = "") -> None:
        self.ws = ws
        self.label = label
        #: Received and not yet taken by expect(), in arrival order.
        self.inbox: list[Message] = []
        #: Everything received, in arrival order (never consumed).
        self.history: list[Message] = []
        self.closed = False
        self._arrived = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(cls, port: int, path: str = "/async", label: str = "") -> AsyncClient:
        ws = await connect(
            f"ws://127.0.0.1:{port}{path}", open_timeout=5, close_timeout=1, ping_interval=None, max_size=None
        )
        return cls(ws, label)

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                message: Message
                if isinstance(frame, bytes):
                    message = {"type": "<binary frame>", "hex": frame[:64].hex()}
                else:
                    try:
                        decoded = msgspec.json.decode(frame)
                    except msgspec.DecodeError:
                        decoded = None
                    message = (
                        decoded
                        if isinstance(decoded, dict)
                        else {"type": "<not a JSON object>", "text": frame}
                    )
                self.inbox.append(message)
                self.history.append(message)
                self._arrived.set()
        except ConnectionClosed:
            pass
        finally:
            self.closed = True
            self._arrived.set()

    # -- sending

    async def send(self, message: Message) -> None:
        """One message as a JSON text frame."""
        await self.ws.send(msgspec.json.encode(message).decode())

    async def send_text(self, text: str) -> None:
        """A raw text frame (for malformed input)."""
        await self.ws.send(text)

    async def send_binary(self, data: bytes) -> None:
        """A binary frame (S1: answered with BAD_REQUEST)."""
        await self.ws.send(data)

    # -- receiving

    def _describe(self) -> str:
        state = "closed" if self.closed else "open"
        pending = "\n  ".join(_short(m) for m in self.inbox) or "(nothing)"
        return f"{self.label or 'client'} ({state}) has queued:\n  {pending}"

    async def expect(self, type: str | tuple[str, ...], timeout: float = 5.0, **fields: Any) -> Message:
        """The first queued or arriving message of ``type`` (one name or several) whose ``fields``
        equal the given values (a field absent from the message never matches); other messages
        stay queued. Fails after ``timeout`` seconds listing what arrived instead."""
        types = (type,) if isinstance(type, str) else type
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            self._arrived.clear()
            for index, message in enumerate(self.inbox):
                if _matches(message, types, fields):
                    del self.inbox[index]
                    return message
            remaining = deadline - asyncio.get_running_loop().time()
            if self.closed or remaining <= 0:
                wanted = f"{' | '.join(types)} with {fields}" if fields else " | ".join(types)
                reason = "the connection closed" if self.closed else f"{timeout} s passed"
                raise AssertionError(f"expected {wanted}, but {reason}; {self._describe()}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), remaining)

    async def no_message(self, type: str | tuple[str, ...], within: float = 0.2, **fields: Any) -> None:
        """Fails if a message of ``type`` (with ``fields``) is queued or arrives within ``within`` s."""
        types = (type,) if isinstance(type, str) else type
        await asyncio.sleep(within)
        unexpected = [m for m in self.inbox if _matches(m, types, fields)]
        assert not unexpected, f"unexpected {' | '.join(types)}: " + "; ".join(_short(m) for m in unexpected)

    def discard(self, type: str | tuple[str, ...]) -> None:
        """Drops every queued message of ``type`` (pushes a test does not care about)."""
        types = (type,) if isinstance(type, str) else type
        self.inbox = [m for m in self.inbox if m.get("type") not in types]

    async def sync(self, timeout: float = 5.0) -> None:
        """A PingRequest round trip: every request sent before it has been handled (S5)."""
        stamp = next(_requests)
        await self.send({"type": "PingRequest", "timestamp": stamp})
        await self.expect("PingRequest", timeout, timestamp=stamp)

    async def wait_closed(self, timeout: float = 5.0) -> None:
        """Until the server closes the connection."""
        try:
            await asyncio.wait_for(asyncio.shield(self._reader), timeout)
        except TimeoutError as error:
            raise AssertionError(f"the connection is still open after {timeout} s") from error

    # -- requests with their replies

    async def auth(self, name: str, token: str, **extra: Any) -> Message:
        """AsyncAuthRequest (S4); the AsyncConnectedRequest or AsyncConnectionErrorRequest it got."""
        await self.send({"type": "AsyncAuthRequest", "name": name, "sessionToken": token, **extra})
        return await self.expect(("AsyncConnectedRequest", "AsyncConnectionErrorRequest"))

    async def status(self, game_id: int | None = None) -> list[Message]:
        """WhatsNewPussycatRequest: the StatusReports of the GameStatusReportRequest (S12)."""
        message: Message = {"type": "WhatsNewPussycatRequest"}
        if game_id is not None:
            message["game_id"] = game_id
        for _ in range(20):  # a game changing node in a cluster answers TRY_AGAIN: ask again
            await self.send(message)
            reply = await self.expect(("GameStatusReportRequest", "ErrorRequest"))
            if reply.get("code") != "TRY_AGAIN":
                break
            await asyncio.sleep(0.25)
        assert reply["type"] == "GameStatusReportRequest", reply
        reports = reply.get("status_reports", [])
        assert isinstance(reports, list), reply
        return reports

    async def report(self, game_id: int) -> Message:
        """The one StatusReport of ``game_id``."""
        reports = await self.status(game_id)
        assert [r.get("game_id") for r in reports] == [game_id], reports
        report: Message = reports[0]
        return report

    async def close(self) -> None:
        try:
            await self.ws.close()
        finally:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                await self._reader


# --- Players and games -------------------------------------------------------------------------------


@dataclass
class Player:
    """An account with a live, authenticated connection."""

    name: str
    player_id: int
    token: str
    client: AsyncClient
    connected: Message = field(default_factory=dict)


async def new_player(port: int, prefix: str = "p") -> Player:
    """A fresh account, logged in over HTTP and authenticated on a new /async connection."""
    name = unique_name(prefix)
    player_id = await acreate_account(port, name)
    token = await alogin(port, name)
    client = await AsyncClient.connect(port, label=name)
    connected = await client.auth(name, token)
    assert connected["type"] == "AsyncConnectedRequest", connected
    return Player(name, player_id, token, client, connected)


async def reconnect(player: Player, port: int) -> Player:
    """A new connection for ``player`` on ``port``, authenticated with its old token."""
    client = await AsyncClient.connect(port, label=player.name)
    connected = await client.auth(player.name, player.token)
    assert connected["type"] == "AsyncConnectedRequest", connected
    player.client = client
    player.connected = connected
    return player


async def enter_lobby(player: Player) -> None:
    """In the lobby, whether or not the player already was (a game start exits it, per the text)."""
    await player.client.send({"type": "EnterLobbyRequest"})
    reply = await player.client.expect(("LobbyEnteredRequest", "ErrorRequest"))
    if reply["type"] == "ErrorRequest":
        assert reply.get("code") == "PLAYER_ALREADY_IN_LOBBY", reply


async def start_open_game(
    creator: Player, joiners: Sequence[Player], initial_state: str | None = "s0", **config: Any
) -> int:
    """An open game created by ``creator`` (seat 1) and joined by ``joiners`` (seats 2, 3, ... in
    order) with ``max_players`` = all of them unless given in ``config``; once full it starts, and
    this waits for GameCreatedRequest everywhere and the first ActionRequiredRequest (seat 1, turn 1).
    The game id."""
    config.setdefault("max_players", len(joiners) + 1)
    conf = configuration(**config)
    await enter_lobby(creator)
    create: Message = {"type": "LobbyCreateGameRequest", "configuration": conf}
    if initial_state is not None:
        create["initial_state"] = initial_state
    await creator.client.send(create)
    created = await creator.client.expect("LobbyGameCreatedRequest")
    game_id: int = created["game_id"]
    for seat, joiner in enumerate(joiners, start=2):
        await enter_lobby(joiner)
        join: Message = {"type": "LobbyJoinGameRequest", "game_id": game_id}
        if "password" in conf:
            join["password"] = conf["password"]
        await joiner.client.send(join)
        await joiner.client.expect("LobbyNewPlayerRequest", game_id=game_id, local_id=seat)
    if len(joiners) + 1 == conf["max_players"]:
        for player in (creator, *joiners):
            await player.client.expect("GameCreatedRequest", game_id=game_id)
        await creator.client.expect("ActionRequiredRequest", game_id=game_id, player_id=1, turn_index=1)
    return game_id


async def invite(inviter: Player, invitees: Sequence[Player | None], **config: Any) -> int:
    """An invitation (EngageGameWithFriendsRequest) of ``invitees`` (None = a robot, id 0); waits
    for GameCreatedRequest(invited_by=inviter) on the inviter and every human invitee."""
    message: Message = {
        "type": "EngageGameWithFriendsRequest",
        "friend_ids": [0 if p is None else p.player_id for p in invitees],
    }
    if config:
        config.setdefault("max_players", len(invitees) + 1)
        message["configuration"] = configuration(**config)
    await inviter.client.send(message)
    created = await inviter.client.expect("GameCreatedRequest", invited_by=inviter.player_id)
    game_id: int = created["game_id"]
    for invitee in invitees:
        if invitee is not None:
            await invitee.client.expect("GameCreatedRequest", game_id=game_id, invited_by=inviter.player_id)
    return game_id


async def play_first_legal_actions(watcher: Player, seats: dict[int, Player], game_id: int) -> int:
    """A server-rules game (S9) played to its end: whoever the status report names commits the
    first of the legal actions it was sent, each checked to be its own view. The moves made."""
    for moves in range(200):
        report = await watcher.client.report(game_id)
        if report["status"] != "RUNNING":
            return moves
        player = seats[report["active_player"]]
        required = await commit_first_legal_action(player, game_id, report["turn_index"])
        assert msgspec.json.decode(required["state"])["you"]["id"] == required["player_id"]
    raise AssertionError(f"game {game_id} still running after 200 moves")


async def commit_first_legal_action(player: Player, game_id: int, index: int) -> Message:
    """``player``, prompted for turn ``index`` of a server-rules game, commits the first legal
    action it was sent, acknowledged; the prompt."""
    required = await player.client.expect("ActionRequiredRequest", game_id=game_id, turn_index=index)
    assert required["legal_actions"], required
    await player.client.send(
        {
            "type": "CommitActionRequest",
            "game_id": game_id,
            "turn_index": index,
            "action": required["legal_actions"][0],
        }
    )
    await player.client.expect("ActionCommitedRequest", game_id=game_id, turn_index=index + 1)
    return required
