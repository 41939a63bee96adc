"""Seeded Apologies games played through the lobby with its journal on, and what a restart makes
of their rows: shared by the snapshot tests of the core and of the stores."""

from __future__ import annotations

from random import Random
from typing import Any

from parlour.core.events import Event
from parlour.core.ids import IdSource
from parlour.core.lobby import Lobby
from parlour.core.records import Game, GameState, Visibility
from parlour.games.apologies.model import Mode
from parlour.protocols.apologies_ws.service import decode_options
from parlour.settings import Settings
from parlour.storage import GameRow, GameSnapshotRow, MoveRow, PlayerRow, Record, Snapshot

__all__ = ["T0", "continue_both", "played", "restored", "same_game"]

T0 = 1_800_000_000.0


class Quiet:
    """Nobody is connected: every event is dropped."""

    def send(self, conns: Any, event: Event) -> None:
        pass

    def close(self, conn: Any, code: int, reason: str) -> None:
        pass


def lobby_of(seed: int, every: int) -> Lobby:
    lobby = Lobby(Settings(robot="random"), Random(seed), Quiet(), "apologies", ids=IdSource(seed))
    lobby.journal.recording = True
    lobby.turns.snapshot_every = every
    return lobby


def played(
    seed: int, seats: int, mode: Mode, stop: int, every: int, commit: Any = None
) -> tuple[Lobby, Game, list[Record]]:
    """A game of one human (random moves) and robots, played until at least ``stop`` moves (on
    the human's turn) or its end, snapshotted every ``every`` moves; its records, also given to
    ``commit`` after each request when it is set (as a server commits each loop iteration)."""
    lobby, pick = lobby_of(seed, every), Random(seed + 1)
    records: list[Record] = []

    def take() -> None:
        batch = lobby.journal.take()
        records.extend(batch)
        if commit is not None:
            commit(batch)

    now = T0
    player = lobby.register(1, "ann", now)
    game = lobby.advertise(player, "g", {"mode": mode}, seats, Visibility.PRIVATE, [], now)
    lobby.start(player, now)
    take()
    while game.state is GameState.PLAYING and len(game.times) - 1 < stop:
        now += pick.uniform(0.5, 3.0)
        lobby.execute(player, pick.choice(list(game.pending)), now)
        take()
    return lobby, game, records


def restored(snapshot: Snapshot, seed: int) -> Lobby:
    """A lobby restarted on what ``snapshot`` holds, a minute after T0's game."""
    lobby = lobby_of(seed, 1_000_000)
    lobby.restore(snapshot, T0 + 60.0, decode_options)
    return lobby


def rows_of(records: list[Record], latest_snapshot: bool) -> Snapshot:
    """What load_live reads of ``records``: with the latest snapshot and the moves after it, or
    (``latest_snapshot`` false) every move, as before snapshots."""
    players = {r.id: r for r in records if isinstance(r, PlayerRow)}
    games = {r.id: r for r in records if isinstance(r, GameRow)}
    states = {r.game_id: r for r in records if isinstance(r, GameSnapshotRow)} if latest_snapshot else {}
    moves = {
        game_id: [
            m
            for m in records
            if isinstance(m, MoveRow)
            and m.game_id == game_id
            and m.seq >= getattr(states.get(game_id), "moves", 0)
        ]
        for game_id in games
    }
    return Snapshot(list(players.values()), list(games.values()), moves, T0, states)


def _state(game: Game) -> tuple[Any, ...]:
    play = game.play
    return (
        play.mode,
        play.colors,
        play.pawns,
        play.hands,
        play.draw_pile,
        play.discard,
        play.drawn_card,
        play.to_move,
        play.turns,
        play.history,
        play.winner,
        play.squares,
    )


def same_game(one: Game, other: Game) -> None:
    """The two games stand at the same point: rules state, random source, times, the turn offered."""
    assert _state(one) == _state(other)
    assert one.rng is not None and other.rng is not None
    assert one.rng.getstate() == other.rng.getstate()
    assert one.times == other.times
    assert (one.pending_seat, list(one.pending)) == (other.pending_seat, list(other.pending))
    assert (one.state, one.last_active) == (other.state, other.last_active)


def continue_both(one: Lobby, other: Lobby, game_id: str, moves: int, seed: int) -> None:
    """Play the same human choices in both lobbies' copies of the game: they stay the same."""
    pick = Random(seed)
    now = T0 + 100.0
    for _ in range(moves):
        first, second = one.games[game_id], other.games[game_id]
        if first.state is not GameState.PLAYING:
            break
        now += 1.0
        choice = pick.randrange(len(first.pending))
        for lobby, game in ((one, first), (other, second)):
            player = game.seats[0].player
            assert player is not None
            lobby.execute(player, list(game.pending)[choice], now)
        same_game(first, second)
