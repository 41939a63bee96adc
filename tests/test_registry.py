import pytest

from parlour.games.registry import GAMES, plugin
from parlour.robots.registry import robot, robots


def test_unknown_game_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="known games: apologies, fish, tsuro"):
        plugin("chess")


def test_every_registered_game_is_named_by_its_plugin_and_has_robots() -> None:
    for name in GAMES:
        found = plugin(name)
        assert found.name == name and found.min_seats <= found.max_seats
        assert "random" in robots(name)


def test_unknown_robot_names_the_choices() -> None:
    with pytest.raises(KeyError, match="choose from easy, greedy, random, rollout, search"):
        robot("apologies", "genius")
