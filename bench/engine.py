"""Apologies engine benchmark: Parlour's rules engine against the reference library, same run.

1. Legal-move generation over recorded turns: the same positions (recorded from 4-player library
   games played with random moves), timed in both engines; median microseconds per turn and the
   ratio.
2. Self-play of whole 4-seat games with four greedy (RewardV1) robots: ours, and the library
   driven the way its server drives it (next turn -> player view -> legal moves -> RewardV1
   choice -> execute move; no per-turn deep copy of the game, i.e. not Engine.play_next).
   Games/s, moves per game (the two should play games of the same length) and the ratio.

Targets: >= 5x faster legal-move generation and >= 20x self-play games/s, both modes.
Bounded: a fixed number of positions and games (about a minute by default on a slow machine).

    python bench/engine.py [--quick] [--games N] [--positions N]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from apologies.game import Game, PlayerColor
from apologies.rules import Rules
from apologies.source import RewardV1InputSource

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.games.apologies.library_oracle import LIB_MODE, play_library_move, samples

from parlour.games.apologies.engine import apply_move, legal_moves, new_game
from parlour.games.apologies.model import Mode
from parlour.robots.apologies import ROBOTS

#: Parlour plays this many times as many games as the library, so both timings last a while.
OUR_GAMES_FACTOR = 20
GENERATION_TARGET = 5.0
SELF_PLAY_TARGET = 20.0


def legal_move_generation(mode: Mode, positions: int) -> tuple[float, float]:
    """Median microseconds per turn to build the legal moves: (library, parlour)."""
    recorded = []
    seed = 0
    while len(recorded) < positions:
        seed += 1
        for sample in samples(mode, 4, seed=seed):
            try:
                state = sample.ours()
            except ValueError:
                continue  # a position only the library's quirks reach (two pawns on one square)
            view = sample.game.create_player_view(sample.color)
            recorded.append((view, sample.card, state))
    rules = Rules(LIB_MODE[mode])
    clock = time.perf_counter_ns
    library, ours = [], []
    for view, card, state in recorded[:positions]:
        started = clock()
        rules.construct_legal_moves(view, card=card)
        library.append(clock() - started)
        color = state.to_move
        started = clock()
        legal_moves(state, color)  # type: ignore[arg-type]
        ours.append(clock() - started)
    return statistics.median(library) / 1000, statistics.median(ours) / 1000


def library_game(mode: Mode, rng: random.Random) -> int:
    """One whole library game, server style, four RewardV1 players; returns the moves played."""
    rules = Rules(LIB_MODE[mode])
    source = RewardV1InputSource()
    game = Game(playercount=4)
    rules.start_game(game)
    order = list(PlayerColor)
    turn = rng.randrange(4)
    played = 0
    while not game.completed:
        color = order[turn]
        player = game.players[color]
        view = game.create_player_view(color)
        card = game.deck.draw() if mode is Mode.STANDARD else None
        moves = rules.construct_legal_moves(view, card=card)
        move = source.choose_move(LIB_MODE[mode], view, moves, Rules.evaluate_move)
        played += 1
        if play_library_move(game, rules, mode, player, move):
            turn = (turn + 1) % 4
    return played


def parlour_game(mode: Mode, rng: random.Random) -> int:
    """One whole Parlour game, four greedy robots; returns the moves played."""
    greedy = ROBOTS["greedy"]
    state = new_game(4, mode, rng)
    played = 0
    while state.to_move is not None:
        color = state.to_move
        moves = legal_moves(state, color)
        apply_move(state, greedy.choose(state, int(color), moves, rng), rng)
        played += 1
    return played


def self_play(
    play: Callable[[Mode, random.Random], int], mode: Mode, games: int, seed: int
) -> tuple[float, float]:
    """(games per second, mean moves per game) over ``games`` seeded games."""
    random.seed(seed)  # the library draws its cards with the global random module
    rng = random.Random(seed)
    moves = 0
    started = time.perf_counter()
    for _ in range(games):
        moves += play(mode, rng)
    return games / (time.perf_counter() - started), moves / games


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: few positions and games")
    parser.add_argument("--games", type=int, default=None, help="library self-play games per mode (60)")
    parser.add_argument("--positions", type=int, default=None, help="recorded turns per mode (3000)")
    args = parser.parse_args()
    games = max(1, args.games or (6 if args.quick else 60))
    positions = max(1, args.positions or (300 if args.quick else 3000))

    rows: list[tuple[str, str, str, str, float, float]] = []
    print(f"legal-move generation, median per turn over {positions} recorded 4-player positions per mode")
    for mode in Mode:
        library, ours = legal_move_generation(mode, positions)
        print(
            f"  {mode.value:8s} library {library:8.1f} us   parlour {ours:7.2f} us   {library / ours:6.1f}x"
        )
        rows.append(
            (
                "legal moves",
                mode.value,
                f"{library:.1f} us",
                f"{ours:.2f} us",
                library / ours,
                GENERATION_TARGET,
            )
        )
    print(
        f"self-play, 4 greedy (RewardV1) seats: {games} library games, {games * OUR_GAMES_FACTOR} Parlour games per mode"
    )
    for mode in Mode:
        theirs, their_moves = self_play(library_game, mode, games, seed=1)
        ours, our_moves = self_play(parlour_game, mode, games * OUR_GAMES_FACTOR, seed=1)
        print(
            f"  {mode.value:8s} library {theirs:7.2f} games/s ({their_moves:5.1f} moves/game)   "
            f"parlour {ours:7.1f} games/s ({our_moves:5.1f} moves/game)   {ours / theirs:6.1f}x"
        )
        rows.append(
            ("self-play", mode.value, f"{theirs:.2f} g/s", f"{ours:.1f} g/s", ours / theirs, SELF_PLAY_TARGET)
        )
        # The library's quirks (bumps out of safe zones, self-bumps) make its games longer, which
        # flatters games/s: moves/s compares the per-move work alone.
        their_rate, our_rate = theirs * their_moves, ours * our_moves
        rows.append(
            ("moves/s", mode.value, f"{their_rate:.0f} m/s", f"{our_rate:.0f} m/s", our_rate / their_rate, 0)
        )
    print()
    print(
        f"{'measure':12s} {'mode':8s} {'library':>12s} {'parlour':>12s} {'ratio':>8s} {'target':>7s}  verdict"
    )
    for measure, mode_name, library_text, our_text, ratio, target in rows:
        verdict = "" if not target else "ok" if ratio >= target else "BELOW TARGET"
        goal = f"{target:6.0f}x" if target else f"{'-':>7s}"
        print(
            f"{measure:12s} {mode_name:8s} {library_text:>12s} {our_text:>12s} {ratio:7.1f}x {goal}  {verdict}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
