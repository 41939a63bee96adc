"""Soak: many whole games of every protocol against one server, watching its memory.

A ``parlour serve`` subprocess on loopback, with its store on (a fresh SQLite file), plays
``--games`` games (1,000 by default), ``--workers`` at a time, mixed in turn:

- Apologies over the websocket protocol (two games in six): a scripted client against three of
  the server's robots (examples/apologies_client.py);
- ``/async`` games under server rules (Fish, then Tsuro): two signed-in accounts and a robot
  (examples/async_client.py's turn loop; the accounts are made once and reused);
- Fish and Tsuro TCP tables: a scripted client and the server's robots (examples/fish_client.py,
  examples/tsuro_client.py). One table of each game is open at a time, so that every table is
  one client's game.

After every ``--every`` games (100) it prints the server process's resident memory (VmRSS; the
store's writer process apart). It fails (exit 1) if any game fails, or if RSS after the last game
is not within ``--tolerance`` (10%) of RSS at the first report, once warmed up: the check reads
the first report as the baseline. ``--no-check`` prints without judging (a short run's first
report is still warming up). Bounded: every game has a time limit, the run has ``--deadline``.

    python bench/soak.py [--games 1000] [--every 100] [--workers 8] [--seed 1] [--tolerance 0.10]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.processes import BIN, clean_env, free_port, running  # noqa: E402


def example(name: str) -> ModuleType:
    """One of the example clients of examples/, loaded as a module (they are programs, not a package)."""
    spec = importlib.util.spec_from_file_location(f"examples_{name}", ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


APOLOGIES = example("apologies_client")
ASYNC = example("async_client")
FISH = example("fish_client")
TSURO = example("tsuro_client")

#: The game of number n is KINDS[n % len(KINDS)].
KINDS = ("apologies", "async-fish", "fish", "apologies", "async-tsuro", "tsuro")
#: No one game may take longer than this (seconds).
GAME_SECONDS = 60.0


def vm_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


@dataclass
class Soak:
    port: int
    fish_port: int
    tsuro_port: int
    pid: int
    every: int
    rng: random.Random
    #: (player id, name, token) pairs of /async accounts, one pair per worker.
    accounts: list[tuple[tuple[int, str, str], tuple[int, str, str]]] = field(default_factory=list)
    done: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    #: (games played, RSS in KiB) at every report.
    reports: list[tuple[int, int]] = field(default_factory=list)
    tables: dict[str, asyncio.Lock] = field(default_factory=dict)
    kinds: tuple[str, ...] = KINDS

    def finished(self, kind: str) -> None:
        self.done += 1
        self.by_kind[kind] = self.by_kind.get(kind, 0) + 1
        if self.done % self.every == 0:
            rss = vm_rss_kib(self.pid)
            self.reports.append((self.done, rss))
            print(f"{self.done:>6} games  server RSS {rss / 1024:7.1f} MiB", flush=True)


async def async_game(soak: Soak, worker: int, rules: str) -> None:
    """One /async game under server rules: two accounts of this worker and a robot."""
    (_, first_name, first_token), (second_id, second_name, second_token) = soak.accounts[worker]
    server = f"http://127.0.0.1:{soak.port}"
    first = await ASYNC.sign_in(server, first_name, first_token)
    second = await ASYNC.sign_in(server, second_name, second_token)
    try:
        configuration = {"game_type": rules, "rules": rules, "min_players": 3, "max_players": 3}
        invite = {"type": "EngageGameWithFriendsRequest", "friend_ids": [second_id, 0]}
        await first.send(ASYNC.json.dumps(invite | {"configuration": configuration}))
        game_id = (await ASYNC.receive(first, "GameCreatedRequest"))["game_id"]
        await ASYNC.receive(second, "GameCreatedRequest")
        answer = {"type": "AnswerInvitationRequest", "game_id": game_id, "accept": True}
        await second.send(ASYNC.json.dumps(answer))
        rng = random.Random(soak.rng.random())
        await asyncio.gather(
            ASYNC.take_turns(first, game_id, 1, rng), ASYNC.take_turns(second, game_id, 2, rng)
        )
    finally:
        await first.close()
        await second.close()


async def one_game(soak: Soak, number: int, worker: int) -> None:
    kind = soak.kinds[number % len(soak.kinds)]
    if kind == "apologies":
        url = f"ws://127.0.0.1:{soak.port}/"
        game = APOLOGIES.play(url, f"soak{worker}", int(soak.rng.random() * 2**31))
    elif kind.startswith("async-"):
        game = async_game(soak, worker, kind.removeprefix("async-"))
    else:
        # One open table per game: a table that starts with this client alone (and robots) is
        # this client's game, whoever else is connecting.
        lock = soak.tables.setdefault(kind, asyncio.Lock())
        async with lock:
            if kind == "fish":
                await asyncio.wait_for(FISH.play("127.0.0.1", soak.fish_port, 20 + worker), GAME_SECONDS)
            else:
                await asyncio.wait_for(
                    TSURO.play("127.0.0.1", soak.tsuro_port, f"soak{worker}"), GAME_SECONDS
                )
        soak.finished(kind)
        return
    await asyncio.wait_for(game, GAME_SECONDS)
    soak.finished(kind)


async def drive(soak: Soak, games: int, workers: int) -> None:
    numbers = iter(range(games))

    async def worker(index: int) -> None:
        for number in numbers:  # shared: each worker takes the next game number
            await one_game(soak, number, index)

    await asyncio.gather(*(worker(index) for index in range(workers)))


def make_accounts(port: int, workers: int) -> list[tuple[tuple[int, str, str], tuple[int, str, str]]]:
    server = f"http://127.0.0.1:{port}"
    pairs = []
    for index in range(workers):
        pair = []
        for side in "ab":
            name = f"soak{side}{index}"
            player_id, token = ASYNC.sign_up(server, name)
            pair.append((player_id, name, token))
        pairs.append((pair[0], pair[1]))
    return pairs


def serve_command(soak_dir: Path, port: int, fish_port: int, tsuro_port: int) -> list[str]:
    return [
        str(BIN / "parlour"),
        "serve",
        *("--host", "127.0.0.1", "--port", str(port)),
        *("--fish-port", str(fish_port), "--tsuro-port", str(tsuro_port)),
        *("--store", str(soak_dir / "parlour.db"), "--log-level", "WARNING"),
        # Tables start as soon as their one client has joined; robots fill the other seats.
        *("--fish-wait", "0.05", "--tsuro-wait", "0.05", "--tick-seconds", "0.05"),
        *("--fish-robot", "random", "--tsuro-robot", "random"),
        # The scripted clients answer every turn at once, faster than the per-connection rate a
        # person needs: raised out of their way (still checked on every request).
        *("--requests-per-second", "1000"),
        # Finished Apologies games leave the live lobby after a second (the records stay in the
        # store): what is measured is memory that should not grow, not the retention window.
        *("--game-retention", "1", "--obsolete-check-period", "1", "--check-delay", "1"),
    ]


def run(
    games: int,
    every: int,
    workers: int,
    seed: int,
    tolerance: float,
    check: bool,
    deadline: float,
    kinds: tuple[str, ...] = KINDS,
) -> int:
    with tempfile.TemporaryDirectory(prefix="parlour-soak-") as folder:
        soak_dir = Path(folder)
        port, fish_port, tsuro_port = free_port(), free_port(), free_port()
        log_path = soak_dir / "server.log"
        with (
            log_path.open("wb") as log,
            running(serve_command(soak_dir, port, fish_port, tsuro_port), port, log, clean_env()) as process,
        ):
            soak = Soak(port, fish_port, tsuro_port, process.pid, every, random.Random(seed), kinds=kinds)
            made = time.monotonic()
            soak.accounts = make_accounts(port, workers)
            print(f"soak: {2 * workers} accounts made in {time.monotonic() - made:.1f} s", flush=True)
            print(
                f"soak: {games} games, {workers} at a time, seed {seed}; mix {', '.join(kinds)}", flush=True
            )
            started = time.monotonic()
            try:
                asyncio.run(asyncio.wait_for(drive(soak, games, workers), deadline))
            except (TimeoutError, OSError, RuntimeError, KeyError) as error:
                print(f"soak: FAILED after {soak.done} games: {type(error).__name__}: {error}", flush=True)
                return 1
            elapsed = time.monotonic() - started
        text = log_path.read_text()
    counts = ", ".join(f"{kind} {count}" for kind, count in sorted(soak.by_kind.items()))
    print(f"soak: {soak.done} games in {elapsed:.1f} s ({soak.done / elapsed:.1f} games/s): {counts}")
    if "Traceback" in text or " ERROR " in text:
        print("soak: FAILED: the server logged an error:\n" + text[-4000:])
        return 1
    if len(soak.reports) >= 2:
        (first_games, first), (last_games, last) = soak.reports[0], soak.reports[-1]
        change = (last - first) / first
        print(
            f"soak: RSS after game {first_games} {first / 1024:.1f} MiB, after game {last_games} "
            f"{last / 1024:.1f} MiB ({change:+.1%}; allowed {tolerance:.0%})"
        )
        if check and abs(change) > tolerance:
            print("soak: FAILED: the server's memory grew")
            return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000, help="games to play (default: 1000)")
    parser.add_argument("--every", type=int, default=100, help="print RSS every N games (default: 100)")
    parser.add_argument("--workers", type=int, default=8, help="games played at once (default: 8)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the clients' choices (default: 1)")
    parser.add_argument("--tolerance", type=float, default=0.10, help="allowed RSS change (default: 0.10)")
    parser.add_argument("--no-check", dest="check", action="store_false", help="print RSS, judge nothing")
    parser.add_argument(
        "--deadline", type=float, default=1800.0, help="seconds for the whole run (default: 1800)"
    )
    parser.add_argument(
        "--kinds",
        default=",".join(KINDS),
        help=f"the mix, comma-separated, repeated in turn (default: {','.join(KINDS)})",
    )
    args = parser.parse_args(argv)
    kinds = tuple(kind.strip() for kind in args.kinds.split(",") if kind.strip())
    if not kinds or set(kinds) - set(KINDS):
        parser.error(f"--kinds takes {', '.join(sorted(set(KINDS)))}")
    if args.games < 1 or args.every < 1 or args.workers < 1:
        parser.error("--games, --every and --workers must be at least 1")
    return run(
        args.games, args.every, args.workers, args.seed, args.tolerance, args.check, args.deadline, kinds
    )


if __name__ == "__main__":
    sys.exit(main())
