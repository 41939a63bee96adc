"""Simultaneous turns and interruption windows as a game lives them (the rules Parlour follows where
the text is silent are in the handlers' module, async_ws/ingame/phase_requests.py): asking seats for
their user data, handing a seat to someone else, the merge, the window's close, and their clocks and
idle timer.

This helper reads the record and changes it only through its game (:class:`PhasesGame`)."""

from __future__ import annotations

from typing import Final, Protocol

from parlour.protocols.async_ws.game.model import AsyncGame, Delegation, SeatInfo, SimultaneousSeat
from parlour.protocols.async_ws.game.outbound import Outbound
from parlour.protocols.async_ws.wire.messages import (
    ClockPausedRequest,
    CommitActionRequest,
    GameStateUpdatedRequest,
    InterruptionOverRequest,
    PlayerData,
    PlayerIdleProgressRequest,
    PlayerReplacedRequest,
    PlayerTimeoutRequest,
    UserDataUpdateRequiredRequest,
)

__all__ = ["IDLE_STEPS", "Phases", "PhasesGame"]

#: The idle timer reports at these fractions of the idle time (the text's 50/75/100 %).
IDLE_STEPS: Final = (50, 75, 100)


class PhasesGame(Protocol):
    """What the phases ask of their game (machine.Game): the turn that follows them, the abort
    when nobody is left, and the changes they make."""

    def save(self, now: float) -> None: ...

    def begin_turn(self, now: float, pause: int) -> None: ...

    def abort(self, now: float) -> None: ...

    def simultaneous_begins(self, players: list[int], now: float, pause: int) -> None: ...

    def hand_data(
        self, entry: SimultaneousSeat, delegate: int | None, delegation: Delegation | None
    ) -> None: ...

    def simultaneous_merges(self, turn: int, user_data: list[PlayerData]) -> None: ...

    def window_opens(self, acting: SeatInfo, msg: CommitActionRequest, now: float) -> None: ...

    def window_closes(self, now: float, turn: int, interruptions: list[PlayerData]) -> None: ...

    def seat_times_out(self, seat: SeatInfo) -> None: ...

    def idle_reaches(self, step: int) -> None: ...


class Phases:
    """The simultaneous turns and interruption windows of one game, made by the game."""

    __slots__ = ("_game", "_out", "_record")

    def __init__(self, game: PhasesGame, record: AsyncGame, out: Outbound) -> None:
        self._game = game
        self._record = record
        self._out = out

    # -- Simultaneous turns -----------------------------------------------------------------------

    def begin_simultaneous(self, msg: CommitActionRequest, now: float) -> None:
        """The commit was acknowledged: each listed seat is asked for its user data, its player
        with UserDataUpdateRequiredRequest, or a client playing it. One pause for all clocks."""
        game = self._record
        self._game.simultaneous_begins(msg.simultaneous_players, now, msg.pause_time)
        required = self.data_required()
        for entry in game.simultaneous:
            seat = game.seats[entry.local_id - 1]
            reason: Delegation | None = seat.robot_reason
            if reason is None and not (seat.player_id is not None and self._out.online(seat.player_id)):
                reason = "ABSENT"
            if reason is None:
                self._out.send(seat.player_id, required)
            else:
                self.delegate_data(entry, reason)
        self._out.to_observers(required)
        if msg.pause_time:
            # Only one ClockPausedRequest, to everyone (the text's "Pausing Clock in a simultaneous turn").
            self._out.to_game(
                ClockPausedRequest(
                    game_id=game.id, pause_time=msg.pause_time, player_ids=msg.simultaneous_players
                )
            )

    def data_required(self) -> UserDataUpdateRequiredRequest:
        game = self._record
        return UserDataUpdateRequiredRequest(
            game_id=game.id, state=game.state, turn_index=game.turn_index, pause_time=game.pause_time
        )

    def data_notice(self, entry: SimultaneousSeat) -> PlayerTimeoutRequest:
        game = self._record
        return PlayerTimeoutRequest(
            game_id=game.id,
            offender_id=entry.local_id,
            status=entry.delegation or "ROBOT",
            state=game.state,
            turn_index=game.turn_index,
            expected="UpdateUserDataRequest",
        )

    def delegate_data(self, entry: SimultaneousSeat, reason: Delegation) -> None:
        """Someone else gives ``entry``'s user data: chosen as for any robot turn."""
        game = self._record
        candidates = game.candidates(game.seats[entry.local_id - 1])
        if not candidates:
            self._game.hand_data(entry, None, None)  # its own player alone can: asked on return
            return
        online = self._out.online
        present = [seat for seat in candidates if seat.player_id is not None and online(seat.player_id)]
        chosen = (present or candidates)[0]
        self._game.hand_data(entry, chosen.local_id, reason)
        notice = self.data_notice(entry)
        self._out.send(chosen.player_id, notice)
        self._out.to_observers(notice, skip=(chosen.player_id,) if chosen.player_id else ())

    def repair(self, changed: set[int]) -> None:
        """Seats in ``changed`` stopped being active: their pending user data goes to someone
        else, as does what they were asked to give for others."""
        game = self._record
        for entry in game.pending():
            gone = entry.delegate is not None and not game.seats[entry.delegate - 1].human_active
            if entry.local_id in changed or gone:
                reason = game.seats[entry.local_id - 1].robot_reason or entry.delegation
                if reason is not None:
                    self.delegate_data(entry, reason)

    def merge_simultaneous(self, now: float) -> None:
        """Every seat gave its data: the merger's turn, with all of it (``user_data``)."""
        game = self._record
        data = [
            PlayerData(player_id=entry.local_id, data=entry.user_data or "") for entry in game.simultaneous
        ]
        involved = [entry.local_id for entry in game.simultaneous]
        self._game.simultaneous_merges(self.merger(involved), data)
        self._game.begin_turn(now, pause=0)  # cancels a resume still pending

    def merger(self, involved: list[int]) -> int:
        """Who merges: see the handlers' module (async_ws/ingame/phase_requests.py)."""
        game, online = self._record, self._out.online
        first = game.seat(game.next_players[0]) if game.next_players else None
        if first is not None and (
            not first.human_active or (first.player_id is not None and online(first.player_id))
        ):
            return first.local_id
        for local in involved:
            seat = game.seats[local - 1]
            if seat.human_active and seat.player_id is not None and online(seat.player_id):
                return local
        return first.local_id if first is not None else involved[0]

    def tick_simultaneous(self, now: float) -> bool:
        game = self._record
        changed: set[int] = set()
        for entry in game.pending():
            seat = game.seats[entry.local_id - 1]
            deadline = game.deadline(seat)
            if deadline is not None and now >= deadline:
                self._game.seat_times_out(seat)
                self._out.to_game(
                    PlayerReplacedRequest(game_id=game.id, player_id=seat.local_id, reason="TIMED_OUT")
                )
                changed.add(seat.local_id)
        if changed:
            if not any(seat.human_active for seat in game.seats):
                self._game.abort(now)
                return True
            self.repair(changed)
        reported = False
        if game.idle_time > 0:
            elapsed = now - game.turn_started
            for step in IDLE_STEPS:
                if step > game.idle_reported and elapsed >= game.idle_time * step / 100:
                    self._game.idle_reaches(step)
                    reported = True
                    idle = [
                        entry
                        for entry in game.pending()
                        if entry.delegate is None and game.seats[entry.local_id - 1].human_active
                    ]
                    if idle:
                        self._out.to_game(
                            PlayerIdleProgressRequest(
                                game_id=game.id, progress=step, player_ids=[entry.local_id for entry in idle]
                            )
                        )
                    if step == 100:
                        for entry in idle:
                            self.delegate_data(entry, "IDLE")
        return bool(changed) or reported

    def resend_data(self, player_id: int, now: float) -> None:
        """A player comes back during a simultaneous turn: it is asked for its own user data and
        for the seats it was asked to play (or now plays instead of someone away)."""
        game, online = self._record, self._out.online
        returning = game.seat_of(player_id)
        if returning is None or game.phase != "SIMULTANEOUS":
            return
        moved = False
        for entry in game.pending():
            if entry.delegate is not None and entry.delegate != returning.local_id:
                chosen = game.seats[entry.delegate - 1]
                away = not (chosen.player_id is not None and online(chosen.player_id))
                if away and returning in game.candidates(game.seats[entry.local_id - 1]):
                    self._game.hand_data(entry, returning.local_id, entry.delegation)
                    moved = True
            if entry.delegate == returning.local_id:
                self._out.send(player_id, self.data_notice(entry))
            if entry.local_id == returning.local_id and returning.human_active:
                self._out.send(player_id, self.data_required())
        if moved:
            self._game.save(now)

    def hand_over_data(self, player_id: int, now: float) -> None:
        """``player_id`` went away while asked to give seats' user data: present players take
        them."""
        game, online = self._record, self._out.online
        if game.phase != "SIMULTANEOUS":
            return
        moved = False
        for entry in game.pending():
            if entry.delegate is None or game.seats[entry.delegate - 1].player_id != player_id:
                continue
            present = [
                seat
                for seat in game.candidates(game.seats[entry.local_id - 1])
                if seat.player_id is not None and online(seat.player_id) and seat.player_id != player_id
            ]
            if present:
                self._game.hand_data(entry, present[0].local_id, entry.delegation)
                moved = True
                self._out.send(present[0].player_id, self.data_notice(entry))
        if moved:
            self._game.save(now)

    # -- Interruption windows ---------------------------------------------------------------------

    def open_window(self, acting: SeatInfo, msg: CommitActionRequest, now: float) -> None:
        """The commit was acknowledged: its window opens, on the committer's clock."""
        game = self._record
        self._game.window_opens(acting, msg, now)
        self._out.to_game(
            GameStateUpdatedRequest(
                game_id=game.id,
                state=game.state,
                turn_index=game.turn_index,
                player_id=acting.local_id,
                interruption_window_duration=game.window,
            )
        )
        if game.all_answered():
            self.close_window(now)

    def close_window(self, now: float) -> None:
        """InterruptionOverRequest to all; then the merger's turn with the interruptions, or, with
        none, the next player's turn as after any commit."""
        game = self._record
        assert game.turn is not None
        committer = game.turn
        self._out.to_game(InterruptionOverRequest(game_id=game.id, turn_index=game.turn_index))
        data, pause = list(game.interruptions), game.window_pause
        if data:
            turn = self.merger([entry.player_id for entry in data] + [committer])
        else:
            turn = game.next_players[0]
        self._game.window_closes(now, turn, data)
        self._game.begin_turn(now, pause)

    def tick_window(self, now: float) -> bool:
        game = self._record
        assert game.turn is not None
        committer = game.seats[game.turn - 1]
        deadline = game.deadline(committer)
        end = game.window_end()
        changed = False
        if deadline is not None and now >= deadline and deadline < end:
            self._game.seat_times_out(committer)
            self._out.to_game(
                PlayerReplacedRequest(game_id=game.id, player_id=committer.local_id, reason="TIMED_OUT")
            )
            changed = True
            if not any(seat.human_active for seat in game.seats):
                self._game.abort(now)
                return True
        if now >= end or game.all_answered():
            self.close_window(now)
            changed = True
        return changed

    def seat_left(self, seat: SeatInfo, now: float) -> None:
        """``seat`` forfeited during a phase: its part goes to a robot (or its window answer is
        none)."""
        if self._record.phase == "SIMULTANEOUS":
            self.repair({seat.local_id})
        elif self._record.all_answered():
            self.close_window(now)
