"""Robot levels: every game has easy, normal and hard, and they are ordered (hard beats normal
beats easy) in short seeded runs; each stronger level wins more than its share against the
weaker one (longer runs with confidence intervals: docs/robots.md)."""

from __future__ import annotations

from typing import Any

import pytest

from parlour.games.apologies.model import Mode
from parlour.robots.levels import LEVEL_ROBOTS, LEVELS, level_robot, pick
from parlour.robots.registry import robot
from parlour.simulate import simulate

#: (game, seats, options, games per pairing).
ORDER_CASES = [
    ("apologies", 2, {"mode": Mode.STANDARD}, 30),
    ("fish", 2, {}, 16),
    ("tsuro", 3, {}, 12),
]


@pytest.mark.parametrize(("game", "seats", "options", "games"), ORDER_CASES)
@pytest.mark.parametrize(("stronger", "weaker"), [("hard", "normal"), ("normal", "easy")])
def test_a_stronger_level_beats_a_weaker_one(
    game: str, seats: int, options: dict[str, Any], games: int, stronger: str, weaker: str
) -> None:
    names = [LEVEL_ROBOTS[game][stronger]] + [LEVEL_ROBOTS[game][weaker]] * (seats - 1)
    report = simulate(game, names, games, seed=26, options=options)
    share = report.by_seat[0].win_rate
    assert share > 1 / seats, report.table()


def test_every_game_has_every_level_and_names_pick_either() -> None:
    for game in LEVEL_ROBOTS:
        assert set(LEVEL_ROBOTS[game]) == set(LEVELS)
        for level in LEVELS:
            assert level_robot(game, level) is robot(game, LEVEL_ROBOTS[game][level])
            assert pick(game, level) is level_robot(game, level)
    assert pick("fish", "greedy") is robot("fish", "greedy")
    with pytest.raises(ValueError, match="choose from easy, normal, hard"):
        level_robot("fish", "expert")
