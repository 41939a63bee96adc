"""What a game says and to whom: its messages to its players and observers (S17), and the push
notifications of those who are not connected (S16). Everything goes through the game's host
(host.py) by account id; nothing here changes the game, whose record it only reads."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from parlour.protocols.async_ws.game.host import GameHost, Notice
from parlour.protocols.async_ws.game.model import AsyncGame, SeatInfo
from parlour.protocols.async_ws.wire.messages import ServerMessage

__all__ = ["Outbound"]


class Outbound:
    """The outbound messages and notifications of one game, made by the game (machine.Game)."""

    __slots__ = ("_host", "_record")

    def __init__(self, record: AsyncGame, host: GameHost) -> None:
        self._record = record
        self._host = host

    # -- Who is there ---------------------------------------------------------------------------

    def online(self, player_id: int) -> bool:
        return self._host.online(player_id)

    def observers(self) -> Sequence[int]:
        """Who watches the game, in account id order."""
        return self._host.observers(self._record.id)

    def presences(self) -> dict[int, str]:
        online = self._host.online
        return {
            seat.player_id: "ONLINE" if online(seat.player_id) else "OFFLINE"
            for seat in self._record.seats
            if seat.player_id is not None
        }

    # -- Messages -------------------------------------------------------------------------------

    def send(self, player_id: int | None, message: ServerMessage) -> bool:
        """The message to one account if it is connected; whether it was."""
        return self._host.send(player_id, message)

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
            audience += [player_id for player_id in self.observers() if player_id not in skipped]
        self._host.send_many(audience, message)

    def to_observers(self, message: ServerMessage, skip: tuple[int, ...] = ()) -> None:
        """Observers' copy of a message sent to one seat (S17: they get every event the players
        get). Under server rules ``message`` must already hold the spectator view."""
        for observer in self.observers():
            if observer not in skip:
                self._host.send(observer, message)

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
            return self._host.notify(
                seat.player_id, "YOUR_TURN_INVITE", game.id, game.turn_index, now, inviter
            )
        return self._host.notify(seat.player_id, "YOUR_TURN", game.id, game.turn_index, now)

    def notify_robot_turn(self, chosen: SeatInfo, now: float) -> int:
        """``chosen`` is asked to play another seat's turn and is not connected: YOUR_TURN_ROBOT."""
        if chosen.player_id is None or chosen.robot:
            return 0
        game = self._record
        return self._host.notify(chosen.player_id, "YOUR_TURN_ROBOT", game.id, game.turn_index, now)

    def notify_invited(self, invitee: int, now: float) -> int:
        """An invitation waits for ``invitee``'s answer: CONFIRM_INVITATION, naming the inviter."""
        game = self._record
        inviter = game.invited_by if game.invited_by is not None else game.creator
        return self._host.notify(invitee, "CONFIRM_INVITATION", game.id, game.turn_index, now, inviter)

    def notify_answered(self, invitee: int, accepted: bool, now: float) -> int:
        """INVITEE_ACCEPTED / INVITEE_DECLINED to the inviter, naming the invitee."""
        game = self._record
        inviter = game.invited_by if game.invited_by is not None else game.creator
        if inviter == invitee:
            return 0
        kind: Notice = "INVITEE_ACCEPTED" if accepted else "INVITEE_DECLINED"
        return self._host.notify(inviter, kind, game.id, game.turn_index, now, invitee)

    def notify_over(self, now: float) -> int:
        """GAME_OVER to every human of the game (forfeited and timed-out seats too: every human
        must confirm the outcome)."""
        game = self._record
        return sum(
            self._host.notify(seat.player_id, "GAME_OVER", game.id, game.turn_index, now)
            for seat in game.seats
            if seat.player_id is not None and not seat.robot
        )

    def notify_data(self, player_id: int, text: str, now: float) -> int:
        """A MulticastDataRequest asked to tell absent recipients ``text`` (CLIENT_DATA)."""
        game = self._record
        return self._host.notify(player_id, "CLIENT_DATA", game.id, game.turn_index, now, text=text)
