"""Tsuro robots: lookahead outlasts random players (first place, alone or tied) in >= 60% of
3-player games, each robot taking every seat in turn."""

from __future__ import annotations

from parlour.simulate import _lineup, play_game


def test_lookahead_outlasts_random_players() -> None:
    # Against two random players a seat wins about a third of the games by chance: winning 60%
    # of 30 seeded games is far beyond it.
    games = 30
    first = 0
    for number in range(games):
        lineup = _lineup(["lookahead", "random", "random"], number, True)
        result = play_game("tsuro", lineup, {}, seed=number)
        first += lineup.index("lookahead") in result.winners
    assert first / games >= 0.6, first
