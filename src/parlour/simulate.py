"""``parlour simulate``: robot games played in-process, for measuring robots against each other.

Each game gets its own random source derived from the base seed and the game's number, so a
run is reproducible (decision times aside) however it is split across worker processes.

Seats are not equal in every game (in Apologies, four RewardV1 players win 13%, 22%, 28% and 37%
of games from seats RED, YELLOW, GREEN and BLUE, in Parlour and in the reference library alike),
so by default the line-up rotates from game to game: each robot plays every seat equally often,
and its win rate is comparable with parity (1 / seats).
"""

from __future__ import annotations

import json
import math
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from random import Random
from typing import Any, TextIO

from parlour.games.registry import plugin
from parlour.robots.registry import robot

__all__ = ["GameResult", "Ladder", "Report", "ladder", "play_game", "simulate", "wilson"]


@dataclass(frozen=True, slots=True)
class GameResult:
    winners: tuple[int, ...]
    moves: int
    #: Decision times in seconds, by seat.
    times: tuple[tuple[float, ...], ...]


def play_game(
    game: str, seats: Sequence[str], options: dict[str, Any], seed: int, max_moves: int = 100_000
) -> GameResult:
    """One whole game between robots; seat i is played by the robot named ``seats[i]``."""
    rules = plugin(game)
    robots = [robot(game, name) for name in seats]
    rng = Random(seed)
    state = rules.new_game(len(seats), options, rng)
    times: list[list[float]] = [[] for _ in seats]
    moves = 0
    while (outcome := rules.outcome(state)) is None:
        seat = rules.to_move(state)
        if seat is None or moves >= max_moves:
            return GameResult((), moves, tuple(tuple(t) for t in times))
        legal = rules.legal_moves(state, seat)
        started = time.perf_counter()
        move = robots[seat].choose(state, seat, legal, rng)
        times[seat].append(time.perf_counter() - started)
        state = rules.apply(state, move, rng)
        moves += 1
    return GameResult(outcome.winners, moves, tuple(tuple(t) for t in times))


def wilson(wins: float, games: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a win rate (95% by default)."""
    if games == 0:
        return 0.0, 1.0
    rate = wins / games
    centre = rate + z * z / (2 * games)
    spread = z * math.sqrt(rate * (1 - rate) / games + z * z / (4 * games * games))
    scale = 1 + z * z / games
    return (centre - spread) / scale, (centre + spread) / scale


@dataclass
class SeatReport:
    seat: int
    robot: str
    wins: float
    win_rate: float
    ci_low: float
    ci_high: float


@dataclass
class RobotTiming:
    robot: str
    decisions: int
    median_ms: float
    p99_ms: float


@dataclass
class Report:
    game: str
    options: dict[str, Any]
    seats: list[str]
    games: int
    seed: int
    mean_moves: float
    rotated: bool = True
    #: Win rate of each seat position, whoever sat there.
    seat_win_rates: list[float] = field(default_factory=list)
    by_seat: list[SeatReport] = field(default_factory=list)
    timing: list[RobotTiming] = field(default_factory=list)
    #: Games won by more than one seat (each shares the win), and games with no winner.
    ties: int = 0
    unfinished: int = 0

    def header(self) -> str:
        """The run in words: what was played, how, and what happened overall."""
        options = ", ".join(f"{value} {key}" for key, value in self.options.items())
        plural = "" if self.games == 1 else "s"
        text = f"{self.games} game{plural} of {self.game}" + (f" ({options})" if options else "")
        text += f", seed {self.seed}, line-up {'rotated every game' if self.rotated else 'in fixed seats'}"
        text += f": mean game length {self.mean_moves:.1f} moves"
        if self.ties:
            text += f"; {self.ties} tied (a tie shares the win)"
        if self.unfinished:
            text += f"; {self.unfinished} stopped unfinished (no winner)"
        return text + "."

    def table(self) -> str:
        # Shares of a win appear only when some game was tied; otherwise wins are whole games.
        wins = "{:8.1f}" if self.ties else "{:8.0f}"
        lines = [
            self.header(),
            f"{'entry' if self.rotated else 'seat':>5}  {'robot':10} {'wins':>8} {'win rate':>9}  95% CI",
        ]
        for row in self.by_seat:
            lines.append(
                f"{row.seat:>5}  {row.robot:10} {wins.format(row.wins)} {row.win_rate:9.1%}  "
                f"[{row.ci_low:.1%}, {row.ci_high:.1%}]"
            )
        lines.append("win rate by seat: " + ", ".join(f"{rate:.1%}" for rate in self.seat_win_rates))
        lines.append(f"{'robot':10} {'decisions':>10} {'median':>10} {'p99':>10}")
        for timing in self.timing:
            lines.append(
                f"{timing.robot:10} {timing.decisions:>10} {timing.median_ms:8.3f}ms {timing.p99_ms:8.3f}ms"
            )
        return "\n".join(lines)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


def _one(job: tuple[str, tuple[str, ...], dict[str, Any], int]) -> GameResult:
    game, seats, options, seed = job
    return play_game(game, seats, options, seed)


def _played(
    jobs: list[tuple[str, tuple[str, ...], dict[str, Any], int]],
    workers: int,
    progress: Callable[[int, int], None] | None,
) -> list[GameResult]:
    """Every job's game, in order, on ``workers`` processes (1: this one), telling ``progress``."""
    results: list[GameResult] = []

    def collect(played: Iterable[GameResult]) -> None:
        for result in played:
            results.append(result)
            if progress:
                progress(len(results), len(jobs))

    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            collect(pool.map(_one, jobs, chunksize=max(1, len(jobs) // (workers * 20))))
    else:
        collect(map(_one, jobs))
    return results


def _lineup(seats: Sequence[str], number: int, rotate: bool) -> tuple[str, ...]:
    """Who sits where in game ``number``: entry i of ``seats`` moves to seat (i + number) % n."""
    if not rotate:
        return tuple(seats)
    shift = number % len(seats)
    return tuple(seats[(seat - shift) % len(seats)] for seat in range(len(seats)))


def simulate(
    game: str,
    seats: Sequence[str],
    games: int,
    seed: int,
    options: dict[str, Any] | None = None,
    workers: int = 1,
    progress: Callable[[int, int], None] | None = None,
    rotate: bool = True,
) -> Report:
    """Play ``games`` games and summarise wins (a tie shares the win) and decision times.

    ``seats`` names the robots of the line-up; with ``rotate`` the line-up turns by one seat
    each game, and wins are credited to the line-up entry (the robot), not to the seat.
    """
    options = options or {}
    jobs = [
        (game, _lineup(seats, number, rotate), options, seed * 1_000_003 + number) for number in range(games)
    ]
    results = _played(jobs, workers, progress)
    wins = [0.0] * len(seats)
    by_color = [0.0] * len(seats)
    for number, result in enumerate(results):
        shift = number % len(seats) if rotate else 0
        for winner in result.winners:
            wins[(winner - shift) % len(seats)] += 1 / len(result.winners)
            by_color[winner] += 1 / len(result.winners)
    report = Report(
        game=game,
        options={key: str(getattr(value, "value", value)) for key, value in options.items()},
        seats=list(seats),
        games=games,
        seed=seed,
        mean_moves=statistics.fmean(r.moves for r in results) if results else 0.0,
        rotated=rotate,
        seat_win_rates=[w / games for w in by_color],
        ties=sum(1 for r in results if len(r.winners) > 1),
        unfinished=sum(1 for r in results if not r.winners),
    )
    for seat, name in enumerate(seats):
        low, high = wilson(wins[seat], games)
        report.by_seat.append(
            SeatReport(seat, name, wins[seat], wins[seat] / games if games else 0.0, low, high)
        )
    for name in dict.fromkeys(seats):
        samples = sorted(
            t
            for number, r in enumerate(results)
            for seat, times in enumerate(r.times)
            if _lineup(seats, number, rotate)[seat] == name
            for t in times
        )
        if samples:
            p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
            report.timing.append(
                RobotTiming(name, len(samples), statistics.median(samples) * 1000, p99 * 1000)
            )
    return report


def progress_bar(stream: TextIO | None = None) -> Callable[[int, int], None]:
    """A one-line text progress bar, redrawn in place (standard error by default)."""

    def show(done: int, total: int) -> None:
        out = stream or sys.stderr
        width = 30
        filled = width * done // max(total, 1)
        out.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done == total:
            out.write("\n")
        out.flush()

    return show


@dataclass
class LadderRow:
    robot: str
    mu: float
    sigma: float
    ordinal: float
    games: int
    wins: float


@dataclass
class Ladder:
    game: str
    options: dict[str, Any]
    seats: int
    games: int
    seed: int
    rows: list[LadderRow] = field(default_factory=list)

    def table(self) -> str:
        options = ", ".join(f"{value} {key}" for key, value in self.options.items())
        lines = [
            f"OpenSkill ladder of {self.game}"
            + (f" ({options})" if options else "")
            + f": {self.games} games of {self.seats} seats, seed {self.seed}, robots drawn at random each game.",
            f"{'rank':>4}  {'robot':10} {'ordinal':>8} {'mu':>7} {'sigma':>6} {'games':>6} {'win rate':>9}",
        ]
        for rank, row in enumerate(self.rows, 1):
            rate = row.wins / row.games if row.games else 0.0
            lines.append(
                f"{rank:>4}  {row.robot:10} {row.ordinal:8.2f} {row.mu:7.2f} {row.sigma:6.2f} "
                f"{row.games:>6} {rate:9.1%}"
            )
        return "\n".join(lines)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


def ladder(
    game: str,
    seats: int,
    games: int,
    seed: int,
    options: dict[str, Any] | None = None,
    names: Sequence[str] | None = None,
    workers: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> Ladder:
    """Every robot of ``game`` (or ``names``) against the others: each game seats ``seats`` robots
    drawn at random (each at most once while there are enough), and OpenSkill's Plackett-Luce model
    rates them from the results (the winners share first place, everyone else shares second)."""
    from openskill.models import PlackettLuce

    from parlour.robots.registry import robots

    options = options or {}
    pool = list(names or robots(game))
    draw = Random(seed)
    jobs: list[tuple[str, tuple[str, ...], dict[str, Any], int]] = []
    for number in range(games):
        lineup = draw.sample(pool, seats) if len(pool) >= seats else [draw.choice(pool) for _ in range(seats)]
        jobs.append((game, tuple(lineup), options, seed * 1_000_003 + number))
    results = _played(jobs, workers, progress)
    model = PlackettLuce()
    ratings = {name: model.rating(name=name) for name in pool}
    played = dict.fromkeys(pool, 0)
    won = dict.fromkeys(pool, 0.0)
    for (_, seated, _, _), result in zip(jobs, results, strict=True):
        if not result.winners:
            continue  # an unfinished game ranks nobody
        for seat, name in enumerate(seated):
            played[name] += 1
            if seat in result.winners:
                won[name] += 1 / len(result.winners)
        # A robot seated twice (too few robots for the seats) is rated once, by its better seat.
        ranks: dict[str, int] = {}
        for seat, name in enumerate(seated):
            ranks[name] = min(ranks.get(name, 2), 1 if seat in result.winners else 2)
        if len(ranks) < 2:
            continue
        teams = model.rate([[ratings[name]] for name in ranks], ranks=[float(r) for r in ranks.values()])
        for name, team in zip(ranks, teams, strict=True):
            ratings[name] = team[0]
    report = Ladder(
        game=game,
        options={key: str(getattr(value, "value", value)) for key, value in options.items()},
        seats=seats,
        games=games,
        seed=seed,
    )
    for name, rating in ratings.items():
        report.rows.append(
            LadderRow(name, rating.mu, rating.sigma, rating.mu - 3 * rating.sigma, played[name], won[name])
        )
    report.rows.sort(key=lambda row: -row.ordinal)
    return report
