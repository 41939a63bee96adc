"""What a request will change, decided before anything changes: a refusal or a plan.

A plan is a small immutable value (a named tuple: cheap to make on every request) computed by checks.py from the game as it is and the request;
applying it (machine.Game) changes the game without checking anything again. A refusal carries
the code the client is told and why.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from parlour.protocols.async_ws.wire.messages import CommitActionRequest, GameConfiguration

__all__ = [
    "Action",
    "Answer",
    "Commit",
    "Confirm",
    "Create",
    "Finish",
    "Forfeit",
    "Interrupt",
    "Invite",
    "Join",
    "Leave",
    "Matched",
    "Multicast",
    "Refusal",
    "Start",
    "UserData",
]


class Refusal(NamedTuple):
    """Nothing changes: ``code`` (an ErrorCode, or the cause of a denial) and why."""

    code: str
    message: str = ""


class Commit(NamedTuple):
    """A client-rules commit of ``acting``'s turn, sent by the seat ``sender``; it opens an
    interruption window, a simultaneous turn, or the next player's turn."""

    acting: int
    sender: int
    request: CommitActionRequest
    opens: Literal["TURN", "SIMULTANEOUS", "INTERRUPTION"]


class Action(NamedTuple):
    """A server-rules commit: ``action`` (legal now) for ``acting``, sent by ``sender``."""

    acting: int
    sender: int
    action: str
    request_id: str | None


class UserData(NamedTuple):
    """``acting``'s user data in a simultaneous turn, sent by ``sender``; ``merges`` when it is
    the last owed."""

    acting: int
    sender: int
    user_data: str
    broadcast: bool
    request_id: str | None
    merges: bool


class Interrupt(NamedTuple):
    """``seat`` answers the open window: its interruption, or none (``declines``)."""

    seat: int
    turn: int
    data: str
    declines: bool
    request_id: str | None
    closes: bool


class Multicast(NamedTuple):
    """Transient data from ``sender`` to these seats (never stored)."""

    sender: int
    data: str
    recipients: tuple[int, ...]
    notification: str | None


class Forfeit(NamedTuple):
    """``seat`` leaves a running game; robots play it from now."""

    seat: int
    request_id: str | None


class Finish(NamedTuple):
    """A client-rules GameOverRequest: the scores by seat (score, rank) and the final state."""

    scores: tuple[tuple[int, float, int], ...]
    ranked: bool
    final_state: str | None


class Confirm(NamedTuple):
    """``seat`` saw the outcome (or the abort); ``closes`` when it was the last human to."""

    seat: int
    closes: bool


class Join(NamedTuple):
    """``player_id`` takes the next seat of an open game; ``starts`` when that fills it."""

    player_id: int
    request_id: str | None
    starts: bool


class Leave(NamedTuple):
    """``player_id`` leaves a game that has not started: the creator aborts it, an invitee
    declines it (which aborts it too), anyone else just frees the seat."""

    player_id: int
    request_id: str | None
    kind: Literal["ABORT", "DECLINE", "LEAVE"]


class Start(NamedTuple):
    """The game starts; ``starter``'s GameCreatedRequest answers ``request_id``."""

    starter: int | None = None
    request_id: str | None = None


class Answer(NamedTuple):
    """An invitee's answer; a decline aborts the invitation, the last acceptance starts it."""

    player_id: int
    accept: bool
    request_id: str | None
    starts: bool


class Create(NamedTuple):
    """A new open game of the lobby, its creator in seat 1."""

    creator: int
    config: GameConfiguration
    state: str
    summary: str | None
    request_id: str | None


class Invite(NamedTuple):
    """A new invitation: the inviter in seat 1, then each friend (0: a robot) in order;
    ``ignored`` when an invitee ignores the inviter (S14)."""

    creator: int
    config: GameConfiguration
    friends: tuple[int, ...]
    ignored: bool
    request_id: str | None


class Matched(NamedTuple):
    """A game quick play found (state/matchmaking.py): ``players`` in their seats in this order,
    then ``robots`` robot seats; it starts at once (everyone asked for it by queueing)."""

    config: GameConfiguration
    players: tuple[int, ...]
    robots: int
