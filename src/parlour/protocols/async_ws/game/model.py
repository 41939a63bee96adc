"""What the /async service keeps about a game, and the clock arithmetic on it.

A game is one msgspec struct, stored whole (as ``AsyncGameRow.doc``) whenever it changes, so
that a restart rebuilds it exactly (docs/async-decisions.md S10). Every committed turn is also
kept as its own row (the game's replay). Times are seconds on the service's clock; the clock of
the seat whose turn it is runs from ``turn_started`` (a commit's pause pushes that into the
future) and is charged when the turn ends.

A turn is in one of three phases (the Scalable Server text "In game"): ``TURN``, one seat
plays (also the merge of a simultaneous turn or of interruptions, with ``user_data`` or
``interruption_data``); ``SIMULTANEOUS``, the listed seats each give their user data, every one
of their clocks running from ``turn_started`` until it has; ``INTERRUPTION``, the window after an
interruptible commit, charged to the committer (``turn``), that closes ``window`` milliseconds
after ``turn_started``. Every deadline is therefore ``turn_started`` plus something, and
:meth:`AsyncGame.shift` moves them all (S10: a restart does not charge the downtime).
"""

from __future__ import annotations

from typing import Final, Literal

import msgspec

from parlour.protocols.async_ws.game.lifecycle import (
    GameStatus,
    Phase,
    check_phase,
    check_status,
)
from parlour.protocols.async_ws.wire.messages import (
    GameConfiguration,
    OutcomeEntry,
    Penalty,
    PlayerClock,
    PlayerData,
    StatusReport,
    StatusReportPlayer,
)

__all__ = [
    "AsyncGame",
    "Delegation",
    "SeatInfo",
    "SimultaneousSeat",
    "TurnDoc",
    "decode_game",
    "encode_game",
    "encode_turn",
]

SeatState = Literal["ACTIVE", "FORFEITED", "TIMED_OUT", "LEFT"]
#: Why a seat is played by someone else (PlayerTimeoutRequest.status); ABSENT: a simultaneous
#: seat whose player was not connected when the simultaneous turn began.
Delegation = Literal["IDLE", "FORFEITED", "TIMED_OUT", "LEFT", "ROBOT", "ABSENT"]


class SeatInfo(msgspec.Struct, kw_only=True):
    local_id: int
    #: The account sitting here; None for an invited robot.
    player_id: int | None = None
    name: str
    robot: bool = False
    state: SeatState = "ACTIVE"
    #: Seconds left on this seat's clock, as of the end of its last turn (None: no clock).
    remaining: float | None = None
    #: An invitee's answer (the inviter and robots accept by being there).
    accepted: bool = False
    #: Confirmed the outcome (or the abort).
    confirmed: bool = False

    @property
    def human_active(self) -> bool:
        return not self.robot and self.state == "ACTIVE"

    @property
    def robot_reason(self) -> Delegation | None:
        """Why someone else must play this seat's turns, if it must (the text's "Robots")."""
        if self.robot:
            return "ROBOT"
        if self.state != "ACTIVE":
            return self.state
        return None


class SimultaneousSeat(msgspec.Struct, kw_only=True):
    """One seat of a simultaneous turn: its user data once given, and who was asked to give it
    for the seat (a robot, a forfeiter, a player idle, out of time or absent), with why."""

    local_id: int
    user_data: str | None = None
    delegate: int | None = None
    delegation: Delegation | None = None


class AsyncGame(msgspec.Struct, kw_only=True):
    id: int
    config: GameConfiguration
    #: Changed only by ``enter`` (lifecycle.py).
    status: GameStatus
    #: The account that created the game (or sent the invitation): local id 1 (S19).
    creator: int
    #: Set for invitations: the inviter's global id.
    invited_by: int | None = None
    seats: list[SeatInfo] = []
    created: float
    updated: float
    #: The turn being played; 0 before the first (S20: the first turn is 1).
    turn_index: int = 0
    #: Whose turn it is (a local id), and who was asked to play it for a robot or an absent
    #: player (S12's ``active_player`` when it differs), with why.
    turn: int | None = None
    delegate: int | None = None
    delegation: Delegation | None = None
    #: The opaque state and summary (client rules), or the spectator view (server rules).
    state: str = ""
    summary: str | None = None
    next_players: list[int] = []
    #: The human who sent the last commit: first asked to play a robot's turn when present.
    last_actor: int | None = None
    #: When the turn seat's clock starts running: the commit plus its pause.
    turn_started: float = 0.0
    pause_time: int = 0
    #: The idle timer of this turn (seconds, 0 = off) and the last progress reported.
    idle_time: int = 0
    idle_reported: int = 0
    outcome: list[OutcomeEntry] | None = None
    is_ranked: bool = False
    penalties: list[Penalty] = []
    finished: float | None = None
    #: Server rules (S9): the seed of the game's random source and every action, in order.
    seed: int = 0
    actions: list[str] = []
    #: Server rules: the game's state after its first actions (ServerGame.snapshot), taken every
    #: SNAPSHOT_EVERY actions, so that a restart replays only the actions after it.
    snapshot: bytes | None = None
    #: The phase of the turn, changed only by ``enter_phase`` (lifecycle.py); the fields below
    #: it are empty in the TURN phase but for a merge.
    phase: Phase = "TURN"
    #: SIMULTANEOUS: the listed seats, in the committer's order.
    simultaneous: list[SimultaneousSeat] = []
    #: INTERRUPTION: the window's length (ms, from ``turn_started``), the seats that may interrupt,
    #: those that answered (interrupted or declined), the interruptions in the order received,
    #: and the commit's pause, for the turn that begins when the window closes.
    window: int = 0
    interrupters: list[int] = []
    answered: list[int] = []
    interruptions: list[PlayerData] = []
    window_pause: int = 0
    #: A merge turn's data (ActionRequiredRequest and PlayerTimeoutRequest carry them); None on
    #: any other turn.
    user_data: list[PlayerData] | None = None
    interruption_data: list[PlayerData] | None = None

    def seat(self, local_id: int) -> SeatInfo | None:
        if 1 <= local_id <= len(self.seats):
            return self.seats[local_id - 1]
        return None

    def seat_of(self, player_id: int) -> SeatInfo | None:
        for seat in self.seats:
            if seat.player_id == player_id:
                return seat
        return None

    @property
    def open(self) -> bool:
        """An open offer of the lobby (not an invitation), waiting for players."""
        return self.status == "NOT_STARTED" and self.invited_by is None

    @property
    def server_rules(self) -> bool:
        return self.config.rules != "client"

    def candidates(self, offender: SeatInfo) -> list[SeatInfo]:
        """Active humans who may play ``offender``'s turn, in the text's order of preference:
        the last committer, then the order of the last ``next_players``, then the others."""
        order: list[int] = []
        if self.last_actor is not None:
            order.append(self.last_actor)
        order += [local for local in self.next_players if local not in order]
        order += [seat.local_id for seat in self.seats if seat.local_id not in order]
        seats = [self.seats[local - 1] for local in order if 1 <= local <= len(self.seats)]
        return [seat for seat in seats if seat.human_active and seat is not offender]

    def pending(self) -> list[SimultaneousSeat]:
        """The seats of a simultaneous turn that still owe their user data."""
        if self.phase != "SIMULTANEOUS":
            return []
        return [entry for entry in self.simultaneous if entry.user_data is None]

    def enter(self, status: GameStatus) -> None:
        """The one way the game changes status: a move the lifecycle lacks raises."""
        check_status(self.id, self.status, status)
        self.status = status

    def enter_phase(self, phase: Phase) -> None:
        """The one way the turn changes phase: a move the lifecycle lacks raises."""
        check_phase(self.id, self.phase, phase)
        self.phase = phase

    def end_phase(self) -> None:
        """Back to the TURN phase, with no simultaneous seat, window or merge data left."""
        if self.phase != "TURN":
            self.enter_phase("TURN")
        self.simultaneous = []
        self.window = self.window_pause = 0
        self.interrupters, self.answered, self.interruptions = [], [], []
        self.user_data = self.interruption_data = None

    def window_end(self) -> float:
        """When the interruption window closes."""
        return self.turn_started + self.window / 1000

    def all_answered(self) -> bool:
        """No interrupter who could still answer is left."""
        return all(
            local in self.answered or not self.seats[local - 1].human_active for local in self.interrupters
        )

    def shift(self, seconds: float) -> None:
        """Move every deadline of a running game ``seconds`` later (S10: after a restart, the
        clocks, the pause, the idle timer and an interruption window ignore the downtime). They
        are all counted from ``turn_started``."""
        if self.status == "RUNNING":
            self.turn_started += seconds

    # -- Clocks ---------------------------------------------------------------------------------

    def paused(self, now: float) -> bool:
        return self.status == "RUNNING" and now < self.turn_started

    def running(self, local_id: int) -> bool:
        """Whether ``local_id``'s clock runs: the turn's seat (the committer's during an
        interruption window), or a simultaneous seat that has not given its user data."""
        if self.status != "RUNNING":
            return False
        if self.phase == "SIMULTANEOUS":
            return any(entry.local_id == local_id for entry in self.pending())
        return self.turn == local_id

    def remaining(self, seat: SeatInfo, now: float) -> float | None:
        """Seconds left on ``seat``'s clock at ``now`` (it runs only while it must act)."""
        if seat.remaining is None:
            return None
        if self.running(seat.local_id):
            return max(0.0, seat.remaining - max(0.0, now - self.turn_started))
        return seat.remaining

    def charge_seat(self, seat: SeatInfo, now: float, increment: bool = True) -> None:
        """Stop ``seat``'s clock at ``now``: take the time it used, add the increment."""
        if seat.remaining is None:
            return
        seat.remaining = self.remaining(seat, now)
        if increment and seat.remaining is not None and seat.remaining > 0:
            seat.remaining += self.config.clock_increment_seconds

    def charge(self, now: float, increment: bool = True) -> None:
        """End the turn at ``now``: every running clock is charged (see :meth:`running`)."""
        for seat in [seat for seat in self.seats if self.running(seat.local_id)]:
            self.charge_seat(seat, now, increment)

    def clock(self, seat: SeatInfo, now: float) -> PlayerClock:
        armed = self.running(seat.local_id) and seat.remaining is not None
        return PlayerClock(
            player_id=seat.local_id,
            remaining_seconds=None if seat.remaining is None else round(self.remaining(seat, now) or 0.0, 3),
            paused=armed and self.paused(now),
            armed=armed,
        )

    def clocks(self, now: float) -> list[PlayerClock]:
        return [self.clock(seat, now) for seat in self.seats]

    def deadline(self, seat: SeatInfo) -> float | None:
        """When ``seat``'s running clock runs out, if it runs and the seat can still run out."""
        if not self.running(seat.local_id) or seat.remaining is None or seat.state != "ACTIVE":
            return None
        return self.turn_started + seat.remaining

    def clock_deadline(self) -> float | None:
        """When the turn seat's clock runs out, if it has one."""
        seat = self.seat(self.turn) if self.turn else None
        return None if seat is None else self.deadline(seat)

    # -- Reports --------------------------------------------------------------------------------

    def report(self, now: float, presence: dict[int, str], state: str | None = None) -> StatusReport:
        """The StatusReport of S12 (``state`` replaces the stored one: a seat's own view)."""
        config = msgspec.structs.replace(self.config, password=None)
        return StatusReport(
            game_id=self.id,
            configuration=config,
            status=self.status,
            invited_by=self.invited_by,
            players=[
                StatusReportPlayer(
                    local_id=seat.local_id,
                    player_id=seat.player_id,
                    name=seat.name,
                    kind="ROBOT" if seat.robot else "HUMAN",
                    state=seat.state,
                    presence=presence.get(seat.player_id, "OFFLINE")  # type: ignore[arg-type]
                    if seat.player_id is not None
                    else "ONLINE",
                )
                for seat in self.seats
            ],
            # Nobody in particular must act in a simultaneous turn or an interruption window.
            turn=self.turn if self.status == "RUNNING" else None,
            active_player=(self.delegate or self.turn)
            if self.status == "RUNNING" and self.phase == "TURN"
            else None,
            turn_index=self.turn_index,
            state=self.state if state is None else state,
            summary_data=self.summary,
            clocks=self.clocks(now) if self.status != "NOT_STARTED" else [],
            outcome=self.outcome,
            outcome_not_seen=[
                seat.local_id
                for seat in self.seats
                if self.status == "OUTCOME" and not seat.robot and not seat.confirmed
            ],
        )


class TurnDoc(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One committed turn as the replay keeps it."""

    seat: int
    #: Who sent the commit, when it was not the seat itself (a robot seat played by a client).
    by: int | None = None
    state: str = ""
    summary: str | None = None
    next_players: list[int] = []
    action: str | None = None


_game_encoder: Final = msgspec.msgpack.Encoder()
_game_decoder: Final = msgspec.msgpack.Decoder(AsyncGame)


def encode_game(game: AsyncGame) -> bytes:
    return _game_encoder.encode(game)


def decode_game(doc: bytes) -> AsyncGame:
    return _game_decoder.decode(doc)


def encode_turn(turn: TurnDoc) -> bytes:
    return _game_encoder.encode(turn)
