"""Robots: greedy is RewardV1 (checked against the library's calculator), random plays legal moves."""

from __future__ import annotations

from random import Random

from apologies.reward import RewardCalculatorV1
from apologies.rules import Rules

from parlour.games.apologies.engine import apply_move, legal_moves, new_game
from parlour.games.apologies.model import Card, Mode
from parlour.robots.apologies import ROBOTS, player_score, reward

from .helpers import R, S, Y, position
from .library_oracle import Sample, board_of, outcome_of_library, outcome_of_ours, samples
from .test_apologies_differential import Tally, compare, parlour_reachable


def agrees_exactly(sample: Sample) -> bool:
    """Both engines list the same outcomes with no correction for the library's quirks."""
    tally = Tally()
    compare(sample, tally)
    return tally.exact == 1


def test_greedy_finds_the_best_reward_v1_of_the_library() -> None:
    """On positions where both engines list the same outcomes, greedy's choice scores the
    library's best RewardV1, computed by the library's own calculator."""
    calculator = RewardCalculatorV1()
    checked = 0
    for mode in Mode:
        for seed in range(1, 4):
            for sample in samples(mode, 4, seed=seed, every=3):
                board = board_of(sample.game)
                if not parlour_reachable(board) or not agrees_exactly(sample):
                    continue
                view = sample.game.create_player_view(sample.color)
                library_best = max(
                    calculator.calculate(Rules.evaluate_move(view, move)) for move in sample.moves
                )
                state = sample.ours()
                assert state.to_move is not None
                found = legal_moves(state, state.to_move)
                chosen = ROBOTS["greedy"].choose(state, int(state.to_move), found, Random(0))
                scores = [player_score(c, state.pawns[c]) for c in range(4)]
                assert reward(state, state.to_move, chosen, scores) == library_best
                library_outcomes = {outcome_of_library(board, m) for m in sample.moves}
                assert outcome_of_ours(board, chosen) in library_outcomes
                checked += 1
    assert checked > 500


def test_greedy_prefers_bumping_a_leader_and_reaching_safety() -> None:
    state = position({R: [10, S, S, S], Y: [13, 50, S, S]}, card=Card.CARD_3, players=2)
    found = legal_moves(state, R)
    assert ROBOTS["greedy"].choose(state, 0, found, Random(0)).side_effects  # bumps YELLOW


def test_random_robot_plays_only_legal_moves() -> None:
    rng = Random(4)
    state = new_game(3, Mode.ADULT, rng)
    chosen = set()
    while state.to_move is not None:
        found = legal_moves(state, state.to_move)
        move = ROBOTS["random"].choose(state, int(state.to_move), found, rng)
        assert move in found
        chosen.add(found.index(move))
        apply_move(state, move, rng)
    assert len(chosen) > 3  # not always the first move
