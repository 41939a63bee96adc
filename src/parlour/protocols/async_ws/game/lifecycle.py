"""A game's lifecycle, in one place: its statuses and phases, which of them may follow which,
and the sets of statuses the rest of /async asks about, derived from the tables once.

A game changes status or phase only through ``AsyncGame.enter`` and ``AsyncGame.enter_phase``
(model.py), which check the move against these tables and raise ``IllegalTransition`` on one
they lack: a move that the guards before it should have refused is a bug, never a state.

Status (the text's, S12)::

    NOT_STARTED --> RUNNING --> OUTCOME --> OVER
         |             |           |
         |             +--> ABORTING <--+
         |                     |
         +-----------------> ABORTED

- NOT_STARTED -> RUNNING: every seat taken, or the creator starts early.
- NOT_STARTED -> ABORTED: the creator leaves, an invitee declines, an admin aborts (nobody has
  anything to confirm).
- RUNNING -> OUTCOME: the game is over (GameOverRequest, or the rules under server rules).
- RUNNING or OUTCOME -> ABORTING: no active player is left, or an admin aborts.
- OUTCOME -> OVER, ABORTING -> ABORTED: every human confirmed (or nobody is left to).

Phase (what a RUNNING game waits for): TURN, and from it a SIMULTANEOUS turn or an
INTERRUPTION window, each of which goes back to TURN (its merge turn).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal, TypeAlias

from parlour.protocols.async_ws.wire.messages import GameStatus

__all__ = [
    "CLOSED",
    "FINISHED",
    "LIVE",
    "PHASES",
    "PLAYED",
    "STARTED",
    "STATUSES",
    "WATCHABLE",
    "GameStatus",
    "IllegalTransition",
    "Phase",
    "check_phase",
    "check_status",
]

Phase: TypeAlias = Literal["TURN", "SIMULTANEOUS", "INTERRUPTION"]

#: Each status, and the statuses a game may go to from it.
STATUSES: Final[Mapping[GameStatus, frozenset[GameStatus]]] = {
    "NOT_STARTED": frozenset({"RUNNING", "ABORTED"}),
    "RUNNING": frozenset({"OUTCOME", "ABORTING"}),
    "OUTCOME": frozenset({"OVER", "ABORTING"}),
    "ABORTING": frozenset({"ABORTED"}),
    "OVER": frozenset(),
    "ABORTED": frozenset(),
}

#: Each phase, and the phases a game may go to from it.
PHASES: Final[Mapping[Phase, frozenset[Phase]]] = {
    "TURN": frozenset({"SIMULTANEOUS", "INTERRUPTION"}),
    "SIMULTANEOUS": frozenset({"TURN"}),
    "INTERRUPTION": frozenset({"TURN"}),
}


def _reachable(start: GameStatus) -> frozenset[GameStatus]:
    """``start`` and every status a game can reach from it."""
    seen: set[GameStatus] = set()
    todo = [start]
    while todo:
        status = todo.pop()
        if status not in seen:
            seen.add(status)
            todo.extend(STATUSES[status])
    return frozenset(seen)


#: Statuses in which a game still changes (it has somewhere to go).
LIVE: Final = frozenset(status for status, after in STATUSES.items() if after)
#: Statuses a game never leaves: it is kept as a record only.
FINISHED: Final = frozenset(status for status, after in STATUSES.items() if not after)
#: The statuses of a game that started: RUNNING and every one after it.
STARTED: Final = _reachable("RUNNING")
#: Started and still changing: a game one may watch.
WATCHABLE: Final = STARTED & LIVE
#: Play is over: its results are out, or it is being aborted, or it finished.
PLAYED: Final = STARTED - {"RUNNING"}
#: Finished, or with nothing left but to finish ABORTED: a game nobody may join or start any
#: more (a lobby request for it is told the game is unknown).
CLOSED: Final = FINISHED | frozenset(status for status in LIVE if STATUSES[status] <= FINISHED)


class IllegalTransition(Exception):
    """A move the lifecycle's tables do not have (the guards before it missed a case)."""


def check_status(game_id: int, old: GameStatus, new: GameStatus) -> None:
    if new not in STATUSES[old]:
        raise IllegalTransition(f"game {game_id}: no move from {old} to {new}")


def check_phase(game_id: int, old: Phase, new: Phase) -> None:
    if new not in PHASES[old]:
        raise IllegalTransition(f"game {game_id}: no move from phase {old} to {new}")
