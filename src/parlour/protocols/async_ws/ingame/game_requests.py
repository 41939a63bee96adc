"""The requests to one game, as one table: for each request type, what is said when no game has
its id, how the game is asked for a plan, how a refusal is answered, and the transition that
applies each kind of plan. One handler walks it (:func:`handle`).

A request is planned first (``Game.plan_*``: game/checks.py, the game unchanged) into a refusal
or a plan (game/plans.py); a refusal is answered, a plan is applied by the game's transition for
its type (game/machine.py), which stores the game and tells the players. The rows cover the
lobby's games before they start (join, leave, start early, answer an invitation) and the
requests of a started game (turns and the end: play.py; phases: phase_requests.py). Each of
those modules takes its handlers from here with :func:`handlers`.

The answers are the protocol's: an ``ErrorRequest`` (:func:`refuse`) unless the request has a
denial of its own (``LobbyJoinDeniedRequest``, ``LobbyStartGameDeniedRequest``,
``InterruptActionErrorRequest``); a game that is not there is answered as any other refusal of
the same request.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, NamedTuple

from parlour.protocols.async_ws.game.checks import INTERRUPT_REASONS, WindowDue
from parlour.protocols.async_ws.game.machine import Game
from parlour.protocols.async_ws.game.plans import (
    Action,
    Answer,
    Commit,
    Confirm,
    Finish,
    Forfeit,
    Interrupt,
    Join,
    Leave,
    Multicast,
    Refusal,
    Start,
    UserData,
)
from parlour.protocols.async_ws.state.hub import Handler, Hub, Session
from parlour.protocols.async_ws.wire.messages import (
    ErrorCode,
    InterruptActionErrorRequest,
    LobbyJoinDeniedRequest,
    LobbyStartGameDeniedRequest,
)

__all__ = ["GAME_REQUESTS", "GameRequest", "handle", "handlers", "refuse"]

#: Asks the game for a plan: (hub, game, the sender's account, the request, now) -> a plan or a
#: Refusal. Nothing changes yet.
Planner = Callable[[Hub, Game, int, Any, float], object]
#: A transition of the game that applies one kind of plan: (game, plan, now).
Transition = Callable[[Game, Any, float], None]
#: Answers a refusal: (hub, the sender's session, the refusal, the request).
Reply = Callable[[Hub, Session, Refusal, Any], None]


def refuse(hub: Hub, session: Session, refusal: Refusal, request: Any) -> None:
    """A request that changes nothing: the ErrorRequest of its refusal."""
    code: ErrorCode = refusal.code  # type: ignore[assignment]
    hub.error(session.conn, code, refusal.message, request)


def deny_join(hub: Hub, session: Session, refusal: Refusal, msg: Any) -> None:
    """A join refused: LobbyJoinDeniedRequest, its cause the refusal's code."""
    hub.send(
        session.conn,
        LobbyJoinDeniedRequest(game_id=msg.game_id, cause=refusal.code, request_id=msg.request_id),  # type: ignore[arg-type]
    )


def deny_start(hub: Hub, session: Session, refusal: Refusal, msg: Any) -> None:
    """An early start refused: LobbyStartGameDeniedRequest, its cause the refusal's code."""
    hub.send(
        session.conn,
        LobbyStartGameDeniedRequest(game_id=msg.game_id, cause=refusal.code, request_id=msg.request_id),  # type: ignore[arg-type]
    )


def deny_interrupt(hub: Hub, session: Session, refusal: Refusal, msg: Any) -> None:
    """An interruption refused for a reason of the window: InterruptActionErrorRequest (see
    phase_requests.py); any other refusal is an ErrorRequest."""
    if refusal.code not in INTERRUPT_REASONS:
        return refuse(hub, session, refusal, msg)
    hub.send(
        session.conn,
        InterruptActionErrorRequest(
            game_id=msg.game_id,
            turn_index=msg.turn_index,
            reason=refusal.code,  # type: ignore[arg-type]
            request_id=msg.request_id,
        ),
    )


def close_due_window(game: Game, due: WindowDue, now: float) -> None:
    """checks.WindowDue: the window is due and not yet ticked, so it closes before the refusal
    is answered."""
    game.close_due_window(now)


class GameRequest(NamedTuple):
    """One row of the table: a request type routed to the game its ``game_id`` names."""

    #: What is said when no game has the id: answered as any refusal of the request.
    unknown: Refusal
    #: The planning call.
    plan: Planner
    #: The transition for each kind of plan. A refusal applies nothing, except one listed here
    #: (checks.WindowDue), which is applied before it is answered.
    apply: Mapping[type, Transition]
    #: How a refusal is answered.
    answer: Reply = refuse


#: Every request routed to one game, by message type.
GAME_REQUESTS: Final[Mapping[str, GameRequest]] = {
    # -- The lobby's games, before they start (lobby/lobby_requests.py creates them) -------------
    "LobbyJoinGameRequest": GameRequest(
        unknown=Refusal("UNKNOWN_GAME"),
        plan=lambda hub, game, player, msg, now: game.plan_join(player, hub.games.playing(player), msg),
        apply={Join: Game.join},
        answer=deny_join,
    ),
    "LobbyLeaveGameRequest": GameRequest(
        unknown=Refusal("UNKNOWN_GAME", "you are in no open game with this id"),
        plan=lambda hub, game, player, msg, now: game.plan_leave(player, msg.request_id),
        apply={Leave: Game.leave},
    ),
    "LobbyStartGameRequest": GameRequest(
        unknown=Refusal("UNKNOWN_GAME"),
        plan=lambda hub, game, player, msg, now: game.plan_start(player, msg.request_id),
        apply={Start: Game.start},
        answer=deny_start,
    ),
    "AnswerInvitationRequest": GameRequest(
        unknown=Refusal("UNKNOWN_GAME", "you have no invitation to answer for this game"),
        plan=lambda hub, game, player, msg, now: game.plan_answer(player, msg),
        apply={Answer: Game.answer},
    ),
    # -- Turns, forfeits and the end (play.py) ------------------------------------------------------
    "CommitActionRequest": GameRequest(
        unknown=Refusal("UNKNOWN_GAME", "no game in progress with this id"),
        plan=lambda hub, game, player, msg, now: game.plan_commit(player, msg),
        apply={Commit: Game.commit, Action: Game.act},
    ),
    "GameForfeitRequest": GameRequest(
        unknown=Refusal("UNKNOWN_GAME", "you are not in a game in progress with this id"),
        plan=lambda hub, game, player, msg, now: game.plan_forfeit(player, msg.request_id),
        # Quitting a game that has not started leaves it.
        apply={Forfeit: Game.forfeit, Leave: Game.leave},
    ),
    "GameOverRequest": GameRequest(
        unknown=Refusal("UNKNOWN_GAME", "no game in progress with this id"),
        plan=lambda hub, game, player, msg, now: game.plan_finish(player, msg),
        apply={Finish: Game.game_over},
    ),
    "GameOutcomeConfirmationRequest": GameRequest(
        unknown=Refusal("UNKNOWN_GAME", "you have no game in OUTCOME with this id"),
        plan=lambda hub, game, player, msg, now: game.plan_confirm(player, "OUTCOME"),
        apply={Confirm: Game.confirm},
    ),
    "GameAbortedConfirmationRequest": GameRequest(
        unknown=Refusal("UNKNOWN_GAME", "you have no game in ABORTING with this id"),
        plan=lambda hub, game, player, msg, now: game.plan_confirm(player, "ABORTING"),
        apply={Confirm: Game.confirm},
    ),
    # -- Simultaneous turns, interruptions, multicast (phase_requests.py) ---------------------------
    "UpdateUserDataRequest": GameRequest(
        unknown=Refusal("UNKNOWN_GAME", "no game in progress with this id"),
        plan=lambda hub, game, player, msg, now: game.plan_user_data(player, msg),
        apply={UserData: Game.give_user_data},
    ),
    "InterruptActionRequest": GameRequest(
        unknown=Refusal("UNKNOWN_GAME", "no game in progress with this id"),
        plan=lambda hub, game, player, msg, now: game.plan_interrupt(player, msg, now),
        apply={Interrupt: Game.interrupt, WindowDue: close_due_window},
        answer=deny_interrupt,
    ),
    "MulticastDataRequest": GameRequest(
        unknown=Refusal("UNKNOWN_GAME", "no live game with this id"),
        plan=lambda hub, game, player, msg, now: game.plan_multicast(player, msg),
        apply={Multicast: Game.multicast},
    ),
}


def handle(hub: Hub, session: Session, msg: Any, now: float) -> None:
    """Any request of :data:`GAME_REQUESTS`: its game found, asked for a plan, the plan applied
    or the refusal answered."""
    row = GAME_REQUESTS[type(msg).__name__]
    game = hub.games.game(msg.game_id)
    if game is None:
        return row.answer(hub, session, row.unknown, msg)
    assert session.player_id is not None  # handlers run only for authenticated sessions
    plan = row.plan(hub, game, session.player_id, msg, now)
    apply = row.apply.get(type(plan))
    if apply is not None:
        apply(game, plan, now)
    elif not isinstance(plan, Refusal):
        raise TypeError(f"{type(msg).__name__}: no transition applies {type(plan).__name__}")
    if isinstance(plan, Refusal):
        row.answer(hub, session, plan, msg)


def handlers(*kinds: str) -> dict[str, Handler]:
    """The service's handlers of these request types, each a row of :data:`GAME_REQUESTS`."""
    missing = [kind for kind in kinds if kind not in GAME_REQUESTS]
    if missing:
        raise KeyError(f"not in GAME_REQUESTS: {missing}")
    return dict.fromkeys(kinds, handle)
