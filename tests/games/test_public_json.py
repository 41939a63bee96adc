"""Each plugin's public view (``public_json``): what the game records of the HTTP API show after
every move, and the same shapes the protocols' renderers send."""

from __future__ import annotations

from random import Random
from typing import Any

import msgspec
import pytest

from parlour.games.registry import GAMES, plugin


def playout(name: str, seats: int, moves: int) -> list[tuple[Any, Any]]:
    """(public view, move) after each of the first ``moves`` moves of a random game."""
    rules, rng = plugin(name), Random(7)
    state = rules.new_game(seats, {}, rng)
    views = [(rules.public_json(state, None), None)]
    for _ in range(moves):
        seat = rules.to_move(state)
        if seat is None:
            break
        move = rng.choice(list(rules.legal_moves(state, seat)))
        state = rules.apply(state, move, rng)
        views.append((rules.public_json(state, move), move))
    return views


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_view_is_json_and_names_the_move_that_led_to_it(name: str) -> None:
    views = playout(name, plugin(name).min_seats + 1, 12)
    assert len(views) == 13
    for view, move in views:
        assert msgspec.json.decode(msgspec.json.encode(view)) == view
        assert ("move" in view) == (move is not None)


def test_the_apologies_view_shows_pawns_but_never_a_hand() -> None:
    view, move = playout("apologies", 2, 3)[-1]
    assert move is not None and view["move"]["card"] == move.card.name
    assert all(len(player["pawns"]) == 4 and "hand" not in player for player in view["players"])
    assert "hand" not in msgspec.json.encode(view).decode()


def test_the_fish_protocol_sends_the_plugins_view_as_its_game_state() -> None:
    from parlour.protocols.fish_tcp.messages import new_game_state

    rules = plugin("fish")
    state = rules.new_game(2, {}, Random(3))
    sent = msgspec.json.decode(new_game_state(state))
    assert sent == {"type": "NewGameState", "state": rules.public_json(state, None)}


def test_the_tsuro_protocol_sends_the_plugins_board_and_players() -> None:
    from parlour.protocols.tsuro_tcp.messages import game_state

    rules = plugin("tsuro")
    state = rules.new_game(3, {}, Random(3))
    sent = msgspec.json.decode(game_state(state, 0))
    view = rules.public_json(state, None)
    assert (sent["board"], sent["players"]) == (view["board"], view["players"])
