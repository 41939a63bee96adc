"""The search robot: stronger than RewardV1 play, fast, and blind to what its seat cannot see."""

from __future__ import annotations

from random import Random

from parlour.games.apologies.engine import GameState, apply_move, legal_moves, new_game
from parlour.games.apologies.model import Card, Color, Mode
from parlour.robots.apologies import ROBOTS
from parlour.robots.apologies.search import danger
from parlour.simulate import simulate, wilson


def test_search_beats_three_greedy_players_clearly() -> None:
    report = simulate(
        "apologies", ["search", "greedy", "greedy", "greedy"], 240, seed=5, options={"mode": Mode.STANDARD}
    )
    search = report.by_seat[0]
    low, _ = wilson(search.wins, report.games)
    assert search.win_rate > 0.30 and low > 0.25, report.table()  # parity is 25%
    timing = next(t for t in report.timing if t.robot == "search")
    assert timing.median_ms <= 5


def test_search_ignores_hidden_information() -> None:
    """Opponents' hands and the draw pile's order never change the robot's choice."""
    rng = Random(3)
    state = new_game(4, Mode.ADULT, rng)
    for _ in range(40):
        assert state.to_move is not None
        apply_move(state, legal_moves(state, state.to_move)[0], rng)
    me = state.to_move
    assert me is not None
    moves = legal_moves(state, me)
    other = state.copy()
    other.draw_pile.reverse()
    hidden = [card for color in state.colors if color != me for card in other.hands[color]]
    hidden.reverse()
    for color in state.colors:
        if color != me:
            other.hands[color] = [hidden.pop() for _ in range(5)]
    robot = ROBOTS["search"]
    assert robot.choose(state, int(me), moves, Random(1)) == robot.choose(other, int(me), moves, Random(1))


def test_danger_counts_pawns_within_an_opponents_reach() -> None:
    two = [Color.RED, Color.YELLOW]
    exposed = GameState.from_position(
        Mode.STANDARD,
        two,
        {Color.RED: [20, 66, 66, 66], Color.YELLOW: [15, 65, 65, 65]},
        drawn_card=Card.CARD_1,
    )
    far = GameState.from_position(
        Mode.STANDARD,
        two,
        {Color.RED: [20, 66, 66, 66], Color.YELLOW: [40, 65, 65, 65]},
        drawn_card=Card.CARD_1,
    )
    assert danger(exposed.pawns, exposed.colors, Color.RED) > danger(far.pawns, far.colors, Color.RED) == 0.0
    assert danger(exposed.pawns, exposed.colors, Color.RED, cards=5) > danger(
        exposed.pawns, exposed.colors, Color.RED
    )


def test_search_takes_a_winning_move() -> None:
    state = GameState.from_position(
        Mode.STANDARD,
        [Color.RED, Color.YELLOW],
        {Color.RED: [65, 65, 65, 62], Color.YELLOW: [10, 66, 66, 66]},
        drawn_card=Card.CARD_3,
    )
    moves = legal_moves(state, Color.RED)
    chosen = ROBOTS["search"].choose(state, 0, moves, Random(0))
    assert chosen.actions[0].end == 65


def test_search_beats_greedy_players_in_adult_mode_too() -> None:
    report = simulate(
        "apologies", ["search", "greedy", "greedy", "greedy"], 120, seed=5, options={"mode": Mode.ADULT}
    )
    assert report.by_seat[0].win_rate > 0.3, report.table()
    timing = next(t for t in report.timing if t.robot == "search")
    assert timing.median_ms <= 5
