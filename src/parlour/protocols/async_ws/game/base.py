"""The state of one game and the ways it speaks: its record (the stored AsyncGame), its rules
adapter (S9), the host it tells (host.py), and what all games share (GameContext).

The transitions are layered on this class: ending.py (abort, outcome, close), turns.py (asking
for turns, robots, time-outs), phases.py (simultaneous turns, interruption windows) and
machine.py (the requests: one plan and one transition each).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial

from parlour.core.effects import Think
from parlour.core.ids import IdSource
from parlour.protocols.async_ws.game.host import GameHost, Notice
from parlour.protocols.async_ws.game.model import AsyncGame, SeatInfo, TurnDoc
from parlour.protocols.async_ws.game.roster import Roster
from parlour.protocols.async_ws.game.rules import ServerGame
from parlour.protocols.async_ws.game.store_ledger import Ledger
from parlour.protocols.async_ws.wire.limits import AsyncLimits
from parlour.protocols.async_ws.wire.messages import ServerMessage, StatusReport

__all__ = ["GameBase", "GameContext", "RobotTimer"]

#: Times a robot's decision (rules name, the decision): given by the composition root
#: (parlour.metrics); no clock is read in here.
RobotTimer = Callable[[str, Callable[[], str]], str]


class GameContext:
    """What every game of the service shares: the host, the limits, the seed source (secrets:
    a seed foretells every deal, parlour.core.ids), the ledger, the roster of live games and the
    robot timer. The registry (games.Games) creates it."""

    __slots__ = ("host", "ids", "ledger", "limits", "offload", "robot_timer", "roster", "thinking", "thinks")

    def __init__(self, host: GameHost, limits: AsyncLimits, ids: IdSource) -> None:
        self.host = host
        self.limits = limits
        self.ids = ids
        self.ledger = Ledger()
        self.roster = Roster()
        self.robot_timer: RobotTimer | None = None
        #: Whether slow robots (the hard levels, searches) decide away from the event loop:
        #: Think effects, answered through Games.thought. Set by the composition root, whose
        #: runtime runs them; otherwise (tests driving the service) every robot moves at once.
        self.offload = False
        #: This input's Think effects, and each game's position (actions so far) whose robot
        #: decision is on its way: one at a time per game.
        self.thinks: list[Think] = []
        self.thinking: dict[int, int] = {}


class GameBase:
    __slots__ = ("_record", "context", "host", "rules")

    def __init__(self, record: AsyncGame, rules: ServerGame | None, context: GameContext) -> None:
        self._record = record
        #: Server rules (S9) while the game runs; None under client rules or once it ended.
        self.rules = rules
        self.context = context
        self.host = context.host

    @property
    def record(self) -> AsyncGame:
        """The stored game. Only the game changes it; everyone else reads it."""
        return self._record

    @property
    def id(self) -> int:
        return self._record.id

    @property
    def status(self) -> str:
        return self._record.status

    # -- Views ----------------------------------------------------------------------------------

    def view(self, local_id: int | None) -> str:
        """What ``local_id`` may see (server rules), or the one opaque state (client rules)."""
        rules = self.rules
        return self._record.state if rules is None else rules.view(local_id)

    def presences(self) -> dict[int, str]:
        online = self.host.online
        return {
            seat.player_id: "ONLINE" if online(seat.player_id) else "OFFLINE"
            for seat in self._record.seats
            if seat.player_id is not None
        }

    def report(self, now: float, player_id: int | None) -> StatusReport:
        """The StatusReport for ``player_id`` (its own view under server rules; S12)."""
        game = self._record
        seat = game.seat_of(player_id) if player_id is not None else None
        state = self.view(seat.local_id if seat else None) if game.server_rules else None
        return game.report(now, self.presences(), state)

    # -- Output ---------------------------------------------------------------------------------

    def to_game(self, message: ServerMessage, skip: Iterable[int] = (), observers: bool = True) -> None:
        """One message (encoded once) to every human of the game but ``skip``, and to its
        observers (S17) unless ``observers`` is False (a seat's own view, say)."""
        skipped = set(skip)
        audience = [
            seat.player_id
            for seat in self._record.seats
            if seat.player_id is not None and seat.player_id not in skipped
        ]
        if observers:
            audience += [
                player_id for player_id in self.host.observers(self._record.id) if player_id not in skipped
            ]
        self.host.send_many(audience, message)

    def to_observers(self, message: ServerMessage, skip: tuple[int, ...] = ()) -> None:
        """Observers' copy of a message sent to one seat (S17: they get every event the players
        get). Under server rules ``message`` must already hold the spectator view."""
        for observer in self.host.observers(self._record.id):
            if observer not in skip:
                self.host.send(observer, message)

    def save(self, now: float, turn: TurnDoc | None = None) -> None:
        """Store the game (and a committed turn) before anything of this input is shown."""
        self.context.ledger.changed(self._record, now, turn)

    def think_later(self, rules: ServerGame, local_id: int) -> bool:
        """Whether the robot's decision for ``local_id`` is asked of the robots' process (a slow
        robot would hold up every other game and connection while it thinks): a Think for the
        game's position, unless one is on its way already. The answer comes back as an input
        of its own (turns.Turns.thought)."""
        context = self.context
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
        timer = self.context.robot_timer
        if timer is None:
            return rules.robot_action(local_id)
        return timer(rules.rules, partial(rules.robot_action, local_id))

    # -- Push notifications (S16): only players who are not connected get them -----------------

    def notify_turn(self, seat: SeatInfo, now: float) -> int:
        """``seat`` is asked to play: YOUR_TURN, or YOUR_TURN_INVITE with the inviter's name in a
        game created by invitation. The inviter itself gets YOUR_TURN: its own name would tell it
        nothing."""
        game = self._record
        if seat.player_id is None or seat.robot:
            return 0
        inviter = game.invited_by
        if inviter is not None and inviter != seat.player_id:
            return self.host.notify(
                seat.player_id, "YOUR_TURN_INVITE", game.id, game.turn_index, now, inviter
            )
        return self.host.notify(seat.player_id, "YOUR_TURN", game.id, game.turn_index, now)

    def notify_robot_turn(self, chosen: SeatInfo, now: float) -> int:
        """``chosen`` is asked to play another seat's turn and is not connected: YOUR_TURN_ROBOT."""
        if chosen.player_id is None or chosen.robot:
            return 0
        game = self._record
        return self.host.notify(chosen.player_id, "YOUR_TURN_ROBOT", game.id, game.turn_index, now)

    def notify_invited(self, invitee: int, now: float) -> int:
        """An invitation waits for ``invitee``'s answer: CONFIRM_INVITATION, naming the inviter."""
        game = self._record
        inviter = game.invited_by if game.invited_by is not None else game.creator
        return self.host.notify(invitee, "CONFIRM_INVITATION", game.id, game.turn_index, now, inviter)

    def notify_answered(self, invitee: int, accepted: bool, now: float) -> int:
        """INVITEE_ACCEPTED / INVITEE_DECLINED to the inviter, naming the invitee."""
        game = self._record
        inviter = game.invited_by if game.invited_by is not None else game.creator
        if inviter == invitee:
            return 0
        kind: Notice = "INVITEE_ACCEPTED" if accepted else "INVITEE_DECLINED"
        return self.host.notify(inviter, kind, game.id, game.turn_index, now, invitee)

    def notify_over(self, now: float) -> int:
        """GAME_OVER to every human of the game (forfeited and timed-out seats too: every human
        must confirm the outcome)."""
        game = self._record
        return sum(
            self.host.notify(seat.player_id, "GAME_OVER", game.id, game.turn_index, now)
            for seat in game.seats
            if seat.player_id is not None and not seat.robot
        )

    def notify_data(self, player_id: int, text: str, now: float) -> int:
        """A MulticastDataRequest asked to tell absent recipients ``text`` (CLIENT_DATA)."""
        game = self._record
        return self.host.notify(player_id, "CLIENT_DATA", game.id, game.turn_index, now, text=text)
