"""The search robot must beat the random robot in more than 80% of seeded 2-player games (brief, part 2)."""

from random import Random

from parlour.games.fish import PLUGIN
from parlour.robots.fish import FishSearchRobot, RandomFishRobot


def _play(game: int) -> bool:
    """Play one seeded game, alternating seats; True when the search robot is the sole winner."""
    rng = Random(game)
    state = PLUGIN.new_game(2, {}, rng)
    search_seat = game % 2
    bots = {search_seat: FishSearchRobot(), 1 - search_seat: RandomFishRobot()}
    for _ in range(200):  # a 2-player game on the default board ends far sooner
        if PLUGIN.outcome(state) is not None:
            break
        seat = PLUGIN.to_move(state)
        assert seat is not None
        state = PLUGIN.apply(state, bots[seat].choose(state, seat, PLUGIN.legal_moves(state, seat), rng), rng)
    outcome = PLUGIN.outcome(state)
    assert outcome is not None
    return list(outcome.winners) == [search_seat]


def test_search_beats_random() -> None:
    games = 20
    wins = sum(_play(game) for game in range(games))
    assert wins / games > 0.8
