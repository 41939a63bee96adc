import pytest

from parlour.games.registry import GAMES, plugin


def test_unknown_game_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="known games: apologies, fish, tsuro"):
        plugin("chess")


def test_every_registered_game_is_named_by_its_plugin() -> None:
    for name in GAMES:
        try:
            found = plugin(name)
        except ModuleNotFoundError:  # a game whose package has not landed yet
            continue
        assert found.name == name
