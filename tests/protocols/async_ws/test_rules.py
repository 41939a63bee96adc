"""Server-side rules of /async (docs/async-decisions.md S9):
parlour.protocols.async_ws.game.rules."""

from __future__ import annotations

import json
from random import Random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parlour.games.registry import plugin
from parlour.protocols.async_ws.game import rules as r
from parlour.protocols.async_ws.game.rules import IllegalAction, ServerGame, replay, seat_range, start
from parlour.protocols.async_ws.game.server_game import SNAPSHOT_EVERY, PluginGame
from parlour.storage import SNAPSHOT_VERSION

#: (rules, options) of every variant played below: both Apologies modes, both Tsuro deals.
VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("apologies", {}),
    ("apologies", {"mode": "ADULT"}),
    ("fish", {}),
    ("tsuro", {}),
    ("tsuro", {"deal": "cyclic"}),
]
#: Every seat count of every game under its default options, and one more for the other variants
#: (Tsuro's cyclic deal makes its robot look further ahead: the slowest games here).
GAMES = [
    pytest.param(
        rules, seats, options, id=f"{rules}-{seats}-{'-'.join(map(str, options.values())) or 'default'}"
    )
    for rules, options in VARIANTS
    for seats in range(seat_range(rules)[0], seat_range(rules)[1] + 1)
    if not options or seats == seat_range(rules)[0] + 1
]
#: Far more turns than any game needs: a game that runs past it is a bug.
MAX_TURNS = 2000


def snapshot(game: ServerGame) -> tuple[Any, ...]:
    """Everything observable about a game."""
    views = tuple(game.view(seat) for seat in (None, *range(1, game.seats + 1)))
    legal = tuple(tuple(game.legal_actions(seat)) for seat in range(1, game.seats + 1))
    return game.to_move(), views, legal, tuple(game.actions), game.outcome()


def check_tsuro_first_placements(game: ServerGame) -> None:
    """The adapter's fast listing of first placements is exactly the plugin's own."""
    state = game._state  # type: ignore[attr-defined]
    seat = game.to_move()
    assert seat is not None
    if state.players[seat - 1].at is None:
        assert r._first_placements(state, seat - 1) == plugin("tsuro").legal_moves(state, seat - 1)


def robot_game(rules: str, seats: int, seed: int, options: dict[str, Any]) -> ServerGame:
    """A whole game played by robots through ServerGame alone, checking every turn on the way."""
    game = start(rules, seats, seed, options)
    for _ in range(MAX_TURNS):
        mover = game.to_move()
        if mover is None:
            break
        legal = game.legal_actions(mover)
        assert legal and len(set(legal)) == len(legal)
        assert all(game.legal_actions(seat) == [] for seat in range(1, seats + 1) if seat != mover)
        if rules == "tsuro":
            check_tsuro_first_placements(game)
        action = game.robot_action(mover)
        assert action in legal
        game.apply(action)
    else:
        pytest.fail(f"{rules} did not end within {MAX_TURNS} turns")
    return game


@pytest.mark.parametrize(("rules", "seats", "options"), GAMES)
def test_robots_play_a_whole_game_and_replay_reproduces_it(
    rules: str, seats: int, options: dict[str, Any]
) -> None:
    seed = 1000 + seats
    game = robot_game(rules, seats, seed, options)
    outcome = game.outcome()
    assert outcome is not None
    assert sorted(outcome) == list(range(1, seats + 1))
    ranks = sorted(rank for _, rank in outcome.values())
    assert ranks[0] == 1
    for seat, (score, rank) in outcome.items():  # ties share a rank; the next rank skips
        assert rank == 1 + sum(1 for other, (s, _) in outcome.items() if other != seat and s > score)
    assert game.legal_actions(1) == []
    with pytest.raises(IllegalAction):
        game.apply(game.actions[-1])
    # The replay: same views for every seat, same outcome, same record.
    again = replay(rules, seats, seed, game.actions, options)
    assert snapshot(again) == snapshot(game)
    # Same seed, same robots: the very same game.
    assert robot_game(rules, seats, seed, options).actions == game.actions


@pytest.mark.parametrize(("rules", "options"), VARIANTS)
def test_robot_choices_depend_on_the_position_only(rules: str, options: dict[str, Any]) -> None:
    seats = seat_range(rules)[0] + 1
    game = robot_game(rules, seats, 7, options)
    for turn in (0, 3, len(game.actions) // 2, len(game.actions) - 1):
        rebuilt = replay(rules, seats, 7, game.actions[:turn], options)
        mover = rebuilt.to_move()
        assert mover is not None
        assert rebuilt.robot_action(mover) == rebuilt.robot_action(mover) == game.actions[turn]
        assert rebuilt.actions == game.actions[:turn]  # asking a robot changes nothing


@pytest.mark.parametrize(("rules", "options"), VARIANTS)
def test_illegal_and_stale_actions_change_nothing(rules: str, options: dict[str, Any]) -> None:
    seats = seat_range(rules)[0]
    game = start(rules, seats, 3, options)
    played: list[str] = []
    for turn in range(12):
        mover = game.to_move()
        assert mover is not None
        legal = game.legal_actions(mover)
        before = snapshot(game)
        stale = [action for action in played if action not in legal]
        wrong = [
            "",
            "pass",
            legal[0] + " ",
            legal[0].upper(),
            "0",  # an index into the list is not an action
            "remove 1",  # removals are replayed, never committed
            *stale[-3:],
        ]
        for action in wrong:
            with pytest.raises(IllegalAction):
                game.apply(action)
            assert snapshot(game) == before
        with pytest.raises(ValueError, match="not to move"):
            game.robot_action(mover % seats + 1)
        action = legal[Random(turn).randrange(len(legal))]
        game.apply(action)
        played.append(action)


@pytest.mark.parametrize(("rules", "seats", "options"), GAMES)
def test_the_spectator_sees_what_every_seat_sees_without_its_secrets(
    rules: str, seats: int, options: dict[str, Any]
) -> None:
    game = start(rules, seats, 11, options)
    for turn in range(40):
        mover = game.to_move()
        if mover is None:
            break
        spectator = json.loads(game.view(None))
        assert "you" not in spectator
        assert spectator["game"] == rules and spectator["turn"] == mover
        assert [player["id"] for player in spectator["players"]] == list(range(1, seats + 1))
        for seat in range(1, seats + 1):
            mine = json.loads(game.view(seat))
            you = mine.pop("you")
            assert you["id"] == seat
            assert mine == spectator  # a seat's view is the public view plus its own part
            secret = you.get("hand", [])
            if rules == "tsuro":
                state = game._state  # type: ignore[attr-defined]
                assert secret == (list(state.hand) if seat == mover else [])
                holder = spectator["players"][mover - 1]
                assert holder["hand_size"] == len(state.hand)
                assert all(p["hand_size"] == 0 for p in spectator["players"] if p["id"] != mover)
            if rules == "apologies" and options.get("mode") == "ADULT":
                assert len(secret) == 5 == spectator["players"][seat - 1]["hand_size"]
            if rules == "fish":
                assert you == {"id": seat}
        legal = game.legal_actions(mover)
        game.apply(legal[Random(turn).randrange(len(legal))])


def test_tsuro_spectators_never_see_a_tile_in_hand() -> None:
    game = start("tsuro", 4, 5)
    for turn in range(30):
        state = game._state  # type: ignore[attr-defined]
        spectator = json.loads(game.view(None))
        for seat in range(1, 5):
            assert json.loads(game.view(seat))["you"]["hand"] == (
                list(state.hand) if seat == game.to_move() else []
            )
        assert "hand" not in json.dumps(spectator).replace("hand_size", "")
        legal = game.legal_actions(game.to_move() or 0)
        game.apply(legal[Random(turn).randrange(len(legal))])


def test_action_forms() -> None:
    apologies = start("apologies", 2, 1)
    actions = apologies.legal_actions(apologies.to_move() or 0)
    assert all(a.startswith(("play ", "forfeit ")) for a in actions)
    fish = start("fish", 2, 1)
    assert fish.legal_actions(1)[:2] == ["place 0,0", "place 0,1"]
    for _ in range(8):
        fish.apply(fish.robot_action(fish.to_move() or 0))
    assert all(a.startswith("move ") and len(a.split()) == 3 for a in fish.legal_actions(fish.to_move() or 0))
    tsuro = start("tsuro", 3, 1)
    first = tsuro.legal_actions(1)
    assert all(a.startswith("tile ") and " port " in a for a in first)
    for _ in range(3):
        tsuro.apply(tsuro.robot_action(tsuro.to_move() or 0))
    later = tsuro.legal_actions(tsuro.to_move() or 0)
    assert later and all(" port " not in a for a in later)
    text = later[0].split()
    assert text[0] == "tile" and text[2] == "rotation" and text[3] in {"0", "90", "180", "270"}


def test_start_checks_its_arguments() -> None:
    assert r.RULES == ("apologies", "fish", "tsuro")
    assert [seat_range(name) for name in r.RULES] == [(2, 4), (2, 4), (3, 5)]
    with pytest.raises(ValueError, match="choose from apologies, fish, tsuro"):
        start("chess", 2, 1)
    with pytest.raises(ValueError, match="3 to 5 players"):
        start("tsuro", 2, 1)
    with pytest.raises(ValueError, match="2 to 4 players"):
        start("fish", 5, 1)
    with pytest.raises(ValueError, match="unknown apologies option 'speed'"):
        start("apologies", 2, 1, {"speed": 3})
    with pytest.raises(ValueError, match="'mode' must be one of"):
        start("apologies", 2, 1, {"mode": "FAST"})
    with pytest.raises(ValueError, match="'rows'"):
        start("fish", 2, 1, {"rows": 0})
    assert start("tsuro", 3, 1).options == {"deal": "random"}
    assert start("fish", 2, 1, {"fish": 2}).options == {"rows": 5, "columns": 5, "holes": 0, "fish": 2}
    game = start("fish", 2, 1)
    with pytest.raises(ValueError, match="not a seat"):
        game.view(3)


@pytest.mark.parametrize("rules", ["fish", "tsuro"])
def test_removed_seats_rank_last_and_replay(rules: str) -> None:
    seats = 3
    game = start(rules, seats, 21)
    for _ in range(6):
        game.apply(game.robot_action(game.to_move() or 0))
    leaving = game.to_move() or 0
    game.remove_seat(leaving)
    assert game.actions[-1] == f"remove {leaving}"
    assert game.to_move() != leaving
    game.remove_seat(leaving)  # a second time: nothing to do, nothing recorded
    assert game.actions.count(f"remove {leaving}") == 1
    view = json.loads(game.view(None))
    if rules == "fish":
        assert view["players"][leaving - 1]["removed"] and leaving not in view["order"]
    else:
        assert view["players"][leaving - 1]["state"] == "EJECTED"
    while (mover := game.to_move()) is not None:
        assert mover != leaving
        game.apply(game.robot_action(mover))
    outcome = game.outcome()
    assert outcome is not None and outcome[leaving][1] == max(rank for _, rank in outcome.values())
    assert outcome[leaving][1] > 1
    assert snapshot(replay(rules, seats, 21, game.actions)) == snapshot(game)
    game.remove_seat(1)  # over: nothing to do
    assert snapshot(replay(rules, seats, 21, game.actions)) == snapshot(game)


def test_apologies_seats_are_never_removed() -> None:
    game = start("apologies", 2, 1)
    with pytest.raises(ValueError, match="played by robots"):
        game.remove_seat(1)
    assert game.actions == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    variant=st.sampled_from(VARIANTS),
    seats=st.integers(0, 2),
    seed=st.integers(-(2**63), 2**63),
    choices=st.randoms(use_true_random=False),
)
def test_random_legal_play_never_raises(
    variant: tuple[str, dict[str, Any]], seats: int, seed: int, choices: Random
) -> None:
    rules, options = variant
    low, high = seat_range(rules)
    count = min(low + seats, high)
    game = start(rules, count, seed, options)
    for _ in range(150):
        mover = game.to_move()
        if mover is None:
            assert game.outcome() is not None
            break
        assert game.outcome() is None
        legal = game.legal_actions(mover)
        assert legal
        game.apply(choices.choice(legal))
        json.loads(game.view(choices.choice([None, *range(1, count + 1)])))
    assert snapshot(replay(rules, count, seed, game.actions, options)) == snapshot(game)


def counting_replay(monkeypatch: pytest.MonkeyPatch, *args: Any, **kwargs: Any) -> tuple[ServerGame, int]:
    """``replay(*args, **kwargs)`` and how many actions it applied to rebuild the game."""
    applied = 0
    apply = PluginGame.apply

    def counted(self: PluginGame[Any, Any], action: str) -> None:
        nonlocal applied
        applied += 1
        apply(self, action)

    monkeypatch.setattr(PluginGame, "apply", counted)
    game = replay(*args, **kwargs)
    monkeypatch.setattr(PluginGame, "apply", apply)
    return game, applied


@pytest.mark.parametrize("options", [{}, {"mode": "ADULT"}], ids=["standard", "adult"])
def test_a_game_resumes_from_its_snapshot_whatever_its_length(
    monkeypatch: pytest.MonkeyPatch, options: dict[str, Any]
) -> None:
    """The record keeps a snapshot every SNAPSHOT_EVERY actions (as the service does): rebuilt
    from it, a game replays fewer actions than that at any length, and is the game it was."""
    seats, seed = 4, 11
    game = start("apologies", seats, seed, options)
    image: bytes | None = None
    replayed: list[int] = []
    while (mover := game.to_move()) is not None:
        if len(game.actions) % 11 == 3:
            again, applied = counting_replay(
                monkeypatch, "apologies", seats, seed, game.actions, options, snapshot=image
            )
            assert snapshot(again) == snapshot(game)
            assert again.robot_action(mover) == game.robot_action(mover)
            replayed.append(applied)
        game.apply(game.robot_action(mover))
        if len(game.actions) % SNAPSHOT_EVERY == 0:
            image = game.snapshot()
            assert image is not None
    assert len(game.actions) > 4 * SNAPSHOT_EVERY  # long enough to show that nothing grows
    assert max(replayed) < SNAPSHOT_EVERY
    # Without its snapshot the same record replays every action.
    _, applied = counting_replay(monkeypatch, "apologies", seats, seed, game.actions, options)
    assert applied == len(game.actions)
    # A view after the snapshot shows the movers of the actions before it (``recent``).
    assert (
        json.loads(again.view(None))["recent"]
        == json.loads(replay("apologies", seats, seed, again.actions, options).view(None))["recent"]
    )


def test_a_snapshot_that_does_not_fit_its_record_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    game = robot_game("apologies", 4, 5, {})
    played = game.actions
    early = replay("apologies", 4, 5, played[:SNAPSHOT_EVERY])
    image = early.snapshot()
    assert image is not None
    # A record shorter than its snapshot (not written by Parlour), or a snapshot of another
    # encoding, or not a snapshot: every action is replayed.
    for record, stored in (
        (played[: SNAPSHOT_EVERY - 1], image),
        (played, image.replace(bytes([SNAPSHOT_VERSION]), bytes([SNAPSHOT_VERSION + 1]), 1)),
        (played, b"\x00garbage"),
    ):
        again, applied = counting_replay(monkeypatch, "apologies", 4, 5, record, snapshot=stored)
        assert applied == len(record)
        assert snapshot(again) == snapshot(replay("apologies", 4, 5, record))
    # Fish and Tsuro have no state codec (their games are bounded by their boards): no snapshot.
    assert robot_game("fish", 2, 5, {}).snapshot() is None
