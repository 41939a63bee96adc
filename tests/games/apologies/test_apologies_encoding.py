"""The shortcuts the hot path takes give what the plain code gave: a state's snapshot encoded
from the history it kept is the state encoded whole, and a draw from a ``Random`` is the draw
``randrange`` makes."""

from __future__ import annotations

from random import Random

from parlour.games.apologies import snapshot
from parlour.games.apologies.engine import GameState, apply_move, legal_moves, new_game
from parlour.games.apologies.model import HistoryEntry, Mode
from parlour.games.apologies.snapshot import decode_state, encode_state


def _whole(state: GameState) -> bytes:
    """The state encoded in one go, history included, as snapshots were before."""
    return snapshot._encode(
        snapshot._Stored(
            state.mode,
            state.colors,
            state.pawns,
            state.hands,
            state.draw_pile,
            state.discard,
            state.drawn_card,
            state.to_move,
            state.turns,
            state.history,
            state.winner,
        )
    )


def _play(state: GameState, rng: Random, moves: int) -> None:
    for _ in range(moves):
        if state.winner is not None:
            return
        assert state.to_move is not None
        choices = legal_moves(state, state.to_move)
        apply_move(state, choices[rng.randrange(len(choices))], rng)


def test_a_snapshot_encoded_as_the_history_grows_is_the_state_encoded_whole() -> None:
    for seed, mode in ((1, Mode.STANDARD), (2, Mode.ADULT), (3, Mode.STANDARD)):
        rng = Random(seed)
        state = new_game(4, mode, rng)
        # Every few moves, past 16 and 65,536 bytes' worth of array headers' sizes, to the end.
        while state.winner is None:
            encoded = encode_state(state)
            assert encoded == _whole(state)
            assert encode_state(decode_state(encoded)) == encoded
            _play(state, rng, 1 + seed)
        assert encode_state(state) == _whole(state)


def test_a_history_changed_other_than_by_a_move_is_encoded_anew() -> None:
    rng = Random(4)
    state = new_game(3, Mode.STANDARD, rng)
    _play(state, rng, 20)
    encode_state(state)
    state.history[-1] = HistoryEntry("edited")  # the last entry replaced
    assert encode_state(state) == _whole(state)
    del state.history[5:]  # shortened
    assert encode_state(state) == _whole(state)
    state.history = [HistoryEntry("another list")]
    assert encode_state(state) == _whole(state)
    copy = state.copy()  # a copy keeps nothing of what its original encoded
    copy.history.append(HistoryEntry("the copy's own"))
    assert encode_state(copy) == _whole(copy)
    assert encode_state(state) == _whole(state)


def test_long_histories_get_the_array_headers_msgspec_writes() -> None:
    rng = Random(5)
    state = new_game(2, Mode.STANDARD, rng)
    for count in (14, 15, 16, 17, 65_534, 65_535, 65_536, 65_537):
        state.history = [HistoryEntry(f"entry {index}") for index in range(count - 1)]
        encode_state(state)
        state.history.append(HistoryEntry("one more"))
        assert encode_state(state) == _whole(state)


class _Subclass(Random):
    """A Random of another type: the engine asks its randrange, as for any other source."""


def test_draws_from_a_random_are_those_of_randrange() -> None:
    for seed in range(6):
        mine, theirs = Random(seed), _Subclass(seed)
        first, second = new_game(4, Mode.ADULT, mine), new_game(4, Mode.ADULT, theirs)
        for _ in range(200):
            assert encode_state(first) == encode_state(second)
            _play(first, mine, 1)
            _play(second, theirs, 1)
        assert mine.getstate() == theirs.getstate()
