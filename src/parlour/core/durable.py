"""The lobby's records as store rows and back (the store keeps rows, the lobby keeps records).

A game is stored as its configuration, seats, seed and moves; rebuilding it replays the moves
from the seed with the rules plugin, so the state after a restart is exactly the one the
players saw, history included. Move ids derive from the game's secret (stored with it) and
the turn, so a move id a player was sent before a crash can still be played after it.

Replaying every move makes a restart's cost grow with the length of the games. So every
``SNAPSHOT_EVERY`` moves a live game also stores a snapshot: the rules state (encoded by its
plugin, a StateCodec), the state of the game's random source and the moves' times, written in
the same commit as the move it follows. A restart starts from the latest snapshot and replays
only the moves after it; the moves stay stored one by one, the game's replay.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from random import Random
from typing import Any

import msgspec

from parlour.core.records import Game, GameState, Player, PlayerType, Seat, SeatState, Visibility
from parlour.games.base import GamePlugin, StateCodec
from parlour.storage.base import Store, StoreFailure
from parlour.storage.records import (
    REMOVE_SEAT,
    SNAPSHOT_VERSION,
    GameRow,
    GameSnapshotRow,
    MoveRow,
    PlayerGone,
    PlayerRow,
    Record,
    SeatRow,
)

__all__ = [
    "SNAPSHOT_EVERY",
    "LobbyReload",
    "codec_of",
    "encode_options",
    "game_row",
    "player_row",
    "read_back",
    "rebuild",
    "replay",
    "snapshot_row",
]

#: A live game stores a snapshot of its state after every this many moves: a restart replays at
#: most this many minus one moves of a game. Encoding one costs about as much as a few moves'
#: rules (15-30 us for an Apologies game of a few hundred moves, two thirds of it the random
#: source's state), once per this many: 64 rather than 32 took 1-3 us off the event loop's
#: CPU per client move at 20 clients, and added 0.03-0.07 s to restoring 1,000 games.
SNAPSHOT_EVERY = 64

OptionsDecoder = Callable[[Mapping[str, Any]], dict[str, Any]]


def encode_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Options as JSON values (enums by their value)."""
    return {key: value.value if isinstance(value, Enum) else value for key, value in options.items()}


@dataclass(slots=True)
class LobbyReload:
    """What the store holds now for the players and games a failed commit touched, for the
    lobby to return to (None where the store has nothing; a ``failure`` when even the read
    failed, and then only what was read before it)."""

    players: dict[str, PlayerRow | None] = field(default_factory=dict)
    games: dict[str, tuple[GameRow, list[MoveRow]] | None] = field(default_factory=dict)
    failure: StoreFailure | None = None


def read_back(records: Iterable[Record], store: Store) -> LobbyReload:
    """The stored rows of the players and games ``records`` touched (a service's ``reload``,
    run on the store's thread after a failed commit)."""
    reload = LobbyReload()
    try:
        for record in records:
            if type(record) is PlayerRow or type(record) is PlayerGone:
                if record.id not in reload.players:
                    reload.players[record.id] = store.load_player(record.id)
            elif isinstance(record, GameRow | MoveRow):
                game_id = record.id if isinstance(record, GameRow) else record.game_id
                if game_id not in reload.games:
                    reload.games[game_id] = store.load_game(game_id)
    except StoreFailure as failure:
        reload.failure = failure
    return reload


def player_row(player: Player) -> PlayerRow:
    return PlayerRow(player.id, player.handle, player.registered, player.last_active)


def game_row(game: Game, protocol: str) -> GameRow:
    return GameRow(
        id=game.id,
        protocol=protocol,
        game=game.game,
        name=game.name,
        state=game.state.value,
        created=game.created,
        last_active=game.last_active,
        seed=game.seed,
        moves=len(game.times) - 1 if game.times else 0,
        started=game.times[0] if game.times else None,
        finished=game.finished,
        config={
            "options": encode_options(game.options),
            "players": game.players,
            "visibility": game.visibility.value,
            "invited": list(game.invited),
            "advertiser": game.advertiser,
            "turn_secret": game.secret.hex(),
        },
        seats=[
            SeatRow(
                seat.handle,
                seat.kind is PlayerType.PROGRAMMATIC,
                seat.state.value,
                None if seat.player is None else seat.player.id,
            )
            for seat in game.seats
        ],
        result=game.result,
    )


class _Image(msgspec.Struct, array_like=True):
    """A snapshot's document: the plugin's encoding of the rules state, the words of the game's
    random source (Mersenne Twister: 624 words and a position, as ``Random.getstate`` gives
    them), and when the game started then each of its moves was played."""

    play: bytes
    rng: bytes
    times: list[float]
    #: The normal variate ``Random.gauss`` keeps for its next call, if any.
    gauss: float | None = None


_encode_image = msgspec.msgpack.Encoder().encode
_decode_image = msgspec.msgpack.Decoder(_Image).decode
#: ``Random.getstate()``'s version of the Mersenne Twister state.
_MT_VERSION = 3
#: Its words: 624 and the position. Packed by a compiled Struct, which does not parse a
#: format string on every call (3.5 instead of 5.4 us a snapshot); the same bytes.
_MT_WORDS_COUNT = 625
_MT_WORDS = struct.Struct(f"{_MT_WORDS_COUNT}I")


def codec_of(plugin: GamePlugin[Any, Any, Any]) -> StateCodec[Any] | None:
    """The plugin as a StateCodec, if it is one (its games are then snapshotted)."""
    return plugin if isinstance(plugin, StateCodec) else None


def snapshot_row(game: Game, codec: StateCodec[Any]) -> GameSnapshotRow:
    """The snapshot of a started game as it stands (after its last move)."""
    assert game.rng is not None  # set when the game starts
    _, words, gauss = game.rng.getstate()
    # Words fit in 32 bits (the position is at most 624): 4 bytes each, not msgpack's 5. Packed
    # as array("I") lays them out (read back that way), in half its time: no array is made.
    packed = (
        _MT_WORDS.pack(*words) if len(words) == _MT_WORDS_COUNT else struct.pack(f"{len(words)}I", *words)
    )
    image = _Image(codec.encode_state(game.play), packed, game.times, gauss)
    return GameSnapshotRow(game.id, len(game.times) - 1, SNAPSHOT_VERSION, _encode_image(image))


def _from_snapshot(snapshot: GameSnapshotRow, codec: StateCodec[Any]) -> tuple[Any, Random, list[float]]:
    """The rules state, random source and times a snapshot holds."""
    image = _decode_image(snapshot.doc)
    if len(image.times) != snapshot.moves + 1:
        raise ValueError(f"the snapshot of game {snapshot.game_id} does not hold {snapshot.moves} moves")
    # Not Random(): seeding it (from the system's entropy) would be work thrown away.
    rng = Random.__new__(Random)
    rng.setstate((_MT_VERSION, tuple(array("I", image.rng)), image.gauss))
    return codec.decode_state(image.play), rng, image.times


def replay(
    plugin: GamePlugin[Any, Any, Any],
    seats: int,
    options: Mapping[str, Any],
    rng: Random,
    moves: Iterable[MoveRow],
) -> Iterator[tuple[Any, MoveRow | None, Any]]:
    """Every state of a game, from ``rng`` seeded with the game's seed: (state, the move row that
    led to it or None, the move value played). The state object may be updated in place by the
    next step: take what you need of it before advancing. ``rng`` ends as the live game's was."""
    state = plugin.new_game(seats, options, rng)
    yield state, None, None
    yield from _play(plugin, state, rng, moves)


def _play(
    plugin: GamePlugin[Any, Any, Any], state: Any, rng: Random, moves: Iterable[MoveRow]
) -> Iterator[tuple[Any, MoveRow, Any]]:
    """The states after each of ``moves``, played from ``state`` (see ``replay``)."""
    for move in moves:
        if move.kind == REMOVE_SEAT:
            state = plugin.remove_seat(state, move.seat)
            yield state, move, None
            continue
        legal = plugin.legal_moves(state, move.seat)
        if not 0 <= move.choice < len(legal):
            raise ValueError(f"move {move.seq} of game {move.game_id} is not one of the legal moves")
        value = legal[move.choice]
        state = plugin.apply(state, value, rng)
        yield state, move, value


def rebuild(
    row: GameRow,
    moves: Sequence[MoveRow],
    plugin: GamePlugin[Any, Any, Any],
    players: Mapping[str, Player],
    decode_options: OptionsDecoder,
    snapshot: GameSnapshotRow | None = None,
    codec: StateCodec[Any] | None = None,
) -> Game:
    """The live game a row and its moves describe, its humans seated again where they are known:
    from its ``snapshot`` if it has one and the plugin's ``codec`` is given (then only the moves
    after it are played, whether ``moves`` holds only those or every move), else from its seed
    and every move."""
    config = row.config
    game = Game(
        id=row.id,
        name=row.name,
        game=row.game,
        options=decode_options(config.get("options", {})),
        players=int(config["players"]),
        visibility=Visibility(config["visibility"]),
        invited=list(config.get("invited", [])),
        advertiser=str(config["advertiser"]),
        created=row.created,
        last_active=row.last_active,
        state=GameState(row.state),
        seed=row.seed,
        secret=bytes.fromhex(config.get("turn_secret", "")),
        finished=row.finished,
        result=row.result,
    )
    for stored in row.seats:
        player = players.get(stored.player_id) if stored.player_id is not None else None
        kind = PlayerType.PROGRAMMATIC if stored.robot else PlayerType.HUMAN
        game.seats.append(Seat(stored.handle, kind, SeatState(stored.state), player))
    if row.started is None:
        return game
    if snapshot is not None and codec is not None:
        game.play, game.rng, game.times = _from_snapshot(snapshot, codec)
        after = snapshot.moves
        if moves and moves[0].seq < after:
            moves = [move for move in moves if move.seq >= after]
        for now_state, played, _ in _play(plugin, game.play, game.rng, moves):
            game.play = now_state
            game.times.append(played.at)
    else:
        game.rng = Random(row.seed)
        game.times = [row.started]
        for state, move, _ in replay(plugin, len(game.seats), game.options, game.rng, moves):
            game.play = state
            if move is not None:
                game.times.append(move.at)
    # The row is not rewritten on every move: the game was last active at its last move.
    game.last_active = max(game.last_active, game.times[-1])
    return game
