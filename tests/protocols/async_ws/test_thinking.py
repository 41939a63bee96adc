"""Server-rules robots of /async that think away from the event loop: a slow robot's turn is a
Think effect, and its answer comes back to the game's one owner as an input of its own, checked
against where the game stands (parlour.protocols.async_ws.game.turns.Turns.thought)."""

from __future__ import annotations

from typing import Any

import pytest

from parlour.core.effects import Effect, Think
from parlour.protocols.async_ws.game.rules import ServerGame
from parlour.protocols.async_ws.state.readback import AsyncReload
from tests.protocols.async_ws.harness import Harness


class Thinking(Harness):
    """The harness, with slow robots offloaded: Think effects are kept here, never run."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.service.games.offload = True
        self.thinks: list[Think] = []

    def run(self, effects: list[Effect]) -> None:
        self.thinks.extend(effect for effect in effects if isinstance(effect, Think))
        super().run([effect for effect in effects if not isinstance(effect, Think)])

    def answer(self, think: Think, choice: int | None) -> None:
        self.run(self.service.thought(think.token, choice, self.now))

    def take(self) -> Think:
        assert len(self.thinks) == 1, self.thinks
        return self.thinks.pop()


def rules_of(h: Harness, game_id: int) -> ServerGame:
    game = h.service.games.game(game_id)
    assert game is not None and game.rules is not None
    return game.rules


def robots_game(h: Thinking, rules: str, robots: int, level: str = "hard") -> tuple[int, int, int]:
    """ann (local id 1), ``robots`` robots, then bob: a running game of ``rules`` (connections
    of ann and bob, and the game's id)."""
    ann, _ = h.player("ann")
    bob, bob_id = h.player("bob")
    seats = robots + 2
    configuration = {
        "game_type": rules,
        "rules": rules,
        "max_players": seats,
        "min_players": seats,
        "robot_level": level,
    }
    h.send(
        ann,
        type="EngageGameWithFriendsRequest",
        friend_ids=[0] * robots + [bob_id],
        configuration=configuration,
    )
    game_id: int = h.expect(ann, "GameCreatedRequest")["game_id"]
    h.send(bob, type="AnswerInvitationRequest", game_id=game_id, accept=True)
    assert h.service.hub.games[game_id].status == "RUNNING"
    return ann, bob, game_id


def ann_moves(h: Thinking, ann: int, game_id: int) -> None:
    """ann, first to move under Tsuro and Fish, plays her first legal action."""
    required = h.expect(ann, "ActionRequiredRequest", game_id=game_id, player_id=1)
    h.send(ann, type="CommitActionRequest", game_id=game_id, action=required["legal_actions"][0])
    h.expect(ann, "ActionCommitedRequest")


@pytest.mark.parametrize("rules", ["tsuro", "fish"])
def test_a_hard_robot_decides_off_the_loop_and_its_answer_plays_what_the_robot_chooses(rules: str) -> None:
    h = Thinking()
    ann, _, game_id = robots_game(h, rules, robots=1)
    ann_moves(h, ann, game_id)
    rules_game = rules_of(h, game_id)
    think = h.take()
    made = len(rules_game.actions)
    assert think.token == (str(game_id), made) and rules_game.to_move() == 2
    expected = rules_game.robot_action(2)  # what the robot would play here, on the loop
    choice = think.job()
    assert len(rules_game.actions) == made  # nothing moved while the robot thought
    h.answer(think, choice)
    assert rules_game.actions[made] == expected
    assert h.service.hub.games[game_id].actions[-1] == expected  # stored with the game
    h.answer(think, choice)  # the same answer again: the game has moved on, nothing is played
    assert len(rules_game.actions) == made + 1 and not h.thinks


def test_a_broken_robots_process_falls_back_to_the_same_choice_on_the_loop() -> None:
    h = Thinking()
    ann, _, game_id = robots_game(h, "tsuro", robots=1)
    ann_moves(h, ann, game_id)
    think = h.take()
    expected = list(rules_of(h, game_id).legal_actions(2))[think.job()]
    h.answer(think, None)  # the job failed, or the robots' process died
    assert rules_of(h, game_id).actions[-1] == expected


def test_a_stale_decision_is_dropped_and_asked_again_where_the_game_stands() -> None:
    """A commit fails after a robot's move: the game returns to the stored position (the robot's
    turn again), and the decision already asked for the next position comes back stale."""
    h = Thinking()
    ann, _, game_id = robots_game(h, "tsuro", robots=2)
    ann_moves(h, ann, game_id)
    first = h.take()
    stored_row = h.games[game_id]  # where the store stands: robot 2 to move
    h.answer(first, first.job())
    second = h.take()  # robot 3's turn, asked
    made = len(rules_of(h, game_id).actions)
    assert second.token == (str(game_id), made) and first.token == (str(game_id), made - 1)
    failed = [record for record in h.records if getattr(record, "id", None) == game_id][-1:]
    h.run(h.service.store_failed(failed, [], AsyncReload(async_games={game_id: stored_row}), h.now))
    again = h.take()  # robot 2's move was lost: asked again
    assert again.token == first.token and len(rules_of(h, game_id).actions) == made - 1
    h.answer(second, second.job())  # for a position the game has left: dropped
    assert len(rules_of(h, game_id).actions) == made - 1 and not h.thinks
    h.answer(again, again.job())
    assert len(rules_of(h, game_id).actions) == made
    assert h.take().token == second.token  # and robot 3 is asked again


@pytest.mark.parametrize("rules", ["apologies", "fish", "tsuro"])
def test_a_robot_level_survives_a_restart_in_the_middle_of_a_robots_turn(rules: str) -> None:
    """The level is stored with the game; a game stored while its robot was thinking is asked
    again at that level after a restart (offloaded), or played at once (not offloaded)."""
    h = Thinking()
    ann, bob, game_id = robots_game(h, rules, robots=1)
    conns = {1: ann, 3: bob}
    while not h.thinks:  # the humans play until it is the robot's turn
        local_id = rules_of(h, game_id).to_move()
        assert local_id in conns
        required = h.expect(conns[local_id], "ActionRequiredRequest", game_id=game_id, player_id=local_id)
        h.send(
            conns[local_id], type="CommitActionRequest", game_id=game_id, action=required["legal_actions"][0]
        )
    think = h.take()
    made = len(rules_of(h, game_id).actions)
    expected = rules_of(h, game_id).robot_action(2)  # the hard robot's choice, asked on the loop
    for offload in (True, False):
        restarted = h.restart(offload=offload)
        again = rules_of(restarted, game_id)
        assert again.level == "hard" and again.actions[:made] == rules_of(h, game_id).actions
        thinks = [effect for effect in restarted.service.effects(restarted.now) if isinstance(effect, Think)]
        if offload:
            assert [t.token for t in thinks] == [think.token] and len(again.actions) == made
            restarted.run(restarted.service.thought(think.token, thinks[0].job(), restarted.now))
        else:
            assert not thinks  # played at once on the restore
        assert again.actions[made] == expected
