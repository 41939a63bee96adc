"""The rating people see (parlour.core.rating_scale): 1500 to start, 400 points for 10 to 1 odds,
provisional until 5 games."""

from __future__ import annotations

import math

import pytest
from openskill.models import PlackettLuce

from parlour.core.rating_scale import BASE, MU0, PROVISIONAL_GAMES, SCALE, Shown, shown_change, shown_rating


def test_a_new_player_reads_1500_and_is_provisional() -> None:
    model = PlackettLuce()
    assert (model.mu, BASE, PROVISIONAL_GAMES) == (MU0, 1500, 5)
    assert shown_rating(model.mu, 0) == Shown(1500, True)
    assert shown_rating(model.mu, 0).text() == "1500?"


@pytest.mark.parametrize(
    ("games", "provisional"), [(0, True), (1, True), (4, True), (5, False), (300, False)]
)
def test_a_rating_is_provisional_until_five_games(games: int, provisional: bool) -> None:
    assert shown_rating(26.0, games).provisional is provisional
    # The number does not depend on how many games were played: only the mark does.
    assert shown_rating(26.0, games).rating == shown_rating(26.0, 0).rating


def test_400_points_are_ten_to_one_odds_for_settled_players() -> None:
    # The Plackett-Luce model's own probability that the better of two settled players (sigma
    # near 0) comes first: exp(mu_a / c) / (exp(mu_a / c) + exp(mu_b / c)), c = beta * sqrt 2.
    model = PlackettLuce()
    c = model.beta * math.sqrt(2)
    mu_a = MU0 + 400 / SCALE
    assert shown_rating(mu_a, 50).rating - shown_rating(MU0, 50).rating == 400
    odds = math.exp(mu_a / c) / math.exp(MU0 / c)
    assert odds == pytest.approx(10.0)
    assert pytest.approx(29.48, abs=0.01) == SCALE


def test_the_first_game_between_new_players_moves_them_about_78_points() -> None:
    model = PlackettLuce()
    winner, loser = (team[0] for team in model.rate([[model.rating()], [model.rating()]]))
    # The ordinals (mu - 3 sigma) read 3.44 and -1.83 after this game: sigma shrank for both.
    assert (shown_rating(winner.mu, 1), shown_rating(loser.mu, 1)) == (Shown(1578, True), Shown(1422, True))
    assert (shown_change(MU0, winner.mu), shown_change(MU0, loser.mu)) == (78, -78)


def test_a_change_is_the_difference_of_the_shown_numbers() -> None:
    # Rounded numbers: the change is what the two shown ratings differ by, never off by one.
    for before, after in ((25.0, 25.02), (25.01, 26.99), (30.3, 29.7), (10.0, 40.0)):
        assert shown_change(before, after) == shown_rating(after, 9).rating - shown_rating(before, 9).rating
    assert shown_change(25.0, 25.0) == 0
