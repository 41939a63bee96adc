"""Apologies engine benchmark: Parlour's rules engine against the reference library, same run.

1. Legal-move generation over recorded turns: the same positions (recorded from library games),
   timed in both engines; median microseconds per turn and the ratio.
2. Self-play of whole 4-seat games with four greedy (RewardV1) robots: ours, and the library
   driven the way its server drives it (next turn -> player view -> legal moves -> RewardV1
   choice -> execute move; no per-turn deep copy of the game). Games/s and the ratio.

Targets: >= 5x faster legal-move generation and >= 20x self-play games/s, both modes.

    python bench/engine.py [--positions 3000] [--seconds 15]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

from apologies.game import Game, PlayerColor
from apologies.rules import Rules
from apologies.source import RewardV1InputSource

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.games.apologies.library_oracle import LIB_MODE, play_library_move, samples

from parlour.games.apologies.engine import apply_move, legal_moves, new_game
from parlour.games.apologies.model import Mode
from parlour.robots.apologies import ROBOTS


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
    library, ours = [], []
    for view, card, state in recorded[:positions]:
        started = time.perf_counter_ns()
        rules.construct_legal_moves(view, card=card)
        library.append(time.perf_counter_ns() - started)
        color = state.to_move
        started = time.perf_counter_ns()
        legal_moves(state, color)  # type: ignore[arg-type]
        ours.append(time.perf_counter_ns() - started)
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
    greedy = ROBOTS["greedy"]
    state = new_game(4, mode, rng)
    played = 0
    while state.to_move is not None:
        color = state.to_move
        moves = legal_moves(state, color)
        apply_move(state, greedy.choose(state, int(color), moves, rng), rng)
        played += 1
    return played


def games_per_second(play: object, mode: Mode, seconds: float, seed: int) -> tuple[float, int]:
    random.seed(seed)  # the library draws with the global random module
    rng = random.Random(seed)
    games = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds or games < 2:
        play(mode, rng)  # type: ignore[operator]
        games += 1
    return games / (time.perf_counter() - started), games


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=3000, help="recorded turns per mode")
    parser.add_argument("--seconds", type=float, default=15.0, help="self-play time per engine and mode")
    args = parser.parse_args()

    print("legal-move generation, median per turn (4 players, recorded library positions)")
    for mode in Mode:
        library, ours = legal_move_generation(mode, args.positions)
        print(
            f"  {mode.value:8s} library {library:8.1f} us  parlour {ours:6.2f} us  ratio {library / ours:6.1f}x"
        )
    print("self-play, whole 4-seat games, four greedy (RewardV1) robots")
    for mode in Mode:
        theirs, their_games = games_per_second(library_game, mode, args.seconds, seed=1)
        ours, our_games = games_per_second(parlour_game, mode, args.seconds, seed=1)
        print(
            f"  {mode.value:8s} library {theirs:7.2f} games/s ({their_games} games)  "
            f"parlour {ours:8.1f} games/s ({our_games} games)  ratio {ours / theirs:6.1f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
