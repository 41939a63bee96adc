"""Property tests on random playouts, and the exact history strings (docs/apologies-protocol.md,
"Game history")."""

from __future__ import annotations

from collections import Counter
from random import Random

from hypothesis import given, settings
from hypothesis import strategies as st

from parlour.games.apologies import PLUGIN
from parlour.games.apologies.engine import GameState, apply_move, legal_moves, new_game
from parlour.games.apologies.model import HOME, SAFE, START, Card, Color, HistoryEntry, Mode, Move, PawnMove

from .helpers import B, R, S, Y, position

MAX_TURNS = 3000  # random play ends long before this; reaching it means a game that never ends


def check_invariants(state: GameState) -> None:
    for color in Color:
        pawns = state.pawns[color]
        assert len(pawns) == 4
        placed = [p for p in pawns if p < HOME]
        assert len(placed) == len(set(placed)), f"two {color.name} pawns share a square: {pawns}"
        if color not in state.colors:
            assert pawns == [START] * 4
    squares = [p for c in state.colors for p in state.pawns[c] if p < SAFE]
    assert len(squares) == len(set(squares)), "two pawns share a board square"
    held = sum(len(hand) for hand in state.hands)
    drawn = 1 if state.drawn_card is not None else 0
    assert len(state.draw_pile) + len(state.discard) + held + drawn == 45
    if state.mode is Mode.ADULT and state.winner is None:
        assert all(len(state.hands[c]) == 5 for c in state.colors)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 4), mode=st.sampled_from(Mode))
def test_random_games_keep_invariants_and_end(seed: int, players: int, mode: Mode) -> None:
    rng = Random(seed)
    state = new_game(players, mode, rng)
    for _ in range(MAX_TURNS):
        check_invariants(state)
        if state.winner is not None:
            break
        assert state.to_move is not None
        found = legal_moves(state, state.to_move)
        assert found, "a player to move always has a move (a forfeit at least)"
        apply_move(state, found[rng.randrange(len(found))], rng)
    assert state.winner is not None
    assert all(p == HOME for p in state.pawns[state.winner])
    assert PLUGIN.outcome(state) is not None
    assert sum(state.turns) == sum(1 for h in state.history if h.color is not None)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), mode=st.sampled_from(Mode))
def test_views_hide_opponents_hands(seed: int, mode: Mode) -> None:
    rng = Random(seed)
    state = new_game(4, mode, rng)
    for _ in range(rng.randrange(60)):
        if state.winner is not None:
            break
        assert state.to_move is not None
        found = legal_moves(state, state.to_move)
        apply_move(state, found[rng.randrange(len(found))], rng)
    for color in Color:
        seen = PLUGIN.view(state, color)
        assert seen.hand == tuple(state.hands[color])
        assert "hands" not in dir(seen)
        assert seen.pawns == tuple(tuple(p) for p in state.pawns)


def test_only_the_player_to_move_has_moves() -> None:
    state = new_game(3, Mode.STANDARD, Random(4))
    assert state.to_move is not None
    others = [c for c in state.colors if c != state.to_move]
    assert all(legal_moves(state, c) == [] for c in others)


def test_history_strings() -> None:
    rng = Random(1)
    state = new_game(2, Mode.ADULT, rng)
    assert state.history == [HistoryEntry("Game started with mode: GameMode.ADULT")]
    state = position({R: [S, S, S, S], Y: [4, S, S, S]}, card=Card.CARD_2, players=2)
    apply_move(state, legal_moves(state, R)[0], rng)
    assert state.history[-1] == HistoryEntry(
        "Played card 2: [ Red0->square 4, Yellow0->start, ]", R, Card.CARD_2
    )
    state = position({B: [6, 11, S, S], Y: [13, S, S, S]}, to_move=B, card=Card.CARD_3)
    apply_move(state, legal_moves(state, B)[0], rng)
    assert state.history[-1].action == "Played card 3: [ Blue0->square 13, Blue1->start, Yellow0->start, ]"
    state = position({R: [S, S, S, HOME], Y: [SAFE + 1, 20, S, S]}, card=Card.CARD_APOLOGIES)
    apply_move(state, legal_moves(state, R)[0], rng)
    assert state.history[-1].action == "Played card A: [ Red0->square 20, Yellow1->start, ]"
    state = position({R: [SAFE + 2, HOME, HOME, HOME]}, card=Card.CARD_3)
    apply_move(state, legal_moves(state, R)[0], rng)
    assert [h.action for h in state.history[-2:]] == [
        "Played card 3: [ Red0->home, ]",
        "Game completed: winner is Red after 1 turns",
    ]
    state = position({R: [SAFE + 4, HOME, HOME, HOME]}, card=Card.CARD_3)
    apply_move(state, legal_moves(state, R)[0], rng)
    assert state.history[-1] == HistoryEntry("Turn is forfeit; discarded card 3", R, Card.CARD_3)
    state = position({Y: [20, S, S, S], R: [24, S, S, S]}, to_move=Y, card=Card.CARD_11)
    swap = Move(Card.CARD_11, (PawnMove(Y, 0, 20, 28), PawnMove(R, 0, 24, 20)))
    assert swap in legal_moves(state, Y)
    apply_move(state, swap, rng)
    assert state.history[-1].action == "Played card 11: [ Yellow0->square 28, Red0->square 20, ]"


def test_plugin_round_trip() -> None:
    rng = Random(9)
    state = PLUGIN.new_game(4, {"mode": "ADULT"}, rng)
    assert state.mode is Mode.ADULT
    seats = Counter()
    while PLUGIN.outcome(state) is None:
        seat = PLUGIN.to_move(state)
        assert seat is not None
        seats[seat] += 1
        found = PLUGIN.legal_moves(state, seat)
        state = PLUGIN.apply(state, found[0], rng)
    assert PLUGIN.to_move(state) is None and set(seats) == {0, 1, 2, 3}
