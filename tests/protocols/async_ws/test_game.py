"""A game of /async as a unit (game/): plans, refusals and transitions, with no socket and no hub.

The games speak to a recording host (game/host.py's GameHost), so what a transition tells the
rest of /async is read back directly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from parlour.core.ids import IdSource
from parlour.protocols.async_ws.game import machine
from parlour.protocols.async_ws.game.checks import WindowDue
from parlour.protocols.async_ws.game.game_registry import Games
from parlour.protocols.async_ws.game.host import GameHost, Notice, SeatRating
from parlour.protocols.async_ws.game.machine import Game
from parlour.protocols.async_ws.game.model import encode_game
from parlour.protocols.async_ws.game.plans import (
    Action,
    Commit,
    Confirm,
    Forfeit,
    Invite,
    Join,
    Leave,
    Refusal,
    Start,
)
from parlour.protocols.async_ws.wire.limits import AsyncLimits
from parlour.protocols.async_ws.wire.messages import (
    AnswerInvitationRequest,
    CommitActionRequest,
    EngageGameWithFriendsRequest,
    GameConfiguration,
    GameOverRequest,
    InterruptActionRequest,
    LobbyCreateGameRequest,
    LobbyJoinGameRequest,
    ServerMessage,
    ShownRating,
)
from parlour.storage import AsyncGameRow, AsyncTurnRow, GameResultRow

GAME = Path(machine.__file__).parent  # the game package of /async

NOW = 1_000.0
ANN, BOB, CID = 1, 2, 3


def rated(change: float) -> SeatRating:
    """A made-up rating change: the ordinal's ``change``, shown as 10 points per unit."""
    return SeatRating(
        change, ShownRating(rating=1500 + int(10 * change), change=int(10 * change)), 25 + change, 8.0, 1
    )


class Host:
    """Every account exists and is online unless said otherwise; everything said is kept."""

    def __init__(self) -> None:
        self.away: set[int] = set()
        self.ignoring: set[tuple[int, int]] = set()
        self.sent: list[tuple[int, ServerMessage]] = []
        self.notices: list[tuple[int, Notice, int | None]] = []
        self.watching: dict[int, list[int]] = {}
        self.lobby_left: list[tuple[int, list[int]]] = []
        self.lists = 0
        self.results: list[GameResultRow] = []

    def online(self, player_id: int) -> bool:
        return player_id not in self.away

    def name(self, player_id: int) -> str | None:
        return None if player_id > 100 else f"p{player_id}"

    def ignores(self, player_id: int, other: int) -> bool:
        return (player_id, other) in self.ignoring

    def send(self, player_id: int | None, message: ServerMessage) -> bool:
        if player_id is None or not self.online(player_id):
            return False
        self.sent.append((player_id, message))
        return True

    def send_many(self, player_ids: Sequence[int], message: ServerMessage) -> None:
        for player_id in dict.fromkeys(player_ids):
            self.send(player_id, message)

    def observers(self, game_id: int) -> Sequence[int]:
        return self.watching.get(game_id, [])

    def notify(
        self,
        player_id: int,
        kind: Notice,
        game_id: int,
        turn_index: int,
        now: float,
        about: int | None = None,
        text: str | None = None,
    ) -> int:
        if self.online(player_id):
            return 0
        self.notices.append((player_id, kind, about))
        return 1

    def rate(
        self, game_type: str, players: Sequence[int | None], ranks: Sequence[int], now: float
    ) -> list[SeatRating | None]:
        return [rated(1.0 if rank == 1 else -1.0) for rank in ranks]

    def penalise(self, game_type: str, players: Sequence[int | None], now: float) -> list[SeatRating | None]:
        return [rated(-2.0) for _ in players]

    def ended(self, results: Sequence[GameResultRow]) -> None:
        self.results.extend(results)

    def started(self, game_id: int, player_ids: Sequence[int]) -> None:
        self.lobby_left.append((game_id, list(player_ids)))

    def lists_changed(self, game_id: int | None = None) -> None:
        self.lists += 1

    def types(self, player_id: int) -> list[str]:
        return [type(message).__name__ for to, message in self.sent if to == player_id]


def registry(outcome_retention: float = 7 * 86400.0) -> tuple[Games, Host]:
    host = Host()
    typed: GameHost = host  # the recording host is a GameHost
    return Games(typed, AsyncLimits(outcome_retention=outcome_retention), IdSource(7)), host


def open_game(games: Games, *players: int, **config: object) -> Game:
    """An open game of ``players`` (the first creates it), started once full."""
    configuration = GameConfiguration(game_type="test", max_players=len(players), **config)  # type: ignore[arg-type]
    plan = games.plan_create(players[0], LobbyCreateGameRequest(configuration=configuration))
    assert not isinstance(plan, Refusal)
    game = games.create(plan, NOW)
    for player in players[1:]:
        join = game.plan_join(player, games.playing(player), LobbyJoinGameRequest(game_id=game.id))
        assert isinstance(join, Join)
        game.join(join, NOW)
    return game


def commit(game: Game, player: int, **fields: object) -> Commit | Action | Refusal:
    return game.plan_commit(player, CommitActionRequest(game_id=game.id, **fields))  # type: ignore[arg-type]


# -- Plans change nothing ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("player", "fields", "code"),
    [
        (BOB, {"next_state": "s", "next_players": [1]}, "NOT_YOUR_TURN"),
        (ANN, {"next_state": "s", "next_players": [2], "turn_index": 5}, "INDEX_CONFLICT"),
        (ANN, {"next_state": "s", "next_players": [9]}, "UNKNOWN_PLAYER"),
        (ANN, {"next_state": "s"}, "BAD_REQUEST"),
        (ANN, {"action": "x", "next_players": [2]}, "BAD_REQUEST"),
        (ANN, {"next_state": "s", "next_players": [2], "pause_time": 99}, "BAD_REQUEST"),
        (ANN, {"next_state": "s", "player_id": 2, "next_players": [1]}, "NOT_YOUR_TURN"),
        (99, {"next_state": "s", "next_players": [2]}, "UNKNOWN_PLAYER"),
    ],
)
def test_a_refused_commit_leaves_the_game_byte_identical(
    player: int, fields: dict[str, object], code: str
) -> None:
    games, host = registry()
    game = open_game(games, ANN, BOB)
    before, sent = encode_game(game.record), len(host.sent)
    refusal = commit(game, player, **fields)
    assert isinstance(refusal, Refusal) and refusal.code == code and refusal.message
    assert encode_game(game.record) == before
    assert len(host.sent) == sent  # a refusal is the handler's to send


def test_a_planned_commit_changes_nothing_until_it_is_applied() -> None:
    games, host = registry()
    game = open_game(games, ANN, BOB)
    games.take_records()
    before = encode_game(game.record)
    plan = commit(game, ANN, next_state="s1", next_players=[2], broadcast=True)
    assert isinstance(plan, Commit) and (plan.acting, plan.sender, plan.opens) == (1, 1, "TURN")
    with pytest.raises(AttributeError):
        plan.acting = 2  # type: ignore[misc]
    assert encode_game(game.record) == before and games.take_records() == []
    game.commit(plan, NOW + 1)
    record = game.record
    assert (record.turn_index, record.turn, record.state) == (2, 2, "s1")
    assert host.types(ANN)[-1] == "ActionCommitedRequest"
    assert host.types(BOB)[-2:] == ["GameStateUpdatedRequest", "ActionRequiredRequest"]
    rows = games.take_records()
    assert [type(row) for row in rows] == [AsyncGameRow, AsyncTurnRow]  # the game once, then its turn


def test_a_commit_that_opens_a_phase_says_so_in_its_plan() -> None:
    games, _ = registry()
    game = open_game(games, ANN, BOB, CID)
    simultaneous = commit(game, ANN, next_state="s", next_simultaneous=True, simultaneous_players=[2, 3])
    window = commit(
        game,
        ANN,
        next_state="s",
        next_players=[2],
        interruption_window_duration=500,
        interruption_players=[2],
    )
    assert isinstance(simultaneous, Commit) and simultaneous.opens == "SIMULTANEOUS"
    assert isinstance(window, Commit) and window.opens == "INTERRUPTION"
    game.commit(window, NOW)
    assert game.record.phase == "INTERRUPTION"
    late = game.plan_interrupt(BOB, InterruptActionRequest(game_id=game.id, turn_index=2, turn=1), NOW + 1)
    assert isinstance(late, WindowDue) and game.record.phase == "INTERRUPTION"  # planned, not closed
    game.close_due_window(NOW + 1)
    assert (game.record.phase, game.record.turn) == ("TURN", 2)


# -- Each transition's status -----------------------------------------------------------------------


def test_a_full_game_starts_and_its_players_leave_the_lobby() -> None:
    games, host = registry()
    game = open_game(games, ANN, BOB)
    assert game.status == "RUNNING" and game.record.turn == 1
    assert host.lobby_left == [(game.id, [ANN, BOB])]
    assert host.types(ANN)[-2:] == ["ClientChatRequest", "ActionRequiredRequest"]
    assert games.live_games(ANN) == [game.record] and games.offers(ANN) == 0


def test_start_early_and_its_refusals() -> None:
    games, host = registry()
    configuration = GameConfiguration(game_type="test", min_players=2, max_players=3)
    plan = games.plan_create(ANN, LobbyCreateGameRequest(configuration=configuration))
    assert not isinstance(plan, Refusal)
    game = games.create(plan, NOW)
    assert games.offers(ANN) == 1 and host.lists == 1
    assert game.plan_start(BOB, None) == Refusal("NOT_CREATOR")
    assert game.plan_start(ANN, None) == Refusal("NOT_ENOUGH_PLAYERS")
    join = game.plan_join(BOB, 0, LobbyJoinGameRequest(game_id=game.id))
    assert isinstance(join, Join) and not join.starts
    game.join(join, NOW)
    assert game.plan_join(BOB, 1, LobbyJoinGameRequest(game_id=game.id)) == Refusal("ALREADY_JOINED")
    start = game.plan_start(ANN, "r1")
    assert start == Start(ANN, "r1")
    game.start(start, NOW)
    assert game.status == "RUNNING"
    assert game.plan_start(ANN, None) == Refusal("ALREADY_STARTED")
    assert game.plan_join(CID, 0, LobbyJoinGameRequest(game_id=game.id)) == Refusal("ALREADY_STARTED")


def test_leaving_an_open_game_and_the_creator_aborting_it() -> None:
    games, _ = registry()
    configuration = GameConfiguration(game_type="test", max_players=3)
    plan = games.plan_create(ANN, LobbyCreateGameRequest(configuration=configuration))
    assert not isinstance(plan, Refusal)
    game = games.create(plan, NOW)
    join = game.plan_join(BOB, 0, LobbyJoinGameRequest(game_id=game.id))
    assert isinstance(join, Join)
    game.join(join, NOW)
    leave = game.plan_leave(BOB, None)
    assert leave == Leave(BOB, None, "LEAVE")
    game.leave(leave, NOW)
    assert [seat.player_id for seat in game.record.seats] == [ANN] and games.playing(BOB) == 0
    abort = game.plan_forfeit(ANN, None)  # quitting a game that has not started leaves it
    assert abort == Leave(ANN, None, "ABORT")
    game.leave(abort, NOW)
    assert game.status == "ABORTED" and games.playing(ANN) == 0
    assert game.plan_leave(ANN, None) == Refusal("UNKNOWN_GAME", "you are in no open game with this id")


def test_forfeits_abort_the_game_and_the_confirmations_close_it() -> None:
    games, host = registry()
    game = open_game(games, ANN, BOB, ranked=True)
    first = game.plan_forfeit(BOB, "f")
    assert first == Forfeit(2, "f")
    game.forfeit(first, NOW)
    assert game.status == "RUNNING" and game.record.seats[1].state == "FORFEITED"
    assert game.plan_forfeit(BOB, None) == Refusal("YOU_FORFEITED", "you have already left this game")
    refused = commit(game, BOB, next_state="s", next_players=[1])
    assert refused == Refusal("YOU_FORFEITED", "you can no longer play in this game")
    last = game.plan_forfeit(ANN, None)
    assert isinstance(last, Forfeit)
    game.forfeit(last, NOW)
    assert game.status == "ABORTING"
    assert [(penalty.player_id, penalty.rating_change) for penalty in game.record.penalties] == [
        (1, -2.0),
        (2, -2.0),
    ]
    assert [penalty.shown for penalty in game.record.penalties] == [ShownRating(rating=1480, change=-20)] * 2
    # An aborted game's results have no ranks, and the penalties' ratings.
    assert [(r.seat, r.rank, r.score, r.change) for r in host.results] == [
        (1, None, None, -2.0),
        (2, None, None, -2.0),
    ]
    assert game.plan_confirm(ANN, "OUTCOME") == Refusal(
        "UNKNOWN_GAME", "you have no game in OUTCOME with this id"
    )
    confirm = game.plan_confirm(ANN, "ABORTING")
    assert confirm == Confirm(1, closes=False)
    game.confirm(confirm, NOW)
    closing = game.plan_confirm(BOB, "ABORTING")
    assert closing == Confirm(2, closes=True)
    game.confirm(closing, NOW)
    assert (
        game.status == "ABORTED"
        and games.live_games(ANN) == []
        and host.types(BOB).count("GameAbortedRequest") == 1
    )


def test_game_over_shows_the_outcome_until_confirmed_or_expired() -> None:
    games, host = registry(outcome_retention=50.0)
    game = open_game(games, ANN, BOB, ranked=True)
    host.away.add(BOB)
    over = GameOverRequest(game_id=game.id, finalScores={"1": (3.0, 1), "2": (1.0, 2)})
    assert game.plan_finish(ANN, GameOverRequest(game_id=game.id, finalScores={"1": (3.0, 1)})) == Refusal(
        "BAD_REQUEST", "`finalScores` must rank every seat: 1, 2"
    )
    plan = game.plan_finish(ANN, over)
    assert not isinstance(plan, Refusal)
    game.game_over(plan, NOW)
    assert game.status == "OUTCOME"
    assert [entry.rating_change for entry in game.record.outcome or []] == [1.0, -1.0]
    assert [entry.shown for entry in game.record.outcome or []] == [
        ShownRating(rating=1510, change=10),
        ShownRating(rating=1490, change=-10),
    ]
    # Each seat's result is kept for the players' profiles, with its rating after the game.
    assert [
        (r.game_id, r.seat, r.account_id, r.name, r.rank, r.score, r.mu, r.change) for r in host.results
    ] == [
        (game.id, 1, ANN, "p1", 1, 3.0, 26.0, 1.0),
        (game.id, 2, BOB, "p2", 2, 1.0, 24.0, -1.0),
    ]
    assert host.notices == [(BOB, "GAME_OVER", None)]  # only the absent player is pushed
    game.tick(NOW + 49)
    assert game.status == "OUTCOME"
    game.tick(NOW + 50)
    assert game.status == "OVER"


def test_an_exhausted_clock_and_the_idle_timer_hand_the_turn_to_someone_else() -> None:
    games, host = registry()
    game = open_game(games, ANN, BOB, CID, clock_seconds=10, idle_time=4)
    game.tick(NOW + 2)
    assert game.record.idle_reported == 50
    game.tick(NOW + 4)
    assert (game.record.delegation, game.record.delegate) == ("IDLE", 2)  # next in next_players
    assert "PlayerTimeoutRequest" in host.types(BOB)
    game.tick(NOW + 10)
    assert (game.record.seats[0].state, game.record.delegation) == ("TIMED_OUT", "TIMED_OUT")
    played = commit(game, BOB, player_id=1, next_state="s", next_players=[2])
    assert isinstance(played, Commit) and (played.acting, played.sender) == (1, 2)


def test_a_player_who_returns_is_asked_for_its_turn_and_one_who_leaves_hands_a_robot_turn_over() -> None:
    games, host = registry()
    game = open_game(games, ANN, BOB, CID)
    forfeit = game.plan_forfeit(ANN, None)
    assert isinstance(forfeit, Forfeit)
    game.forfeit(forfeit, NOW)
    assert game.record.delegate == 2
    host.away.add(BOB)
    game.hand_over(BOB, NOW)
    assert game.record.delegate == 3
    host.away.discard(BOB)
    host.sent.clear()
    game.returned(CID, NOW)
    assert host.types(CID) == ["PlayerTimeoutRequest"]


def test_invitations_start_on_the_last_acceptance_and_end_on_a_decline() -> None:
    games, host = registry()
    host.away.add(CID)
    invite = games.plan_invite(ANN, EngageGameWithFriendsRequest(friend_ids=[BOB, CID, 0]))
    assert not isinstance(invite, Refusal) and invite.friends == (BOB, CID, 0)
    game = games.invite(invite, NOW)
    assert game.status == "NOT_STARTED" and host.notices == [(CID, "CONFIRM_INVITATION", ANN)]
    assert games.plan_invite(ANN, EngageGameWithFriendsRequest(friend_ids=[101])) == Refusal(
        "UNKNOWN_PLAYER", "cannot invite player 101"
    )
    first = game.plan_answer(BOB, AnswerInvitationRequest(game_id=game.id, accept=True))
    assert not isinstance(first, Refusal) and not first.starts
    game.answer(first, NOW)
    last = game.plan_answer(CID, AnswerInvitationRequest(game_id=game.id, accept=True))
    assert not isinstance(last, Refusal) and last.starts
    game.answer(last, NOW)
    assert game.status == "RUNNING"
    second = games.invite(_invitation(games, ANN, BOB), NOW)
    no = second.plan_answer(BOB, AnswerInvitationRequest(game_id=second.id, accept=False))
    assert not isinstance(no, Refusal)
    second.answer(no, NOW)
    assert second.status == "ABORTED"


def test_an_invitation_to_a_player_who_ignores_the_inviter_is_declined_at_once() -> None:
    games, host = registry()
    host.ignoring.add((BOB, ANN))
    game = games.invite(_invitation(games, ANN, BOB), NOW)
    assert game.status == "ABORTED"
    assert host.types(ANN) == ["GameCreatedRequest", "GameAbortedRequest"] and host.types(BOB) == []


def test_server_rules_refuse_an_illegal_action_before_anything_changes() -> None:
    games, _ = registry()
    game = open_game(games, ANN, BOB, rules="fish")
    assert game.rules is not None
    before = encode_game(game.record)
    mover = game.record.turn or 1
    player = game.record.seats[mover - 1].player_id or 0
    illegal = commit(game, player, action="place 99,99")
    assert isinstance(illegal, Refusal) and illegal.message.startswith("illegal action: ")
    assert encode_game(game.record) == before and game.rules.actions == []
    legal = commit(game, player, action=game.rules.legal_actions(mover)[0])
    assert isinstance(legal, Action)
    game.act(legal, NOW)
    assert game.record.turn_index == 2 and len(game.record.actions) == 1


def _invitation(games: Games, inviter: int, *friends: int) -> Invite:
    plan = games.plan_invite(inviter, EngageGameWithFriendsRequest(friend_ids=list(friends)))
    assert not isinstance(plan, Refusal)
    return plan


def test_the_helpers_of_a_game_change_it_only_through_the_game() -> None:
    """outbound.py, turns.py, phases.py and ending.py read the record: no line of theirs assigns
    an attribute (their own, set once in ``__init__``, aside); every change is a method of
    machine.Game."""
    assigning = re.compile(r"^\s*[\w.]+\.\w+\s*(,\s*[\w.]+\s*)*[-+]?=[^=]")
    found = [
        f"{name}.py:{number}: {line.strip()}"
        for name in ("outbound", "turns", "phases", "ending")
        for number, line in enumerate((GAME / f"{name}.py").read_text(encoding="utf-8").splitlines(), 1)
        if assigning.search(line) and not line.strip().startswith("self._")
    ]
    assert not found, "\n".join(found)
