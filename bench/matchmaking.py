"""Quick play's matchmaking: 10,000 players join queues at 200 a second; matches formed
per second, and the time to a match of a player whose equal-rated partner is already queued.

The /async service runs in this process, sans I/O (as bench/lobby.py): sessions are numbers, the
effects the service returns are read, never sent, nothing is stored. Time is simulated, but every
call's cost is real: the service is one owner that does one thing at a time, so an input that
arrives at time t is handled at max(t, when the owner is free) with that time as its clock, and
the owner is busy for as long as the call really took (``time.perf_counter``). A player's time to
a match is from its arrival to the end of the call that sent its QuickPlayMatchedRequest: the
wait in its queue plus any wait behind the ticker and other players' joins.

The players (``--players``, 10,000), one arrival every 1/``--rate`` s (200 a second), each
signed in before the run:

- every 20th arrival is a **probe pair**: an anchor, then at the next arrival its partner, both
  with the same rating, in a queue no one else uses (Fish, 2 seats, ranked): the partner's time
  to a match is the figure the issue targets (p99 < 1 s);
- the others: ratings drawn around 25 (OpenSkill mu, sd 6); 50% Fish for 2, 20% Tsuro for 3,
  10% Apologies for 4, 20% in two queues at once (Fish for 2 and Apologies for 2); half of them
  allow robots after 30 s, the others never.

The ticker runs every ``--tick`` seconds (1, the server's default) until every player is in a
game (a window reaches every rating at most 94 s after its player joined), at most 300 s.

Reported: matches formed per second (over the arrivals' 50 s, and the whole run), players
matched, how the games were filled (people, robots), the p50/p99/max time to a match of the probe
partners and of everyone, the longest tick. The baseline, in the same run, is the way to a started
game that existed before quick play: the same number of Fish games for 2 made by
LobbyCreateGameRequest and LobbyJoinGameRequest, as fast as the service goes; the ratio is the
service's CPU per game of a probe pair's two joins against the baseline's create and join.

    python bench/matchmaking.py [--players 10000] [--rate 200] [--tick 1] [--seed 1]
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import msgspec

from parlour.accounts.tokens import SessionTokens
from parlour.cli import GC_THRESHOLDS
from parlour.core.effects import Broadcast, Effect, Send
from parlour.protocols.async_ws.service import AsyncService
from parlour.protocols.async_ws.state.hub import AsyncLimits
from parlour.storage import RatingRow

MATCHED = b'{"type":"QuickPlayMatchedRequest"'
#: Clients send PingRequest to stay connected (S5); these send nothing once queued, so the
#: silence that closes a connection is made longer than the run instead.
LIMITS = AsyncLimits(ping_timeout=10_000.0)
#: Stop ticking this long after the last arrival even if someone still waits.
LONGEST = 300.0
encode = msgspec.json.encode
decode = msgspec.json.decode


@dataclass
class Owner:
    """The service as one owner: when it is free again (simulated seconds), what it cost."""

    service: AsyncService
    free: float = 0.0
    busy: float = 0.0
    longest_tick: float = 0.0
    #: conn -> (game id, time matched).
    matched: dict[int, tuple[int, float]] = field(default_factory=dict)
    games: dict[int, int] = field(default_factory=dict)  # game id -> robots

    def run(self, at: float, call: Any, *args: Any) -> tuple[float, list[Effect]]:
        start = max(at, self.free)
        began = time.perf_counter()
        effects = call(*args, start) if args else call(start)
        cost = time.perf_counter() - began
        self.free = start + cost
        self.busy += cost
        for effect in effects:
            if type(effect) is Send and effect.data.startswith(MATCHED):
                notice = decode(effect.data)
                self.matched[effect.conn] = (notice["game_id"], self.free)
                self.games[notice["game_id"]] = notice.get("robots", 0)
            elif type(effect) is Broadcast and effect.data.startswith(MATCHED):  # pragma: no cover
                raise AssertionError("a match notice is sent to one player at a time")
        return start, effects


def settle() -> None:
    """The garbage collector as ``parlour serve`` sets it (cli.py): what exists now is frozen,
    the thresholds raised."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def signed_in(service: AsyncService, players: int) -> list[int]:
    """``players`` accounts, each signed in on its own connection (conn = index + 1)."""
    conns = []
    for index in range(players):
        name = f"p{index}"
        account, _ = service.create_account(name, "", 0.0)
        assert account is not None
        token, _ = service.tokens.issue(account.id, name, 0.0)
        conn = index + 1
        service.connected(conn, 0.0)
        service.received(
            conn, encode({"type": "AsyncAuthRequest", "name": name, "sessionToken": token}).decode(), 0.0
        )
        conns.append(conn)
    return conns


def rate(service: AsyncService, conn: int, game_type: str, mu: float) -> None:
    account_id = service.hub.sessions[conn].player_id
    assert account_id is not None
    service.hub.accounts.rate(
        RatingRow(
            account_id=account_id,
            game_type=game_type,
            mu=mu,
            sigma=4.0,
            games=5,
            updated=0.0,
            ordinal=mu - 12,
        )
    )


def join(game_type: str, seats: int, ranked: bool = False, robots_after: int | None = None) -> str:
    message: dict[str, Any] = {
        "type": "QuickPlayJoinRequest",
        "game_type": game_type,
        "seats": seats,
        "ranked": ranked,
    }
    if robots_after is not None:
        message["robots_after"] = robots_after
    return encode(message).decode()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def quick_play(players: int, rate_per_second: float, tick: float, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    service = AsyncService(SessionTokens(b"k" * 32, 86400.0), LIMITS, rng=random.Random(seed))
    conns = signed_in(service, players)
    # What each arrival sends: a list of frames (two for a player in two queues).
    plan: list[list[str]] = []
    probes: set[int] = set()
    index = 0
    while index < players:
        conn = conns[index]
        if index % 20 == 0 and index + 1 < players:
            mu = round(rng.uniform(5, 45), 3)
            partner = conns[index + 1]
            for who in (conn, partner):
                rate(service, who, "fish", mu)
                plan.append([join("fish", 2, ranked=True)])
            probes.add(partner)
            index += 2
            continue
        robots = 30 if rng.random() < 0.5 else None
        for game_type in ("fish", "tsuro", "apologies"):
            rate(service, conn, game_type, rng.gauss(25.0, 6.0))
        draw = rng.random()
        if draw < 0.5:
            plan.append([join("fish", 2, robots_after=robots)])
        elif draw < 0.7:
            plan.append([join("tsuro", 3, robots_after=robots)])
        elif draw < 0.8:
            plan.append([join("apologies", 4, robots_after=robots)])
        else:
            plan.append([join("fish", 2, robots_after=robots), join("apologies", 2, robots_after=robots)])
        index += 1
    owner = Owner(service)
    settle()
    arrived: dict[int, float] = {}
    gap = 1.0 / rate_per_second
    next_tick = tick
    last_arrival = (players - 1) * gap
    for index, frames in enumerate(plan):
        at = index * gap
        while next_tick <= at:
            began = time.perf_counter()
            owner.run(next_tick, service.tick)
            owner.longest_tick = max(owner.longest_tick, time.perf_counter() - began)
            next_tick += tick
        conn = conns[index]
        arrived[conn] = at
        for frame in frames:
            if conn in owner.matched:
                break  # its first queue found a game at once: it asks for no second one
            owner.run(at, service.received, conn, frame)
    while len(service.hub.matchmaker) and next_tick <= last_arrival + LONGEST:
        began = time.perf_counter()
        owner.run(next_tick, service.tick)
        owner.longest_tick = max(owner.longest_tick, time.perf_counter() - began)
        next_tick += tick
    waits = {conn: owner.matched[conn][1] - arrived[conn] for conn in owner.matched}
    in_window = [conn for conn, (_, at) in owner.matched.items() if at <= last_arrival]
    pair_cost = probe_pair_cost(seed, min(2000, players // 2))
    return {
        "players": players,
        "matched": len(owner.matched),
        "unmatched": len(service.hub.matchmaker),
        "games": len(owner.games),
        "games_with_robots": sum(1 for robots in owner.games.values() if robots),
        "arrivals_seconds": last_arrival,
        "matches_in_arrivals": len({owner.matched[conn][0] for conn in in_window}),
        "run_seconds": max((at for _, at in owner.matched.values()), default=0.0),
        "busy": owner.busy,
        "longest_tick": owner.longest_tick,
        "probe_waits": [waits[conn] for conn in probes if conn in waits],
        "all_waits": list(waits.values()),
        "pair_cost": pair_cost,
    }


def probe_pair_cost(seed: int, pairs: int) -> float:
    """The service's CPU per game of ``pairs`` pairs queueing one after the other, each pair
    equal-rated in its own window (the probe pairs' work alone, without the crowd)."""
    service = AsyncService(SessionTokens(b"k" * 32, 86400.0), LIMITS, rng=random.Random(seed))
    conns = signed_in(service, 2 * pairs)
    frame = join("fish", 2, ranked=True)
    settle()
    began = time.process_time()
    for index in range(0, len(conns), 2):
        service.received(conns[index], frame, 1.0)
        effects = service.received(conns[index + 1], frame, 1.0)
        assert any(type(e) is Send and e.data.startswith(MATCHED) for e in effects)
    return (time.process_time() - began) / pairs


def create_and_join(seed: int, pairs: int) -> float:
    """The baseline: the service's CPU per Fish game for 2 made by LobbyCreateGameRequest and
    LobbyJoinGameRequest (the creator's LobbyGameCreatedRequest names the game)."""
    service = AsyncService(SessionTokens(b"k" * 32, 86400.0), LIMITS, rng=random.Random(seed))
    conns = signed_in(service, 2 * pairs)
    create = encode(
        {
            "type": "LobbyCreateGameRequest",
            "configuration": {"game_type": "fish", "rules": "fish", "max_players": 2, "ranked": True},
        }
    ).decode()
    settle()
    began = time.process_time()
    for index in range(0, len(conns), 2):
        effects = service.received(conns[index], create, 1.0)
        created = next(
            decode(e.data) for e in effects if type(e) is Send and b"LobbyGameCreatedRequest" in e.data
        )
        frame = encode({"type": "LobbyJoinGameRequest", "game_id": created["game_id"]}).decode()
        effects = service.received(conns[index + 1], frame, 1.0)
        assert any(type(e) is Send and b"GameCreatedRequest" in e.data for e in effects)
    return (time.process_time() - began) / pairs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--rate", type=float, default=200.0, help="arrivals per second")
    parser.add_argument("--tick", type=float, default=1.0, help="seconds between ticks (tick_seconds)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if not 2 <= args.players <= 100_000 or not 1 <= args.rate <= 100_000 or not 0.05 <= args.tick <= 10:
        parser.error("--players 2..100000, --rate 1..100000, --tick 0.05..10")
    print(f"{args.players} players join queues at {args.rate:.0f}/s; ticker every {args.tick:g} s")
    result = quick_play(args.players, args.rate, args.tick, args.seed)
    probes, everyone = result["probe_waits"], result["all_waits"]
    print(
        f"matched {result['matched']} of {result['players']} players in {result['games']} games "
        f"({result['games_with_robots']} with robots); {result['unmatched']} still waiting "
        "(never with robots, and too few people left for their seat count)"
    )
    print(
        f"matches formed: {result['matches_in_arrivals'] / result['arrivals_seconds']:.1f}/s while players "
        f"arrive ({result['arrivals_seconds']:.1f} s), {result['games'] / result['run_seconds']:.1f}/s "
        f"over the whole run ({result['run_seconds']:.1f} s, the last ones after their windows widened)"
    )
    print(
        f"time to a match, equal-rated partner already queued ({len(probes)} players): "
        f"p50 {percentile(probes, 0.5) * 1000:.2f} ms, p99 {percentile(probes, 0.99) * 1000:.2f} ms, "
        f"max {max(probes) * 1000:.2f} ms (target p99 < 1000 ms)"
    )
    print(
        f"time to a match, everyone: p50 {percentile(everyone, 0.5):.2f} s, p99 {percentile(everyone, 0.99):.2f} s, "
        f"max {max(everyone):.2f} s"
    )
    print(
        f"service busy {result['busy']:.2f} s of the run ({result['busy'] / result['run_seconds']:.1%}); "
        f"longest tick {result['longest_tick'] * 1000:.1f} ms; {result['games'] / result['busy']:.0f} matches per "
        "second of the service's time (what it could form were players to come faster)"
    )
    pairs = min(2000, args.players // 2)
    baseline = create_and_join(args.seed, pairs)
    quick = result["pair_cost"]
    print(
        f"CPU per game for 2: quick play {quick * 1e6:.0f} us (two joins), create + join (baseline) "
        f"{baseline * 1e6:.0f} us: ratio {quick / baseline:.2f}x ({pairs} games each)"
    )
    ok = bool(probes) and percentile(probes, 0.99) < 1.0
    print("OK" if ok else "FAILED: p99 >= 1 s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
