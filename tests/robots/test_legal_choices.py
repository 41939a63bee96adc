"""Every robot of every game only ever chooses one of the legal moves it is offered, over thousands
of seeded positions (each game played by a mix of its robots, so positions vary).

The searching robots are asked at every position with a small budget (what they may return does
not depend on how much they search: a move of the list they were given) and, as configured, at
one position in ``SLOW_EVERY``, to keep the test fast."""

from __future__ import annotations

from random import Random
from typing import Any

import pytest

from parlour.games.apologies.model import Mode
from parlour.games.base import Robot
from parlour.games.registry import plugin
from parlour.robots.apologies import RolloutRobot, SearchRobot
from parlour.robots.fish import FishSearchRobot
from parlour.robots.fish_alphabeta import AlphaBetaFishRobot
from parlour.robots.registry import robots

SLOW_EVERY = 50
#: Small-budget twins of the searching robots, by game and name.
LEAN: dict[str, dict[str, Robot[Any, Any]]] = {
    "apologies": {"search": SearchRobot(samples=1), "rollout": RolloutRobot(samples=1)},
    "fish": {
        "search": FishSearchRobot(depth=1, budget=10),
        "alphabeta": AlphaBetaFishRobot(budget=20),
        "shallow": AlphaBetaFishRobot(budget=20),
    },
    "tsuro": {},
}
#: Robots without a small-budget twin that are too slow to ask at every position.
SLOW = {"tsuro": {"lookahead"}}

#: (game, seats, options, games played, positions wanted).
CASES = [
    ("apologies", 4, {"mode": Mode.STANDARD}, 8, 1500),
    ("apologies", 4, {"mode": Mode.ADULT}, 12, 1000),
    ("fish", 2, {}, 50, 1000),
    ("fish", 3, {"holes": 3}, 40, 600),
    ("tsuro", 3, {}, 16, 800),
    ("tsuro", 4, {"deal": "random"}, 16, 700),
]


@pytest.mark.parametrize(("game", "seats", "options", "games", "wanted"), CASES)
def test_every_robot_chooses_a_legal_move(
    game: str, seats: int, options: dict[str, Any], games: int, wanted: int
) -> None:
    rules = plugin(game)
    players = robots(game)
    names = sorted(players)
    positions = 0
    for number in range(games):
        rng = Random(number)
        state = rules.new_game(seats, options, rng)
        # Each seat is played by one robot (a lean twin for the searching ones) for the whole game.
        players_of = [name for name in names if name not in SLOW.get(game, ())]
        lineup = [players_of[(number + seat) % len(players_of)] for seat in range(seats)]
        while rules.outcome(state) is None and positions < wanted:
            seat = rules.to_move(state)
            assert seat is not None
            legal = list(rules.legal_moves(state, seat))
            assert legal
            chosen = None
            for name in names:
                lean = LEAN[game].get(name)
                slow = lean is not None or name in SLOW.get(game, ())
                if not slow or positions % SLOW_EVERY == 0:
                    move = players[name].choose(state, seat, legal, Random(positions))
                    assert move in legal, (game, name, move)
                    if name == lineup[seat] and lean is None:
                        chosen = move
                if lean is not None:
                    move = lean.choose(state, seat, legal, Random(positions))
                    assert move in legal, (game, name, "lean", move)
                    if name == lineup[seat]:
                        chosen = move
            state = rules.apply(state, chosen, rng)
            positions += 1
    assert positions >= wanted * 0.9, positions
