"""Differential tests: Parlour's legal moves against the reference library's, position by position.

The two engines must produce the same set of distinct outcomes (card used, where every pawn
ends up) in every reachable position, except where a difference is one of Parlour's documented
fixes of the library's quirks (docs/apologies-protocol.md, "Where Parlour differs from
apologiesserver 0.2.2"). Each library move is first corrected for those quirks by a classifier;
what remains must agree exactly.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import pytest
from apologies.game import CardType

from parlour.games.apologies.board import SLIDE_SWEEP
from parlour.games.apologies.engine import GameState, legal_moves
from parlour.games.apologies.model import HOME, SAFE, START, Card, Color, Mode, position_name

from .library_oracle import (
    CARD,
    Outcome,
    Sample,
    board_of,
    library_game,
    library_moves,
    library_steps,
    outcome_of_library,
    outcome_of_ours,
    samples,
)

FIXES = ("safe-zone-collision", "self-bump", "split-partner-bump", "split-same-square")


def corrected(sample_board: dict[tuple[int, int], int], move: object) -> tuple[Outcome | None, set[str]]:
    """The library move's outcome with each documented quirk undone, and the quirks it showed."""
    steps = library_steps(move)  # type: ignore[arg-type]
    card = move.card  # type: ignore[attr-defined]
    mover_color = steps[0][0] if steps else None
    moved = {(c, p) for c, p, _, side in steps if not side}
    own_moved = {(c, p) for c, p in moved if c == mover_color}
    found: set[str] = set()
    kept = []
    for color, pawn, target, side in steps:
        if side and target == START:
            before = sample_board[(color, pawn)]
            if (color, pawn) in moved:
                found.add("split-partner-bump" if len(own_moved) == 2 else "self-bump")
                continue
            if color != mover_color and SAFE <= before < HOME:
                found.add("safe-zone-collision")
                continue
        kept.append((color, pawn, target))
    after = dict(sample_board)
    for color, pawn, target in kept:
        after[(color, pawn)] = target
    if "self-bump" in found and card.cardtype is CardType.CARD_11 and len(own_moved) == 1:
        # Once the mover is no longer bumped by its own slide, the opponent it swapped with stands
        # where the slide passes (or where it ends): Parlour sends that opponent to start.
        (mover,) = own_moved
        (other,) = moved - own_moved
        landing = sample_board[other]
        if after[other] < SAFE and (
            after[other] == after[mover] or after[other] in SLIDE_SWEEP[mover[0]][landing]
        ):
            after[other] = START
    if len(own_moved) == 2:
        a, b = (after[key] for key in sorted(own_moved))
        if a == b and a != HOME:
            found.add("split-same-square")
            return None, found
    return (CARD[card.cardtype], tuple(sorted((c, p, w) for (c, p), w in after.items()))), found


def parlour_reachable(board: dict[tuple[int, int], int]) -> bool:
    """False for positions only the library's quirks reach: two pawns on one board square, or
    two own pawns on one safe square (e.g. after the library's same-square 7 split)."""
    squares = [w for w in board.values() if w < SAFE]
    safes = [(c, w) for (c, _), w in board.items() if SAFE <= w < HOME]
    return len(squares) == len(set(squares)) and len(safes) == len(set(safes))


@dataclass
class Tally:
    """What one run of the comparison saw, so that a run that compares nothing cannot pass."""

    positions: int = 0
    skipped: int = 0  # positions only the library's quirks reach (see parlour_reachable)
    exact: int = 0  # the library's own outcomes equal ours, no correction needed
    forfeits: int = 0  # both engines forfeit
    explained: Counter[str] = field(default_factory=Counter)  # positions each fix class explained

    def line(self, label: str) -> str:
        return (
            f"{label}: {self.positions} positions, {self.exact} agree exactly, {self.forfeits} forfeits, "
            f"{self.skipped} skipped, differences explained by {dict(sorted(self.explained.items()))}"
        )


def compare(sample: Sample, tally: Tally) -> None:
    """Compare one position; fail with a readable diff when a difference is not a documented fix."""
    board = board_of(sample.game)
    state = sample.ours()
    assert state.to_move is not None
    mine = legal_moves(state, state.to_move)
    ours = {outcome_of_ours(board, move) for move in mine}
    raw = {outcome_of_library(board, move) for move in sample.moves}
    label = f"{sample.mode.value} {sample.color.name} cards {[c.name for c in state.cards_in_play()]}"
    if ours == raw:
        tally.exact += 1
    fixed: set[Outcome] = set()
    classes: set[str] = set()
    for move in sample.moves:
        outcome, found = corrected(board, move)
        classes |= found
        if outcome is not None:
            fixed.add(outcome)
    library_forfeits = all(not move.actions for move in sample.moves)
    if not fixed:
        # Every library move was a quirk Parlour drops (a same-square split): Parlour forfeits.
        library_forfeits = True
        fixed = {
            (card, tuple(sorted((c, p, w) for (c, p), w in board.items()))) for card in state.cards_in_play()
        }
    our_forfeits = all(move.is_forfeit for move in mine)
    assert our_forfeits == library_forfeits, f"{label}: forfeit disagreement, ours {mine}"
    if our_forfeits:
        tally.forfeits += 1
        if library_forfeits and sample.moves and not sample.moves[0].actions:
            # One forfeit per card in play, duplicates included.
            assert Counter(m.card for m in mine) == Counter(CARD[m.card.cardtype] for m in sample.moves), (
                label
            )
    if ours != raw:
        assert classes, f"{label}: unexplained difference: {diff(ours, raw)}"
        tally.explained.update(classes)
    assert ours == fixed, f"{label}: difference not explained by {sorted(classes)}: {diff(ours, fixed)}"


def diff(ours: set[Outcome], theirs: set[Outcome]) -> str:
    """Outcomes only one side has, each shown as the card and the pawns that differ."""

    def show(outcomes: set[Outcome]) -> list[str]:
        everything = ours | theirs
        common = set.intersection(*(set(o[1]) for o in everything)) if len(everything) > 1 else set()
        return sorted(
            f"{card.name}: "
            + ", ".join(
                f"{Color(c).name}{p} {position_name(w)}" for c, p, w in pawns if (c, p, w) not in common
            )
            for card, pawns in outcomes
        )

    return f"ours only {show(ours - theirs)}; library only {show(theirs - ours)}"


def run(mode: Mode, players: int, target: int, first_seed: int) -> Tally:
    """Compare at least ``target`` positions from seeded library games played with random moves."""
    tally = Tally()
    seed = first_seed
    while tally.positions < target:
        seed += 1
        for sample in samples(mode, players, seed=seed * 7919 + players):
            if not parlour_reachable(board_of(sample.game)):
                tally.skipped += 1
                continue
            compare(sample, tally)
            tally.positions += 1
    return tally


def check(tally: Tally, target: int) -> None:
    assert tally.positions >= target
    # Not vacuous: most positions agree without any correction, and every fix was needed somewhere.
    assert tally.exact > tally.positions * 3 // 4, tally.line("too few exact")
    assert set(tally.explained) == set(FIXES), tally.line("a fix class never seen")
    assert tally.forfeits > 0, tally.line("no forfeit compared")
    # Positions only the library's quirks can reach stay rare, or the comparison means little.
    assert tally.skipped < tally.positions // 20, tally.line("too many skipped")


CONFIGS = [(mode, players) for mode in Mode for players in (2, 3, 4)]
IDS = [f"{m.value}-{n}" for m, n in CONFIGS]


@pytest.mark.parametrize(("mode", "players"), CONFIGS, ids=IDS)
def test_outcomes_match_the_library(mode: Mode, players: int) -> None:
    target = 3400  # x 6 configurations: > 20,000 positions in all
    tally = run(mode, players, target, first_seed=0)
    print(tally.line(f"{mode.value}-{players}"))
    check(tally, target)


@pytest.mark.soak
@pytest.mark.timeout(900)
@pytest.mark.parametrize(("mode", "players"), CONFIGS, ids=IDS)
def test_outcomes_match_the_library_soak(mode: Mode, players: int) -> None:
    target = 40_000  # other seeds than the quick test: 240,000 more positions in all
    tally = run(mode, players, target, first_seed=1_000_000)
    print(tally.line(f"soak {mode.value}-{players}"))
    check(tally, target)


# ---------------------------------------------------------------------------------------------
# One hand-built position per fix: the library's quirky outcome, and Parlour's.


def outcomes_both(
    pawns: dict[Color, list[int]], color: Color, card: Card, players: int = 4
) -> tuple[set[Outcome], set[Outcome]]:
    game = library_game(Mode.STANDARD, players, pawns)
    board = board_of(game)
    lib = {outcome_of_library(board, m) for m in library_moves(game, color, card)}
    state = GameState.from_position(
        Mode.STANDARD, list(Color)[:players], pawns, drawn_card=card, to_move=color
    )
    ours = {outcome_of_ours(board, m) for m in legal_moves(state, color)}
    return lib, ours


def where(outcome: Outcome, color: Color, pawn: int) -> int:
    return next(w for c, p, w in outcome[1] if c == color and p == pawn)


def test_library_quirk_safe_zone_collision_is_fixed() -> None:
    # RED safe0 + 2 -> safe2 while YELLOW stands in its own safe 2.
    pawns = {Color.RED: [SAFE, START, START, START], Color.YELLOW: [SAFE + 2, START, START, START]}
    lib, ours = outcomes_both(pawns, Color.RED, Card.CARD_2)
    assert any(where(o, Color.YELLOW, 0) == START for o in lib)
    assert all(where(o, Color.YELLOW, 0) == SAFE + 2 for o in ours)
    assert any(where(o, Color.RED, 0) == SAFE + 2 for o in ours)


def test_library_quirk_self_bump_is_fixed() -> None:
    # BLUE at 13 plays 4: back onto RED's slide start 9, slides to 13.
    pawns = {Color.BLUE: [13, START, START, START]}
    lib, ours = outcomes_both(pawns, Color.BLUE, Card.CARD_4)
    assert {where(o, Color.BLUE, 0) for o in lib} == {START}
    assert {where(o, Color.BLUE, 0) for o in ours} == {13}


def test_library_quirk_split_partner_bump_is_fixed() -> None:
    # BLUE 5 & 11: 5 + 4 lands on RED's slide 9 -> 13 sweeping 11, while 11 + 3 -> 14.
    pawns = {Color.BLUE: [5, 11, START, START]}
    lib, ours = outcomes_both(pawns, Color.BLUE, Card.CARD_7)
    assert any(where(o, Color.BLUE, 0) == 13 and where(o, Color.BLUE, 1) == START for o in lib)
    assert any(where(o, Color.BLUE, 0) == 13 and where(o, Color.BLUE, 1) == 14 for o in ours)
    assert not any(where(o, Color.BLUE, 1) == START for o in ours)


def test_library_quirk_split_same_square_is_fixed() -> None:
    # RED 10 & 11: the library lists 10 -> 14 with 11 -> 14.
    pawns = {Color.RED: [10, 11, START, START]}
    lib, ours = outcomes_both(pawns, Color.RED, Card.CARD_7)
    assert any(where(o, Color.RED, 0) == where(o, Color.RED, 1) == 14 for o in lib)
    assert not any(where(o, Color.RED, 0) == where(o, Color.RED, 1) for o in ours)


def test_library_quirk_split_order_asymmetry_is_fixed() -> None:
    # RED 10 & 5 with a 7: the library lists 5 -> 10 then 10 -> 12 but not the same split with
    # the halves named the other way round, and lists most other splits twice; Parlour lists
    # each split once, and this one is among them.
    pawns = {Color.RED: [10, 5, START, START]}
    game = library_game(Mode.STANDARD, 4, pawns)
    listed = [
        tuple((pawn, target) for _, pawn, target, side in library_steps(m) if not side)
        for m in library_moves(game, Color.RED, Card.CARD_7)
    ]
    assert ((1, 10), (0, 12)) in listed
    assert ((0, 12), (1, 10)) not in listed
    assert ((0, 13), (1, 9)) in listed and ((1, 9), (0, 13)) in listed
    state = GameState.from_position(Mode.STANDARD, list(Color), pawns, drawn_card=Card.CARD_7)
    ours = [tuple(sorted((a.pawn, a.end) for a in m.actions)) for m in legal_moves(state, Color.RED)]
    assert ours.count(((0, 12), (1, 10))) == 1
    assert ours.count(((0, 13), (1, 9))) == 1
    assert len(ours) == len(set(ours))
