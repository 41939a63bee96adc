"""Asking for a turn: its player, a client playing it for a robot, or (server rules) Parlour's
robot at once; a seat out of time; a server-rules action applied (the Scalable Server text
"In game", "Robots", "Player Timeout"; S9, S12)."""

from __future__ import annotations

from typing import Final

import msgspec

from parlour.protocols.async_ws.game.ending import Ending
from parlour.protocols.async_ws.game.model import Delegation, SeatInfo, TurnDoc
from parlour.protocols.async_ws.game.rules import ServerGame
from parlour.protocols.async_ws.game.server_game import SNAPSHOT_EVERY
from parlour.protocols.async_ws.wire.messages import (
    ActionRequiredRequest,
    ClockPausedRequest,
    GameStateUpdatedRequest,
    PlayerReplacedRequest,
    PlayerTimeoutRequest,
)

__all__ = ["ROBOT_TURNS", "Turns"]

#: A server-rules game plays at most this many robot turns in a row on one input.
ROBOT_TURNS: Final = 10_000


class Turns(Ending):
    __slots__ = ()

    def begin_turn(self, now: float, pause: int) -> None:
        """Ask for the turn of ``turn``. A merge turn's data are already in the game."""
        game = self._record
        game.turn_started = now + pause
        game.pause_time = pause
        game.idle_reported = 0
        game.delegate = game.delegation = None
        if game.turn is None:
            return
        seat = game.seats[game.turn - 1]
        reason = seat.robot_reason
        if reason is not None:
            self.delegate_turn(seat, reason, now)
        else:
            self.ask(seat, now)
        if pause and game.status == "RUNNING":
            # After the turn's own message, as in the text's diagram: everyone learns the clock waits.
            self.to_game(ClockPausedRequest(game_id=game.id, pause_time=pause, player_ids=[seat.local_id]))

    def required(self, seat: SeatInfo, now: float) -> ActionRequiredRequest:
        game, rules = self._record, self.rules
        return ActionRequiredRequest(
            game_id=game.id,
            player_id=seat.local_id,
            state=self.view(seat.local_id),
            turn_index=game.turn_index,
            player_clock=game.clock(seat, now),
            pause_time=game.pause_time,
            user_data=game.user_data,
            interruption_data=game.interruption_data,
            legal_actions=None if rules is None else rules.legal_actions(seat.local_id),
        )

    def ask(self, seat: SeatInfo, now: float, observers: bool = True) -> None:
        """The seat's ActionRequiredRequest, and the observers' copy: the spectator view and no
        legal actions under server rules (they would show a hand)."""
        required = self.required(seat, now)
        if not self.host.send(seat.player_id, required):
            self.notify_turn(seat, now)
        if observers and self.host.observers(self._record.id):
            if self._record.server_rules:
                required = msgspec.structs.replace(required, state=self.view(None), legal_actions=None)
            self.to_observers(required, skip=(seat.player_id,) if seat.player_id else ())

    def delegate_turn(self, offender: SeatInfo, reason: Delegation, now: float) -> None:
        """Someone else plays ``offender``'s turn (the text's "Robots" workflow)."""
        game = self._record
        if not any(seat.human_active for seat in game.seats):
            self.abort(now)
            return
        if self.rules is not None:
            game.delegation = reason
            self.play_robots(self.rules, now)
            return
        candidates = game.candidates(offender)
        if not candidates:
            return  # only the idle player is left: its clock decides
        online = self.host.online
        present = [seat for seat in candidates if seat.player_id is not None and online(seat.player_id)]
        chosen = (present or candidates)[0]
        game.delegate, game.delegation = chosen.local_id, reason
        notice = self.timeout_notice()
        if not self.host.send(chosen.player_id, notice):
            self.notify_robot_turn(chosen, now)
        self.to_observers(notice, skip=(chosen.player_id,) if chosen.player_id else ())

    def play_robots(self, rules: ServerGame, now: float) -> None:
        """Server rules: Parlour's robot plays every turn that is not a present-or-absent active
        human's, until a human must act or the game ends."""
        game = self._record
        for _ in range(ROBOT_TURNS):
            if game.status != "RUNNING" or game.turn is None:
                return
            seat = game.seats[game.turn - 1]
            if game.delegation is None and seat.robot_reason is None:
                self.ask(seat, now)
                return
            if self.think_later(rules, seat.local_id):
                return  # the robot decides away from the event loop: ``thought`` goes on
            self.apply_action(rules, seat, self.robot_action(rules, seat.local_id), None, now)

    def robot_seat(self) -> SeatInfo | None:
        """Server rules: the seat whose turn a robot must play now, if any."""
        game = self._record
        if self.rules is None or game.status != "RUNNING" or game.phase != "TURN" or game.turn is None:
            return None
        seat = game.seats[game.turn - 1]
        return seat if game.delegation is not None or seat.robot_reason is not None else None

    def thought(self, position: int, choice: int | None, now: float) -> None:
        """A robot's decision made away from the event loop, for the game ``position`` actions in,
        is back as an input of its own: played if the game still stands there and waits for a
        robot (``choice`` None: the job failed or the robots' process died, and the robot
        decides here instead); dropped if the game has moved on, and asked again for where it
        stands now (unless that is on its way already)."""
        rules, seat = self.rules, self.robot_seat()
        if rules is None or seat is None:
            return  # over, or a human's turn now
        if len(rules.actions) != position:
            self.resume_robots(now)
            return
        legal = rules.legal_actions(seat.local_id)
        if choice is not None and 0 <= choice < len(legal):
            action = legal[choice]
        else:
            action = self.robot_action(rules, seat.local_id)
        self.apply_action(rules, seat, action, None, now)
        self.play_robots(rules, now)
        if self._record.status == "RUNNING":
            self.save(now)

    def resume_robots(self, now: float) -> None:
        """Server rules: if a robot must play the turn (a game restored from the store or read
        back, or one whose robot decision came back too late), it plays or is asked to."""
        rules = self.rules
        if rules is None or self.robot_seat() is None:
            return
        made = len(rules.actions)
        self.play_robots(rules, now)
        if len(rules.actions) != made and self._record.status == "RUNNING":
            self.save(now)  # robots played here (no robots' process): as after any turn

    def apply_action(
        self, rules: ServerGame, seat: SeatInfo, action: str, by: SeatInfo | None, now: float
    ) -> None:
        """Server rules: one legal action of ``seat``, applied, stored and shown to everyone."""
        game = self._record
        rules.apply(action)
        game.actions.append(action)
        if len(game.actions) % SNAPSHOT_EVERY == 0:
            game.snapshot = rules.snapshot()
        game.charge(now)
        game.turn_index += 1
        game.state = rules.view(None)
        game.turn = rules.to_move()
        game.next_players = [game.turn] if game.turn else []
        game.delegate = game.delegation = None
        game.turn_started, game.pause_time, game.idle_reported = now, 0, 0
        if by is not None:
            game.last_actor = by.local_id
        self.save(
            now, TurnDoc(seat=seat.local_id, by=None if by in (None, seat) else by.local_id, action=action)
        )
        update = GameStateUpdatedRequest(
            game_id=game.id, state="", turn_index=game.turn_index, player_id=seat.local_id
        )
        # Every seat gets its own new view, the mover too: under server rules the client computes
        # nothing, so the acknowledgement alone would leave it without the state it moved to.
        for other in game.seats:
            if other.player_id is not None:
                self.host.send(
                    other.player_id, msgspec.structs.replace(update, state=rules.view(other.local_id))
                )
        # Observers see what no seat hides (S9, S17); one who holds a seat has had its own view.
        seated = tuple(other.player_id for other in game.seats if other.player_id is not None)
        self.to_observers(msgspec.structs.replace(update, state=game.state), skip=seated)
        result = rules.outcome()
        if result is not None:
            self.finish(dict(result), game.config.ranked, now)

    def time_out(self, seat: SeatInfo, now: float) -> None:
        """The seat's clock is exhausted: a robot plays it from now on (the text's "Player
        Timeout")."""
        game = self._record
        seat.remaining = 0.0
        seat.state = "TIMED_OUT"
        self.to_game(PlayerReplacedRequest(game_id=game.id, player_id=seat.local_id, reason="TIMED_OUT"))
        game.turn_started = now
        game.delegate = game.delegation = None
        self.delegate_turn(seat, "TIMED_OUT", now)
        if game.status == "RUNNING" or game.status == "ABORTING":
            self.save(now)

    def timeout_notice(self) -> PlayerTimeoutRequest:
        game = self._record
        assert game.turn is not None
        return PlayerTimeoutRequest(
            game_id=game.id,
            offender_id=game.turn,
            status=game.delegation or "ROBOT",
            state=game.state,
            turn_index=game.turn_index,
            user_data=game.user_data,
            interruption_data=game.interruption_data,
        )

    def resend_turn(self, player_id: int, now: float) -> None:
        """A player who comes back gets what the TURN phase waits for from them: its turn, or a
        robot's (also one asked of a player who is away: whoever is present plays it)."""
        game = self._record
        if game.turn is None:
            return
        seat = game.seats[game.turn - 1]
        if game.delegate is not None:
            chosen = game.seats[game.delegate - 1]
            if chosen.player_id != player_id and not (
                chosen.player_id is not None and self.host.online(chosen.player_id)
            ):
                returning = game.seat_of(player_id)
                if returning is not None and returning in game.candidates(seat):
                    game.delegate = returning.local_id
                    self.save(now)
                    chosen = returning
            if chosen.player_id == player_id:
                self.host.send(player_id, self.timeout_notice())
            if seat.player_id != player_id:
                return
        if seat.player_id == player_id and seat.human_active:
            self.ask(seat, now, observers=False)

    def hand_over_turn(self, player_id: int, now: float) -> None:
        """``player_id`` went away while asked to play a robot's turn: a present player takes it."""
        game = self._record
        if game.turn is None or game.delegate is None:
            return
        if game.seats[game.delegate - 1].player_id != player_id:
            return
        online = self.host.online
        present = [
            seat
            for seat in game.candidates(game.seats[game.turn - 1])
            if seat.player_id is not None and online(seat.player_id) and seat.player_id != player_id
        ]
        if present:
            game.delegate = present[0].local_id
            self.host.send(present[0].player_id, self.timeout_notice())
            self.save(now)
