"""Lobby list pushes in a churning lobby : bytes pushed and server CPU per second of
simulated time, for the seed's whole lists (the old behaviour), the capped lists and the deltas.

The /async service runs in this process, sans I/O: sessions are numbers, time is a number the
bench moves, and the effects the service returns are counted, never sent. For each lobby size
(``--sizes``, 2,000 and 10,000 by default) and each mode:

- ``whole``: clients of the seed protocol with ``async_lobby_list_cap`` 0: every member gets the
  whole player and game lists whenever they change, as before the cap (each list is still
  encoded once for all who get it: what that saves is the service's CPU, not a byte);
- ``capped``: clients of the seed protocol with the default cap (``--cap``, 100): each gets
  the 100 who have waited longest in the lobby, then its buddies there; the oldest open games;
- ``deltas``: clients that opt in (EnterLobbyRequest ``deltas``): the whole lists on entering,
  then LobbyListDeltaRequest.

The lobby is filled with N signed-in members (each with ``--buddies`` buddies among all the
accounts), plus N/10 signed-in accounts outside it. Then, for ``--seconds`` of simulated time
(20), ``--churn`` times a second (20) a random member leaves and a random outsider enters
(EnterLobbyRequest: the lists it gets count), once a second a member opens a game and, past 20
open games, the oldest one's creator withdraws it; the ticker runs every second (lists are pushed
at most every ``async_list_interval``, 2 s). Measured over that window: the bytes of the lobby
lists and deltas the service hands to the transport (a message's bytes times its recipients),
and the CPU time of the service's calls (process time). The transport's cost of writing the
bytes is not in the CPU figure: it grows with the bytes column. Ratios are against ``whole`` in
the same run. In ``deltas`` mode one member also applies every list and delta it gets, and the
run fails if its lists differ from the lobby's at the end.

    python bench/lobby.py [--sizes 2000,10000] [--seconds 20] [--churn 20] [--cap 100]
                          [--buddies 3] [--seed 1]
"""

from __future__ import annotations

import argparse
import base64
import random
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from parlour.accounts.tokens import SessionTokens  # noqa: E402
from parlour.core.effects import Broadcast, Effect, Send  # noqa: E402
from parlour.protocols.async_ws.service import AsyncService  # noqa: E402
from parlour.protocols.async_ws.state.hub import AsyncLimits  # noqa: E402

LISTS = (b'"LobbyPlayerListRequest"', b'"LobbyGameListRequest"', b'"LobbyListDeltaRequest"')
MODES = ("whole", "capped", "deltas")


@dataclass
class Figures:
    size: int
    mode: str
    seconds: float
    list_bytes: int = 0
    messages: int = 0
    cpu: float = 0.0
    consistent: bool | None = None

    @property
    def bytes_per_second(self) -> float:
        return self.list_bytes / self.seconds

    @property
    def cpu_per_second(self) -> float:
        return self.cpu / self.seconds


class Mirror:
    """One member that takes deltas, applying everything it is sent."""

    def __init__(self, conn: int) -> None:
        self.conn = conn
        self.players: dict[int, Any] = {}
        self.games: dict[int, Any] = {}

    def take(self, data: bytes) -> None:
        message = msgspec.json.decode(data)
        kind = message["type"]
        if kind == "LobbyPlayerListRequest":
            self.players = {p["player_id"]: p for p in _inflate(message["player_list"])}
        elif kind == "LobbyGameListRequest":
            self.games = {g["game_id"]: g for g in _inflate(message["game_list"])}
        elif kind == "LobbyListDeltaRequest":
            for player in message.get("players", []):
                self.players[player["player_id"]] = player
            for player_id in message.get("left", []):
                self.players.pop(player_id, None)
            for game in message.get("games", []):
                self.games[game["game_id"]] = game
            for game_id in message.get("closed", []):
                self.games.pop(game_id, None)


def _inflate(text: str) -> list[Any]:
    items: list[Any] = msgspec.json.decode(zlib.decompress(base64.b64decode(text)))
    return items


class Lobby:
    """The service and its clients, driven in simulated time."""

    def __init__(self, size: int, mode: str, cap: int, buddies: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.mode = mode
        limits = AsyncLimits(
            list_cap=0 if mode == "whole" else cap,
            ping_timeout=1e9,
            requests_per_second=1e6,
            max_offers=1000,
        )
        self.service = AsyncService(SessionTokens(b"k" * 32, 1e9), limits, random.Random(seed))
        self.now = 1_000_000.0
        self.figures: Figures | None = None
        self.mirror: Mirror | None = None
        accounts = size + size // 10
        self.conns: dict[int, int] = {}  # account id -> its connection
        letters = "abcdefghijklmnopqrstuvwxyz0123456789_"
        for index in range(accounts):
            # Names as people choose them compress less than numbered ones: random, 5-14 long.
            name = "".join(self.rng.choice(letters) for _ in range(self.rng.randint(4, 13))) + str(index)
            account, _ = self.service.create_account(name, "", self.now)
            assert account is not None
            token, _ = self.service.tokens.issue(account.id, name, self.now)
            conn = index + 1
            self.service.connected(conn, self.now)
            self.send(conn, type="AsyncAuthRequest", name=name, sessionToken=token)
            self.conns[account.id] = conn
        ids = list(self.conns)
        for player_id in ids:
            for other in self.rng.sample(ids, buddies):
                if other != player_id:
                    self.send(
                        self.conns[player_id],
                        type="AsyncBuddyManagementRequest",
                        operation="ADD",
                        player_id=other,
                    )
        # The lobby is filled through its owner (entering one by one would build N lists of up
        # to N players in the whole mode): the first push below sends each member its lists.
        hub = self.service.hub
        self.inside = ids[:size]
        self.outside = ids[size:]
        for player_id in self.inside:
            session = hub.sessions[self.conns[player_id]]
            hub.lobby.take_deltas(session, mode == "deltas")
            hub.lobby.move(session, True)
        if mode == "deltas":
            self.mirror = Mirror(self.conns[self.inside[0]])
            self.inside = self.inside[1:]  # the mirror stays in the lobby
        self.open: list[tuple[int, int]] = []  # (game id, its creator's account id)
        self.tick()

    def send(self, conn: int, **message: Any) -> list[Effect]:
        effects = self.service.received(conn, msgspec.json.encode(message).decode(), self.now)
        self.count(effects)
        return effects

    def tick(self) -> None:
        self.count(self.service.tick(self.now))

    def count(self, effects: list[Effect]) -> None:
        mirror, figures = self.mirror, self.figures
        for effect in effects:
            if type(effect) is Send:
                conns: list[int] = [effect.conn]
            elif type(effect) is Broadcast:
                conns = effect.conns
            else:
                continue
            head = effect.data[:40]
            if not any(kind in head for kind in LISTS):
                continue
            if figures is not None:
                figures.list_bytes += len(effect.data) * len(conns)
                figures.messages += len(conns)
            if mirror is not None and mirror.conn in conns:
                mirror.take(effect.data)

    def churn(self, seconds: int, rate: int) -> Figures:
        """``rate`` leaves and entries a second and a game a second, the ticker every second."""
        figures = self.figures = Figures(len(self.service.hub.lobby), self.mode, float(seconds))
        rng = self.rng
        deltas = self.mode == "deltas"
        started = time.process_time()
        start = self.now
        for second in range(seconds):
            for step in range(rate):
                self.now = start + second + (step + 1) / (rate + 1)
                leaving = self.inside.pop(rng.randrange(len(self.inside)))
                self.send(self.conns[leaving], type="ExitLobbyRequest")
                self.outside.append(leaving)
                entering = self.outside.pop(rng.randrange(len(self.outside)))
                self.send(self.conns[entering], type="EnterLobbyRequest", deltas=deltas)
                self.inside.append(entering)
                if step == 0:
                    self.open_game()
            self.now = start + second + 1
            self.tick()
        figures.cpu = time.process_time() - started
        self.figures = None
        if self.mirror is not None:
            figures.consistent = self.consistent()
        return figures

    def open_game(self) -> None:
        creator = self.rng.choice(self.inside)
        effects = self.send(
            self.conns[creator],
            type="LobbyCreateGameRequest",
            configuration={"game_type": "bench", "max_players": 4},
        )
        for effect in effects:
            if type(effect) is Send and b"LobbyGameCreatedRequest" in effect.data[:40]:
                self.open.append((msgspec.json.decode(effect.data)["game_id"], creator))
        if len(self.open) > 20:
            game_id, owner = self.open.pop(0)
            self.send(self.conns[owner], type="LobbyLeaveGameRequest", game_id=game_id)

    def consistent(self) -> bool:
        """Whether the mirror, after one more push, holds the lobby's lists."""
        self.now += self.service.hub.limits.list_interval
        self.tick()
        assert self.mirror is not None
        hub = self.service.hub
        open_games = {game.id for game in hub.games.values() if game.open}
        return set(self.mirror.players) == set(hub.lobby) and set(self.mirror.games) == open_games


def run(sizes: list[int], seconds: int, churn: int, cap: int, buddies: int, seed: int) -> list[Figures]:
    results = []
    for size in sizes:
        for mode in MODES:
            lobby = Lobby(size, mode, cap, buddies, seed)
            figures = lobby.churn(seconds, churn)
            results.append(figures)
            print(f"  {size:>6} {mode:<7} done", file=sys.stderr, flush=True)
    return results


def table(results: list[Figures]) -> str:
    lines = [
        f"{'lobby':>7} {'mode':<7} {'list bytes/s':>14} {'msgs/s':>9} {'CPU ms/s':>9} "
        f"{'bytes vs whole':>15} {'CPU vs whole':>13}",
    ]
    base: dict[int, Figures] = {}
    for figures in results:
        if figures.mode == "whole":
            base[figures.size] = figures
        whole = base[figures.size]
        lines.append(
            f"{figures.size:>7} {figures.mode:<7} {figures.bytes_per_second:>14,.0f} "
            f"{figures.messages / figures.seconds:>9,.0f} {figures.cpu_per_second * 1000:>9.1f} "
            f"{figures.bytes_per_second / whole.bytes_per_second:>14.4f}x "
            f"{figures.cpu_per_second / whole.cpu_per_second:>12.3f}x"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="2000,10000", help="lobby sizes (default: 2000,10000)")
    parser.add_argument("--seconds", type=int, default=20, help="simulated seconds of churn (default: 20)")
    parser.add_argument("--churn", type=int, default=20, help="leaves and entries a second (default: 20)")
    parser.add_argument(
        "--cap", type=int, default=100, help="async_lobby_list_cap when capped (default: 100)"
    )
    parser.add_argument("--buddies", type=int, default=3, help="buddies per account (default: 3)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the churn (default: 1)")
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    print(
        f"Lobby pushes: {args.seconds} s of churn, {args.churn} leaves and entries/s, a game opened/s, "
        f"cap {args.cap}, {args.buddies} buddies each, list interval "
        f"{AsyncLimits().list_interval:g} s"
    )
    results = run(sizes, args.seconds, args.churn, args.cap, args.buddies, args.seed)
    print(table(results))
    broken = [f"{figures.size}" for figures in results if figures.consistent is False]
    if broken:
        print(f"FAILED: a member taking deltas did not hold the lobby's lists (lobby of {', '.join(broken)})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
