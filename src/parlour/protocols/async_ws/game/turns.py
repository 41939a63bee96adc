"""Turns and robots (the Scalable Server text "In game", "Robots", "Player Timeout"; S9, S12):
asking for a turn, of its player, of a client playing it for a robot, or (server rules) of
Parlour's robot at once; a server-rules action shown to everyone; a player's return and
departure while a turn waits.

This helper reads the record and changes it only through its game (:class:`TurnsGame`)."""

from __future__ import annotations

from functools import partial
from typing import Final, Protocol

import msgspec

from parlour.core.effects import Think
from parlour.protocols.async_ws.game.context import GameContext
from parlour.protocols.async_ws.game.model import AsyncGame, Delegation, SeatInfo, TurnDoc
from parlour.protocols.async_ws.game.outbound import Outbound
from parlour.protocols.async_ws.game.rules import ServerGame
from parlour.protocols.async_ws.wire.messages import (
    ActionRequiredRequest,
    ClockPausedRequest,
    GameStateUpdatedRequest,
    PlayerTimeoutRequest,
)

__all__ = ["ROBOT_TURNS", "Turns", "TurnsGame"]

#: A server-rules game plays at most this many robot turns in a row on one input.
ROBOT_TURNS: Final = 10_000


class TurnsGame(Protocol):
    """What the turns ask of their game (machine.Game): its rules adapter and views, and the
    changes they make."""

    @property
    def rules(self) -> ServerGame | None: ...

    def view(self, local_id: int | None) -> str: ...

    def save(self, now: float, turn: TurnDoc | None = None) -> None: ...

    def turn_begins(self, now: float, pause: int) -> None: ...

    def hand_turn(self, delegate: int | None, delegation: Delegation | None) -> None: ...

    def action_played(self, seat: SeatInfo, action: str, by: SeatInfo | None, now: float) -> None: ...

    def abort(self, now: float) -> None: ...

    def finish(self, scores: dict[int, tuple[float, int]], ranked: bool, now: float) -> None: ...


class Turns:
    """The turns of one game, made by the game. ``context`` gives the robots' settings and
    their decisions on their way (context.GameContext)."""

    __slots__ = ("_context", "_game", "_out", "_record")

    def __init__(self, game: TurnsGame, record: AsyncGame, out: Outbound, context: GameContext) -> None:
        self._game = game
        self._record = record
        self._out = out
        self._context = context

    # -- Asking for a turn ------------------------------------------------------------------------

    def begin(self, now: float, pause: int) -> None:
        """Ask for the turn of ``turn``. A merge turn's data are already in the game."""
        game = self._record
        self._game.turn_begins(now, pause)
        if game.turn is None:
            return
        seat = game.seats[game.turn - 1]
        reason = seat.robot_reason
        if reason is not None:
            self.delegate(seat, reason, now)
        else:
            self.ask(seat, now)
        if pause and game.status == "RUNNING":
            # After the turn's own message, as in the text's diagram: everyone learns the clock waits.
            self._out.to_game(
                ClockPausedRequest(game_id=game.id, pause_time=pause, player_ids=[seat.local_id])
            )

    def required(self, seat: SeatInfo, now: float) -> ActionRequiredRequest:
        game, rules = self._record, self._game.rules
        return ActionRequiredRequest(
            game_id=game.id,
            player_id=seat.local_id,
            state=self._game.view(seat.local_id),
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
        if not self._out.send(seat.player_id, required):
            self._out.notify_turn(seat, now)
        if observers and self._out.observers():
            if self._record.server_rules:
                required = msgspec.structs.replace(required, state=self._game.view(None), legal_actions=None)
            self._out.to_observers(required, skip=(seat.player_id,) if seat.player_id else ())

    def delegate(self, offender: SeatInfo, reason: Delegation, now: float) -> None:
        """Someone else plays ``offender``'s turn (the text's "Robots" workflow)."""
        game = self._record
        if not any(seat.human_active for seat in game.seats):
            self._game.abort(now)
            return
        rules = self._game.rules
        if rules is not None:
            self._game.hand_turn(game.delegate, reason)
            self.play_robots(rules, now)
            return
        candidates = game.candidates(offender)
        if not candidates:
            return  # only the idle player is left: its clock decides
        online = self._out.online
        present = [seat for seat in candidates if seat.player_id is not None and online(seat.player_id)]
        chosen = (present or candidates)[0]
        self._game.hand_turn(chosen.local_id, reason)
        notice = self.timeout_notice()
        if not self._out.send(chosen.player_id, notice):
            self._out.notify_robot_turn(chosen, now)
        self._out.to_observers(notice, skip=(chosen.player_id,) if chosen.player_id else ())

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

    # -- Server rules: actions and Parlour's robots -----------------------------------------------

    def play(self, rules: ServerGame, seat: SeatInfo, action: str, by: SeatInfo | None, now: float) -> None:
        """Server rules: one legal action of ``seat``, applied, stored and shown to everyone."""
        game = self._record
        self._game.action_played(seat, action, by, now)
        update = GameStateUpdatedRequest(
            game_id=game.id, state="", turn_index=game.turn_index, player_id=seat.local_id
        )
        # Every seat gets its own new view, the mover too: under server rules the client computes
        # nothing, so the acknowledgement alone would leave it without the state it moved to.
        for other in game.seats:
            if other.player_id is not None:
                self._out.send(
                    other.player_id, msgspec.structs.replace(update, state=rules.view(other.local_id))
                )
        # Observers see what no seat hides (S9, S17); one who holds a seat has had its own view.
        seated = tuple(other.player_id for other in game.seats if other.player_id is not None)
        self._out.to_observers(msgspec.structs.replace(update, state=game.state), skip=seated)
        result = rules.outcome()
        if result is not None:
            self._game.finish(dict(result), game.config.ranked, now)

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
            self.play(rules, seat, self.robot_action(rules, seat.local_id), None, now)

    def robot_seat(self) -> SeatInfo | None:
        """Server rules: the seat whose turn a robot must play now, if any."""
        game = self._record
        if self._game.rules is None or game.status != "RUNNING" or game.phase != "TURN" or game.turn is None:
            return None
        seat = game.seats[game.turn - 1]
        return seat if game.delegation is not None or seat.robot_reason is not None else None

    def think_later(self, rules: ServerGame, local_id: int) -> bool:
        """Whether the robot's decision for ``local_id`` is asked of the robots' process (a slow
        robot would hold up every other game and connection while it thinks): a Think for the
        game's position, unless one is on its way already. The answer comes back as an input
        of its own (:meth:`thought`)."""
        context = self._context
        if not context.offload:
            return False
        position = len(rules.actions)
        if context.thinking.get(self._record.id) == position:
            return True
        job = rules.robot_job(local_id)
        if job is None:
            return False
        context.thinking[self._record.id] = position
        context.thinks.append(Think((str(self._record.id), position), job))
        return True

    def robot_action(self, rules: ServerGame, local_id: int) -> str:
        """The action Parlour's robot chooses for a seat (timed when there is a timer)."""
        timer = self._context.robot_timer
        if timer is None:
            return rules.robot_action(local_id)
        return timer(rules.rules, partial(rules.robot_action, local_id))

    def thought(self, position: int, choice: int | None, now: float) -> None:
        """A robot's decision made away from the event loop, for the game ``position`` actions in,
        is back as an input of its own: played if the game still stands there and waits for a
        robot (``choice`` None: the job failed or the robots' process died, and the robot
        decides here instead); dropped if the game has moved on, and asked again for where it
        stands now (unless that is on its way already)."""
        rules, seat = self._game.rules, self.robot_seat()
        if rules is None or seat is None:
            return  # over, or a human's turn now
        if len(rules.actions) != position:
            self.resume(now)
            return
        legal = rules.legal_actions(seat.local_id)
        if choice is not None and 0 <= choice < len(legal):
            action = legal[choice]
        else:
            action = self.robot_action(rules, seat.local_id)
        self.play(rules, seat, action, None, now)
        self.play_robots(rules, now)
        if self._record.status == "RUNNING":
            self._game.save(now)

    def resume(self, now: float) -> None:
        """Server rules: if a robot must play the turn (a game restored from the store or read
        back, or one whose robot decision came back too late), it plays or is asked to."""
        rules = self._game.rules
        if rules is None or self.robot_seat() is None:
            return
        made = len(rules.actions)
        self.play_robots(rules, now)
        if len(rules.actions) != made and self._record.status == "RUNNING":
            self._game.save(now)  # robots played here (no robots' process): as after any turn

    # -- Players coming and going -----------------------------------------------------------------

    def resend(self, player_id: int, now: float) -> None:
        """A player who comes back gets what the TURN phase waits for from them: its turn, or a
        robot's (also one asked of a player who is away: whoever is present plays it)."""
        game = self._record
        if game.turn is None:
            return
        seat = game.seats[game.turn - 1]
        if game.delegate is not None:
            chosen = game.seats[game.delegate - 1]
            if chosen.player_id != player_id and not (
                chosen.player_id is not None and self._out.online(chosen.player_id)
            ):
                returning = game.seat_of(player_id)
                if returning is not None and returning in game.candidates(seat):
                    self._game.hand_turn(returning.local_id, game.delegation)
                    self._game.save(now)
                    chosen = returning
            if chosen.player_id == player_id:
                self._out.send(player_id, self.timeout_notice())
            if seat.player_id != player_id:
                return
        if seat.player_id == player_id and seat.human_active:
            self.ask(seat, now, observers=False)

    def hand_over(self, player_id: int, now: float) -> None:
        """``player_id`` went away while asked to play a robot's turn: a present player takes it."""
        game = self._record
        if game.turn is None or game.delegate is None:
            return
        if game.seats[game.delegate - 1].player_id != player_id:
            return
        online = self._out.online
        present = [
            seat
            for seat in game.candidates(game.seats[game.turn - 1])
            if seat.player_id is not None and online(seat.player_id) and seat.player_id != player_id
        ]
        if present:
            self._game.hand_turn(present[0].local_id, game.delegation)
            self._out.send(present[0].player_id, self.timeout_notice())
            self._game.save(now)
