"""Bad input of every kind gets REQUEST_FAILED INVALID_REQUEST naming the problem, and the
connection stays open and usable."""

from __future__ import annotations

import json

import pytest

from .harness import Server, failure, kinds

VALID_ADVERTISE = {
    "name": "g",
    "mode": "STANDARD",
    "players": 2,
    "visibility": "PUBLIC",
    "invited_handles": [],
}


@pytest.mark.parametrize(
    ("frame", "comment"),
    [
        ("hello", "Invalid JSON"),
        ("", "Invalid JSON"),
        ("[]", "A request must be a JSON object"),
        ("5", "A request must be a JSON object"),
        ("null", "A request must be a JSON object"),
        ('"REGISTER_PLAYER"', "A request must be a JSON object"),
        ("{}", "Message type is required"),
        ('{"message": null}', "Message type is required"),
        ('{"message": 5}', "'message' must be a string"),
        ('{"message": "Register Player"}', "Unknown message type: Register Player"),
        (
            '{"message": "PLAYER_REGISTERED", "player_id": "x"}',
            "PLAYER_REGISTERED is an event, not a request",
        ),
        ('{"message": "LIST_PLAYERS"}', "Message type LIST_PLAYERS requires a player id"),
        ('{"message": "LIST_PLAYERS", "player_id": []}', "'player_id' must be a string"),
        (
            '{"message": "REGISTER_PLAYER", "player_id": "0", "context": {"handle": "a"}}',
            "does not allow a player id",
        ),
        ('{"message": "REGISTER_PLAYER"}', "Message type REGISTER_PLAYER requires a context"),
        ('{"message": "REGISTER_PLAYER", "context": "leela"}', "'context' must be a JSON object"),
        ('{"message": "REGISTER_PLAYER", "context": {}}', "'handle' is required"),
        ('{"message": "REGISTER_PLAYER", "context": {"handle": 123}}', "'handle': expected str, got int"),
        ('{"message": "REGISTER_PLAYER", "context": {"handle": null}}', "'handle': expected str, got null"),
        ('{"message": "REGISTER_PLAYER", "context": {"handle": "a b"}}', "'handle' must be 1 to 25 letters"),
        ('{"message": "REGISTER_PLAYER", "context": {"handle": ""}}', "'handle' must be 1 to 25 letters"),
        (
            '{"message": "REGISTER_PLAYER", "context": {"handle": "' + "x" * 26 + '"}}',
            "'handle' must be 1 to 25",
        ),
    ],
)
def test_malformed_frames(frame: str, comment: str) -> None:
    server = Server()
    client = server.connect(1)
    reason, said, handle = failure(client.raw(frame))
    assert reason == "INVALID_REQUEST" and comment in said and handle is None
    assert kinds(client.register("leela")) == ["PLAYER_REGISTERED"]  # still open and usable


@pytest.mark.parametrize(
    ("change", "comment"),
    [
        ({"players": "3"}, "'players': expected int, got str"),
        ({"players": 3.5}, "'players': expected int, got float"),
        ({"players": True}, "'players': expected int, got bool"),
        ({"players": 5}, "'players' must be 2, 3 or 4"),
        ({"players": 1}, "'players' must be 2, 3 or 4"),
        ({"mode": "Standard"}, "'mode' must be ADULT or STANDARD"),
        ({"visibility": "public"}, "'visibility' must be PRIVATE or PUBLIC"),
        ({"invited_handles": "abc"}, "'invited_handles': expected array, got str"),
        ({"invited_handles": None}, "'invited_handles': expected array, got null"),
        ({"invited_handles": [""]}, "'invited_handles' elements must be non-empty strings"),
        ({"invited_handles": [3]}, "'invited_handles' elements: expected str, got int"),
        ({"name": ""}, "'name' must be a non-empty string of at most 40 characters"),
        ({"name": "x" * 41}, "'name' must be a non-empty string of at most 40 characters"),
    ],
)
def test_malformed_advertise(change: dict[str, object], comment: str) -> None:
    server = Server()
    client = server.connect(1)
    client.register("leela")
    reason, said, _ = failure(client.request("ADVERTISE_GAME", {**VALID_ADVERTISE, **change}))
    assert reason == "INVALID_REQUEST" and comment in said, said
    assert kinds(client.request("ADVERTISE_GAME", VALID_ADVERTISE))[-1] == "GAME_ADVERTISED"


def test_context_rules() -> None:
    server = Server()
    client = server.connect(1)
    client.register("leela")
    assert "does not allow a context" in failure(client.request("LIST_PLAYERS", {}))[1]
    assert "requires a context" in failure(client.request("JOIN_GAME"))[1]
    assert "'game_id' is required" in failure(client.request("JOIN_GAME", {"id": "x"}))[1]
    assert "'move_id': expected str, got int" in failure(client.request("EXECUTE_MOVE", {"move_id": 4}))[1]
    assert (
        "'recipient_handles' may not be empty"
        in failure(client.request("SEND_MESSAGE", {"message": "hi", "recipient_handles": []}))[1]
    )
    assert (
        "'message' must not exceed 500 characters"
        in failure(client.request("SEND_MESSAGE", {"message": "x" * 501, "recipient_handles": ["leela"]}))[1]
    )


def test_binary_and_oversize_frames() -> None:
    server = Server(max_message_bytes=2048)
    client = server.connect(1)
    assert "Binary frames are not accepted" in failure(client.raw(b'{"message": "LIST_PLAYERS"}'))[1]
    big = json.dumps({"message": "REGISTER_PLAYER", "context": {"handle": "a", "pad": "x" * 4000}})
    assert "exceeds the limit of 2048 bytes" in failure(client.raw(big))[1]
    assert kinds(client.register("leela")) == ["PLAYER_REGISTERED"]


def test_unknown_player_id_is_invalid_player_without_handle() -> None:
    server = Server()
    client = server.connect(1)
    assert failure(client.request("LIST_PLAYERS", player_id="nobody")) == (
        "INVALID_PLAYER",
        "Unknown or invalid player",
        None,
    )
    # A malformed context is reported before the unknown player.
    assert failure(client.request("JOIN_GAME", {"game_id": 5}, player_id="nobody"))[0] == "INVALID_REQUEST"


def test_a_burst_of_garbage_touches_nobody_else() -> None:
    server = Server()
    victim = server.connect(1)
    victim.register("victim")
    victim.advertise()
    attacker = server.connect(2)
    before = list(victim.inbox)
    for i in range(500):
        attacker.raw(["{", "[1,2]", f'{{"message": "EXECUTE_MOVE", "player_id": "{i}"}}', "\x00\xff"][i % 4])
    assert len(attacker.inbox) == 500 and set(kinds(attacker.inbox)) == {"REQUEST_FAILED"}
    assert victim.inbox == before
    assert kinds(victim.request("LIST_AVAILABLE_GAMES")) == ["AVAILABLE_GAMES"]
