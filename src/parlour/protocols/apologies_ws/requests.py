"""Decoding and validating Apologies requests (docs/apologies-protocol.md, "The envelope" and
"Requests").

Parlour types requests strictly: every malformed request fails with a short sentence that
names the field, never with a Python repr, and never crashes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import msgspec

from parlour.core.errors import MalformedRequest
from parlour.protocols.jsonlimits import MAX_DEPTH, too_deep
from parlour.robots.levels import LEVELS

__all__ = [
    "REQUESTS",
    "AdvertiseGame",
    "ExecuteMove",
    "JoinGame",
    "Request",
    "SendMessage",
    "WithHandle",
    "decode_request",
]

HANDLE = re.compile(r"[a-zA-Z0-9_-]{1,25}")
MAX_NAME = 40
MODES = ("ADULT", "STANDARD")
VISIBILITIES = ("PRIVATE", "PUBLIC")
EVENTS = frozenset(
    {
        "SERVER_SHUTDOWN",
        "REQUEST_FAILED",
        "REGISTERED_PLAYERS",
        "AVAILABLE_GAMES",
        "PLAYER_REGISTERED",
        "PLAYER_UNREGISTERED",
        "WEBSOCKET_IDLE",
        "WEBSOCKET_INACTIVE",
        "PLAYER_IDLE",
        "PLAYER_INACTIVE",
        "PLAYER_MESSAGE_RECEIVED",
        "GAME_ADVERTISED",
        "GAME_INVITATION",
        "GAME_JOINED",
        "GAME_STARTED",
        "GAME_CANCELLED",
        "GAME_COMPLETED",
        "GAME_IDLE",
        "GAME_INACTIVE",
        "GAME_PLAYER_QUIT",
        "GAME_PLAYER_CHANGE",
        "GAME_STATE_CHANGE",
        "GAME_PLAYER_TURN",
    }
)


class WithHandle(msgspec.Struct):
    handle: str

    def check(self, max_chat: int) -> None:
        if not HANDLE.fullmatch(self.handle):
            raise MalformedRequest("'handle' must be 1 to 25 letters, digits, '_' or '-'")


class AdvertiseGame(msgspec.Struct):
    name: str
    mode: str
    players: int
    visibility: str
    invited_handles: list[str]
    #: Parlour extension (not in the event model): the level of the robots that fill this game's
    #: empty and abandoned seats, "easy", "normal" or "hard"; absent, the server's robot setting.
    robot_level: str | None = None

    def check(self, max_chat: int) -> None:
        if not self.name.strip() or len(self.name) > MAX_NAME:
            raise MalformedRequest(f"'name' must be a non-empty string of at most {MAX_NAME} characters")
        if self.mode not in MODES:
            raise MalformedRequest("'mode' must be ADULT or STANDARD")
        if not 2 <= self.players <= 4:
            raise MalformedRequest("'players' must be 2, 3 or 4")
        if self.visibility not in VISIBILITIES:
            raise MalformedRequest("'visibility' must be PRIVATE or PUBLIC")
        if not all(self.invited_handles):
            raise MalformedRequest("'invited_handles' elements must be non-empty strings")
        if self.robot_level is not None and self.robot_level not in LEVELS:
            raise MalformedRequest("'robot_level' must be easy, normal or hard")


class JoinGame(msgspec.Struct):
    game_id: str

    def check(self, max_chat: int) -> None:
        if not self.game_id:
            raise MalformedRequest("'game_id' must be a non-empty string")


class ExecuteMove(msgspec.Struct):
    move_id: str

    def check(self, max_chat: int) -> None:
        if not self.move_id:
            raise MalformedRequest("'move_id' must be a non-empty string")


class SendMessage(msgspec.Struct):
    message: str
    recipient_handles: list[str]

    def check(self, max_chat: int) -> None:
        if not self.message:
            raise MalformedRequest("'message' must be a non-empty string")
        if len(self.message) > max_chat:
            raise MalformedRequest(f"'message' must not exceed {max_chat} characters")
        if not self.recipient_handles:
            raise MalformedRequest("'recipient_handles' may not be empty")
        if not all(self.recipient_handles):
            raise MalformedRequest("'recipient_handles' elements must be non-empty strings")


Context = WithHandle | AdvertiseGame | JoinGame | ExecuteMove | SendMessage


@dataclass(frozen=True, slots=True)
class Shape:
    """What a request type carries: a player id (all but registration) and which context."""

    needs_player: bool
    context: type[Context] | None


#: Every request of the protocol and its shape.
REQUESTS: dict[str, Shape] = {
    "REGISTER_PLAYER": Shape(False, WithHandle),
    "REREGISTER_PLAYER": Shape(True, WithHandle),
    "UNREGISTER_PLAYER": Shape(True, None),
    "LIST_PLAYERS": Shape(True, None),
    "ADVERTISE_GAME": Shape(True, AdvertiseGame),
    "LIST_AVAILABLE_GAMES": Shape(True, None),
    "JOIN_GAME": Shape(True, JoinGame),
    "QUIT_GAME": Shape(True, None),
    "START_GAME": Shape(True, None),
    "CANCEL_GAME": Shape(True, None),
    "EXECUTE_MOVE": Shape(True, ExecuteMove),
    "OPTIMAL_MOVE": Shape(True, None),
    "RETRIEVE_GAME_STATE": Shape(True, None),
    "SEND_MESSAGE": Shape(True, SendMessage),
}


class Request(msgspec.Struct, frozen=True):
    """A decoded request. A frozen Struct rather than a frozen dataclass: one is made per
    request, and a frozen dataclass sets each field through object.__setattr__."""

    message: str
    player_id: str | None
    context: Context | None


_FIELD = re.compile(r"at `\$\.?([^`]*)`")


def _explain(error: msgspec.ValidationError) -> str:
    """msgspec's message turned into a sentence that names the field."""
    text = str(error)
    missing = re.match(r"Object missing required field `([^`]+)`", text)
    if missing:
        return f"'{missing.group(1)}' is required"
    found = _FIELD.search(text)
    detail = text.split(" - at ")[0].replace("`", "")
    if found and found.group(1):
        field = re.sub(r"\[\d+\]$", "", found.group(1))
        if found.group(1).endswith("]"):
            return f"'{field}' elements: {detail.lower()}"
        return f"'{field}': {detail.lower()}"
    return f"context: {detail.lower()}"


def decode_request(data: str | bytes, max_bytes: int, max_chat: int) -> Request:
    """The request in one websocket frame, or MalformedRequest saying what is wrong."""
    if isinstance(data, bytes):
        raise MalformedRequest("Binary frames are not accepted; send a JSON text frame")
    if len(data) > max_bytes and len(data.encode()) > max_bytes:
        raise MalformedRequest(f"The message exceeds the limit of {max_bytes} bytes")
    if too_deep(data, MAX_DEPTH):
        raise MalformedRequest(f"Invalid JSON: nested more than {MAX_DEPTH} levels deep")
    try:
        body: Any = msgspec.json.decode(data)
    except msgspec.DecodeError as error:  # ValidationError too: an integer out of range
        raise MalformedRequest(f"Invalid JSON: {error}") from None
    except RecursionError:  # unreachable after the depth check; kept as a guard
        raise MalformedRequest(f"Invalid JSON: nested more than {MAX_DEPTH} levels deep") from None
    if not isinstance(body, dict):
        raise MalformedRequest("A request must be a JSON object")
    message = body.get("message")
    if message is None:
        raise MalformedRequest("Message type is required")
    if not isinstance(message, str):
        raise MalformedRequest("'message' must be a string naming the request type")
    shape = REQUESTS.get(message)
    if shape is None:
        if message in EVENTS:
            raise MalformedRequest(f"{message} is an event, not a request")
        raise MalformedRequest(f"Unknown message type: {message[:40]}")
    player_id = body.get("player_id")
    if player_id is not None and not isinstance(player_id, str):
        raise MalformedRequest("'player_id' must be a string")
    if shape.needs_player and player_id is None:
        raise MalformedRequest(f"Message type {message} requires a player id")
    if not shape.needs_player and player_id is not None:
        raise MalformedRequest(f"Message type {message} does not allow a player id")
    raw_context = body.get("context")
    if shape.context is None:
        if raw_context is not None:
            raise MalformedRequest(f"Message type {message} does not allow a context")
        return Request(message, player_id, None)
    if raw_context is None:
        raise MalformedRequest(f"Message type {message} requires a context")
    if not isinstance(raw_context, dict):
        raise MalformedRequest("'context' must be a JSON object")
    try:
        context = msgspec.convert(raw_context, shape.context, strict=True)
    except msgspec.ValidationError as error:
        raise MalformedRequest(_explain(error)) from None
    context.check(max_chat)
    return Request(message, player_id, context)
