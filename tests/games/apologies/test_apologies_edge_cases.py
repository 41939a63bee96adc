"""The rules' edge cases, numbered, on hand-built positions.

Where Parlour fixes one of the reference's quirks (docs/apologies-protocol.md, "Where Parlour
differs from apologiesserver 0.2.2"), the test asserts Parlour's behaviour and says so in its
name.
"""

from __future__ import annotations

from collections import Counter
from random import Random

from parlour.games.apologies.board import distance_to_home
from parlour.games.apologies.engine import DECK, GameState, apply_move, legal_moves, new_game
from parlour.games.apologies.model import HOME, SAFE, START, Card, Color, Mode, Move, PawnMove
from parlour.robots.apologies import ROBOTS, player_score

from .helpers import B, G, R, S, Y, ends, moves, position, summary


def test_01_no_start_move_when_own_pawn_on_circle() -> None:
    found = moves({R: [4, S, S, S]}, Card.CARD_1)
    assert summary(found) == [{(R, 0): 5}]


def test_02_leaving_start_bumps_opponent_on_circle_once_per_start_pawn() -> None:
    found = moves({R: [S, S, S, S], Y: [4, S, S, S]}, Card.CARD_1)
    assert summary(found) == [{(R, i): 4, (Y, 0): START} for i in range(4)]
    assert all(m.side_effects == (PawnMove(Y, 0, 4, START),) for m in found)


def test_03_forward_onto_own_pawn_is_illegal_onto_opponent_bumps() -> None:
    found = moves({R: [20, 23, S, S], Y: [26, S, S, S]}, Card.CARD_3)
    assert summary(found) == [{(R, 1): 26, (Y, 0): START}]


def test_04_home_needs_the_exact_count() -> None:
    assert summary(moves({R: [SAFE + 3, HOME, HOME, S]}, Card.CARD_2)) == [{(R, 0): HOME}, {(R, 3): 4}]
    assert moves({R: [SAFE + 3, S, S, S]}, Card.CARD_3) == [Move(Card.CARD_3, ())]


def test_05_safe_entry_and_overshoot() -> None:
    assert summary(moves({R: [58, S, S, S]}, Card.CARD_5)) == [{(R, 0): SAFE}]
    assert moves({R: [1, S, S, S]}, Card.CARD_12) == [Move(Card.CARD_12, ())]
    assert summary(moves({R: [0, S, S, S]}, Card.CARD_8)) == [{(R, 0): HOME}]


def test_06_backward_past_the_circle() -> None:
    assert summary(moves({R: [4, S, S, S]}, Card.CARD_4)) == [{(R, 0): 0}]
    assert summary(moves({R: [3, S, S, S]}, Card.CARD_10)) == [{(R, 0): 13}, {(R, 0): 2}]


def test_07_backward_out_of_the_safe_zone() -> None:
    found = moves({R: [SAFE, S, S, S], Y: [2, S, S, S]}, Card.CARD_10)
    assert summary(found) == [{(R, 0): 2, (Y, 0): START}]
    assert summary(moves({R: [SAFE + 1, S, S, S]}, Card.CARD_4)) == [{(R, 0): 0}]


def test_08_split_with_a_pawn_in_the_safe_zone_listed_once() -> None:
    found = moves({R: [SAFE + 1, 55, S, S]}, Card.CARD_7)
    assert summary(found) == [
        {(R, 0): SAFE + 2, (R, 1): 1},
        {(R, 0): SAFE + 3, (R, 1): 0},
        {(R, 0): SAFE + 4, (R, 1): 59},
        {(R, 0): HOME, (R, 1): 58},
        {(R, 1): 2},
    ]


def test_09_fix_split_never_lands_two_own_pawns_on_one_square() -> None:
    found = summary(moves({R: [10, 11, S, S]}, Card.CARD_7))
    assert {(R, 0): 14, (R, 1): 14} not in found
    assert {(R, 0): 13, (R, 1): 15} in found


def test_10_fix_split_legality_does_not_depend_on_pawn_order() -> None:
    found = summary(moves({R: [10, 5, S, S]}, Card.CARD_7))
    assert found.count({(R, 0): 12, (R, 1): 10}) == 1
    # The same split with the pawns' indices exchanged is listed too.
    swapped = summary(moves({R: [5, 10, S, S]}, Card.CARD_7))
    assert swapped.count({(R, 0): 10, (R, 1): 12}) == 1


def test_11_fix_split_partner_not_bumped_by_the_other_half_slide() -> None:
    found = moves({B: [5, 11, S, S], Y: [12, S, S, S]}, Card.CARD_7, to_move=B)
    split = next(m for m in found if ends(m).get((B, 0)) == 13 and ends(m).get((B, 1)) == 14)
    assert split.side_effects == (PawnMove(Y, 0, 12, START),)


def test_12_swaps_onto_slide_starts() -> None:
    found = moves({Y: [20, S, S, S], R: [24, S, S, S]}, Card.CARD_11, to_move=Y)
    assert {(Y, 0): 28, (R, 0): 20} in summary(found)
    found = moves({R: [20, S, S, S], Y: [24, S, S, S]}, Card.CARD_11)
    assert {(R, 0): 28, (Y, 0): 20} in summary(found)
    found = moves({R: [16, S, S, S], B: [40, S, S, S]}, Card.CARD_11)
    assert {(R, 0): 40, (B, 0): 16} in summary(found)  # BLUE's own slide start: no slide
    found = moves({R: [31, S, S, S], B: [40, S, S, S]}, Card.CARD_11)
    assert {(R, 0): 40, (B, 0): 34} in summary(found)  # YELLOW's slide: BLUE slides


def test_13_eleven_targets_and_plain_forward() -> None:
    found = moves({R: [SAFE + 1, 50, S, S], Y: [SAFE, 20, S, HOME]}, Card.CARD_11)
    assert summary(found) == [{(R, 1): 20, (Y, 1): 50}, {(R, 1): 1}]
    assert summary(moves({R: [50, S, S, S]}, Card.CARD_11)) == [{(R, 0): 1}]


def test_14_apologies_card() -> None:
    found = moves({R: [10, S, S, HOME], Y: [20, SAFE, S, S], G: [30, S, S, S]}, Card.CARD_APOLOGIES)
    assert summary(found) == [
        {(R, 1): 20, (Y, 0): START},
        {(R, 1): 30, (G, 0): START},
        {(R, 2): 20, (Y, 0): START},
        {(R, 2): 30, (G, 0): START},
    ]
    assert moves({R: [10, 11, 12, 13], Y: [20, S, S, S]}, Card.CARD_APOLOGIES) == [
        Move(Card.CARD_APOLOGIES, ())
    ]
    assert moves({R: [S, S, S, S], Y: [S, SAFE, HOME, S]}, Card.CARD_APOLOGIES) == [
        Move(Card.CARD_APOLOGIES, ())
    ]
    # An opponent on RED's own slide start: no slide. On BLUE's slide start: slide.
    assert summary(moves({R: [S, 10, 11, 12], Y: [1, S, S, S]}, Card.CARD_APOLOGIES)) == [
        {(R, 0): 1, (Y, 0): START}
    ]
    assert summary(moves({R: [S, 10, 11, 12], Y: [16, S, S, S]}, Card.CARD_APOLOGIES)) == [
        {(R, 0): 19, (Y, 0): START}
    ]


def test_15_slides_sweep_own_pawns_and_own_pawn_on_slide_start_blocks() -> None:
    found = moves({B: [6, 11, S, S], Y: [13, S, S, S]}, Card.CARD_3, to_move=B)
    assert summary(found)[0] == {(B, 0): 13, (B, 1): START, (Y, 0): START}
    found = moves({B: [6, 9, S, S]}, Card.CARD_3, to_move=B)
    assert {(B, 0): 9} not in summary(found) and all((B, 0) not in e for e in summary(found))


def test_16_landing_on_an_occupied_slide_start() -> None:
    found = moves({B: [6, S, S, S], Y: [9, S, S, S], G: [12, S, S, S]}, Card.CARD_3, to_move=B)
    assert found == [
        Move(
            Card.CARD_3,
            (PawnMove(B, 0, 6, 13),),
            (PawnMove(Y, 0, 9, START), PawnMove(G, 0, 12, START)),
        )
    ]


def test_17_own_colour_slide_start_does_not_slide() -> None:
    assert summary(moves({R: [6, S, S, S]}, Card.CARD_3)) == [{(R, 0): 9}]
    assert summary(moves({Y: [35, S, S, S]}, Card.CARD_4, to_move=Y)) == [{(Y, 0): 31}]


def test_18_fix_no_self_bump_by_own_slide() -> None:
    found = moves({B: [13, S, S, S]}, Card.CARD_4, to_move=B)
    assert found == [Move(Card.CARD_4, (PawnMove(B, 0, 13, 13),), ())]


def test_19_fix_safe_zones_are_per_colour() -> None:
    found = moves({R: [SAFE, HOME, HOME, HOME], Y: [SAFE + 2, S, S, S]}, Card.CARD_2)
    assert summary(found) == [{(R, 0): SAFE + 2}]
    found = moves({R: [1, S, S, S], Y: [SAFE + 1, S, S, S]}, Card.CARD_3)
    assert summary(found) == [{(R, 0): SAFE + 1}]
    found = moves({R: [SAFE + 4, S, S, S], Y: [SAFE, S, S, S]}, Card.CARD_4)
    assert summary(found) == [{(R, 0): SAFE}]


def test_20_forfeits() -> None:
    assert moves({R: [HOME, HOME, HOME, SAFE + 4]}, Card.CARD_3) == [Move(Card.CARD_3, ())]
    hand = [Card.CARD_3, Card.CARD_3, Card.CARD_8, Card.CARD_12, Card.CARD_5]
    state = position({R: [HOME, HOME, HOME, SAFE + 4]}, mode=Mode.ADULT, hands={R: hand})
    found = legal_moves(state, R)
    assert [(m.card, m.actions, m.slot) for m in found] == [(card, (), i) for i, card in enumerate(hand)]


def test_21_adult_duplicate_cards_give_duplicate_moves() -> None:
    hand = [Card.CARD_7, Card.CARD_8, Card.CARD_4, Card.CARD_8, Card.CARD_7]
    state = position({R: [4, HOME, HOME, HOME]}, mode=Mode.ADULT, hands={R: hand})
    found = legal_moves(state, R)
    assert [(m.card, ends(m)[(R, 0)], m.slot) for m in found] == [
        (Card.CARD_7, 11, 0),
        (Card.CARD_8, 12, 1),
        (Card.CARD_4, 0, 2),
        (Card.CARD_8, 12, 3),
        (Card.CARD_7, 11, 4),
    ]
    apply_move(state, found[3], Random(1))
    assert state.hands[R][:4] == [Card.CARD_7, Card.CARD_8, Card.CARD_4, Card.CARD_7]


def test_22_kept_forfeited_two_ends_turn_and_played_two_draws_again() -> None:
    rng = Random(3)
    state = position({R: [10, S, S, S]}, card=Card.CARD_2, players=2)
    apply_move(state, legal_moves(state, R)[0], rng)
    assert state.to_move is R and state.drawn_card is not None  # draw again
    state = position({R: [HOME, HOME, HOME, SAFE + 4]}, card=Card.CARD_2, players=2)  # a 2 cannot be played
    apply_move(state, legal_moves(state, R)[0], rng)
    assert state.to_move is Y
    state = position({R: [HOME, HOME, HOME, SAFE + 3]}, card=Card.CARD_2, players=2)
    apply_move(state, legal_moves(state, R)[0], rng)
    assert state.winner is R and state.to_move is None


def test_23_game_ends_on_fourth_pawn_home_and_turns_count_everything() -> None:
    rng = Random(5)
    state = position({R: [HOME, HOME, SAFE + 3, SAFE + 2]}, card=Card.CARD_2, players=2)
    apply_move(state, legal_moves(state, R)[0], rng)  # draw again
    state.drawn_card = Card.CARD_3
    apply_move(state, legal_moves(state, R)[0], rng)
    assert state.winner is R
    assert state.turns[R] == 2
    assert state.history[-1].action == "Game completed: winner is Red after 2 turns"


def test_24_adult_setup() -> None:
    state = new_game(3, Mode.ADULT, Random(11))
    assert [state.pawns[c][0] for c in (R, Y, G)] == [4, 34, 49]
    assert all(state.pawns[c][1:] == [START] * 3 for c in (R, Y, G))
    assert [len(state.hands[c]) for c in Color] == [5, 5, 5, 0]
    # Dealt one at a time in colour order: replaying the draws gives the same hands.
    replay = Random(11)
    pile = list(DECK)
    dealt: dict[Color, list[Card]] = {R: [], Y: [], G: []}
    for _ in range(5):
        for c in (R, Y, G):
            index = replay.randrange(len(pile))
            dealt[c].append(pile[index])
            pile[index] = pile[-1]
            pile.pop()
    assert [state.hands[c] for c in (R, Y, G)] == [dealt[R], dealt[Y], dealt[G]]


def test_25_deck_and_reshuffle() -> None:
    counts = Counter(DECK)
    assert len(DECK) == 45 and counts[Card.CARD_1] == 5
    assert all(counts[c] == 4 for c in Card if c is not Card.CARD_1) and Card.CARD_APOLOGIES in counts
    state = position({R: [10, S, S, S]}, card=Card.CARD_3, players=2)
    state.discard.extend(state.draw_pile)
    state.draw_pile.clear()
    apply_move(state, legal_moves(state, R)[0], Random(2))
    assert len(state.draw_pile) + len(state.discard) + (state.drawn_card is not None) == 45
    assert len(state.draw_pile) == 44 - 0 and len(state.discard) == 0


def test_26_distance_and_reward_v1() -> None:
    assert [distance_to_home(R, s) for s in (0, 1, 2, 3, 4, 5, 30, 59)] == [8, 7, 6, 65, 64, 63, 38, 9]
    assert distance_to_home(R, HOME) == 0 and distance_to_home(R, START) == 65
    assert distance_to_home(R, SAFE + 1) == 4
    assert player_score(R, [START] * 4) == 0
    assert player_score(R, [HOME] * 4) == 260 + 40 + 100
    # At the start every move ties at reward 0: greedy takes the first listed move.
    state = position({}, card=Card.CARD_1, players=4)
    found = legal_moves(state, R)
    assert ROBOTS["greedy"].choose(state, 0, found, Random(1)) is found[0]
    # Behind (YELLOW has three pawns home): two 5-moves both score 0, the first is chosen.
    state = position({R: [10, 20, S, S], Y: [HOME, HOME, HOME, 30]}, card=Card.CARD_5, players=2)
    found = legal_moves(state, R)
    assert len(found) == 2 and ROBOTS["greedy"].choose(state, 0, found, Random(1)) is found[0]


def test_27_colours_and_turn_order() -> None:
    firsts = Counter(new_game(3, Mode.STANDARD, Random(seed)).to_move for seed in range(600))
    assert set(firsts) == {R, Y, G} and min(firsts.values()) > 150
    state = new_game(2, Mode.STANDARD, Random(1))
    assert state.colors == (R, Y)
    state = GameState.from_position(Mode.STANDARD, list(Color), {}, drawn_card=Card.CARD_3, to_move=G)
    apply_move(state, legal_moves(state, G)[0], Random(1))  # a forfeit: nobody can move with a 3
    assert state.to_move is B
    apply_move(state, Move(state.drawn_card or Card.CARD_3, ()), Random(1))
    assert state.to_move is R


def test_28_home_pawns_never_move_and_are_never_targets() -> None:
    found = moves({R: [HOME, S, S, S], Y: [HOME, 20, S, S]}, Card.CARD_APOLOGIES)
    assert summary(found) == [{(R, i): 20, (Y, 1): START} for i in (1, 2, 3)]
    assert moves({R: [HOME, HOME, HOME, HOME]}, Card.CARD_1) == [Move(Card.CARD_1, ())]
