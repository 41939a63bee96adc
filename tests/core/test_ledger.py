"""One limit on games in progress, shared by the Apologies lobby and the Fish and Tsuro tables."""

from __future__ import annotations

import json
from dataclasses import replace
from random import Random

from parlour.core.effects import Send
from parlour.core.ledger import Ledger
from parlour.protocols.apologies_ws import ApologiesService
from parlour.protocols.fish_tcp import FishService
from parlour.protocols.tsuro_tcp import TsuroService
from parlour.settings import Settings


def test_tables_and_lobby_games_share_the_in_progress_limit() -> None:
    settings = replace(Settings(), max_in_progress_games=1, fish_players=2)
    ledger = Ledger(settings.max_in_progress_games)
    apologies = ApologiesService(settings, Random(1), ledger)
    fish = FishService(settings, Random(1), ledger=ledger)
    tsuro = TsuroService(settings, Random(1), ledger)
    apologies.connected(1, 0.0)
    reply = apologies.received(
        1, json.dumps({"message": "REGISTER_PLAYER", "context": {"handle": "ann"}}), 0.0
    )
    player_id = json.loads(reply[0].data)["player_id"] if isinstance(reply[0], Send) else ""
    advertise = {"name": "g", "mode": "STANDARD", "players": 2, "visibility": "PUBLIC", "invited_handles": []}
    apologies.received(
        1, json.dumps({"message": "ADVERTISE_GAME", "player_id": player_id, "context": advertise}), 0.0
    )
    assert ledger.in_progress == 1 and apologies.stats()["games_in_progress"] == 1

    fish.connected(2, 0.0)
    refused = fish.received(2, b'{"type": "PlayerConnect", "age": 9}', 0.0)
    assert any(isinstance(e, Send) and b"no table is free" in e.data for e in refused)
    tsuro.connected(3, 0.0)
    refused = tsuro.received(3, b'{"type": "JOIN", "name": "t", "strategy": "s"}', 0.0)
    assert any(isinstance(e, Send) and b"no table is free" in e.data for e in refused)

    apologies.received(1, json.dumps({"message": "CANCEL_GAME", "player_id": player_id}), 0.0)
    assert ledger.in_progress == 0
    fish.connected(4, 0.0)
    joined = fish.received(4, b'{"type": "PlayerConnect", "age": 9}', 0.0)
    assert joined and isinstance(joined[0], Send) and b'"player_id":0' in joined[0].data
    assert ledger.in_progress == 1
