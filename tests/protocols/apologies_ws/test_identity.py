"""Secrets and identity: a player id works only on its own connection, and
ids come from the id source, never from the game's random source."""

from __future__ import annotations

import json
from random import Random
from unittest import mock

import pytest

from parlour.core.ids import IdSource, new_id, new_time_id
from parlour.protocols.apologies_ws import ApologiesService
from parlour.settings import Settings
from tests.protocols.apologies_ws.harness import Server, failure, kinds

ACTING = [
    ("LIST_PLAYERS", None),
    ("LIST_AVAILABLE_GAMES", None),
    ("SEND_MESSAGE", {"message": "hi", "recipient_handles": ["alice"]}),
    (
        "ADVERTISE_GAME",
        {"name": "g", "mode": "STANDARD", "players": 2, "visibility": "PUBLIC", "invited_handles": []},
    ),
    ("CANCEL_GAME", None),
    ("RETRIEVE_GAME_STATE", None),
    ("UNREGISTER_PLAYER", None),
]


@pytest.mark.parametrize(("message", "context"), ACTING)
def test_another_connection_cannot_act_for_a_player(message: str, context: dict[str, str] | None) -> None:
    server = Server()
    alice = server.connect(1)
    alice.register("alice")
    alice.advertise()
    mallory = server.connect(2)
    reason, _, handle = failure(mallory.request(message, context, player_id=alice.player_id))
    assert (reason, handle) == ("INVALID_PLAYER", None)
    # Alice is untouched and still acts from her own connection.
    assert "alice" in server.service.lobby.handles
    assert kinds(alice.request("LIST_PLAYERS")) == ["REGISTERED_PLAYERS"]


def test_reregister_moves_the_player_and_the_old_connection_loses_it() -> None:
    server = Server()
    old = server.connect(1)
    old.register("alice")
    new = server.connect(2)
    new.player_id = old.player_id
    assert kinds(new.request("REREGISTER_PLAYER", {"handle": "alice"})) == ["PLAYER_REGISTERED"]
    assert kinds(new.request("LIST_PLAYERS")) == ["REGISTERED_PLAYERS"]
    assert failure(old.request("LIST_PLAYERS"))[0] == "INVALID_PLAYER"


def test_ids_never_come_from_the_game_random_source() -> None:
    """The services' Random is for rules and robots: with it patched to fail on every draw of
    bits, registering and advertising a game still work (ids come from secrets)."""
    rng = Random(1)
    service = ApologiesService(Settings(), rng)
    with mock.patch.object(rng, "getrandbits", side_effect=AssertionError("ids from the game rng")):
        service.connected(1, 0.0)
        [sent] = service.received(1, '{"message": "REGISTER_PLAYER", "context": {"handle": "a"}}', 0.0)
        player_id = json.loads(sent.data)["player_id"]  # type: ignore[union-attr]
        advertise = {
            "message": "ADVERTISE_GAME",
            "player_id": player_id,
            "context": {
                "name": "g",
                "mode": "STANDARD",
                "players": 2,
                "visibility": "PUBLIC",
                "invited_handles": [],
            },
        }
        service.received(1, json.dumps(advertise), 0.0)
    [game] = service.lobby.games.values()
    assert game.secret and game.seed
    assert len(player_id) == 36


def test_default_source_is_secrets_and_a_seeded_one_repeats() -> None:
    with mock.patch("secrets.randbits", return_value=0) as randbits:
        assert new_id(IdSource()) == "00000000-0000-4000-8000-000000000000"
    assert randbits.called
    assert not IdSource().seeded
    first = [new_id(IdSource(3)), new_time_id(IdSource(3), 1.0)]
    assert first == [new_id(IdSource(3)), new_time_id(IdSource(3), 1.0)]
    assert new_id(IdSource()) != new_id(IdSource())
    assert len(IdSource(1).token(16)) == 16
