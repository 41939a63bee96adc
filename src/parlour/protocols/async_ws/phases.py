"""Simultaneous turns, interruptions and multicast (scalable-server-protocol.rst "Simultaneous Game
Turn", "Pausing Clock in a simultaneous turn", "Interruptions", "Multicast"; scalable-server-notes.md
S9, S10, S20; scalable-server-catalogue.md items 89-105).

A game is in one of three phases (``AsyncGame.phase``, model.py). play.py runs the ``TURN`` phase,
including the merge turn that follows the two others, and hands the game here while it is
``SIMULTANEOUS`` or ``INTERRUPTION``. Only ``rules: "client"`` games enter them: with a rules
plugin (S9) Parlour orders the turns itself, and asking for either is a ``BAD_REQUEST``.

Where the text is silent, Parlour decides:

* ``simultaneous_players`` must be non-empty, name seats of the game, and name each once;
  ``simultaneous_players`` without ``next_simultaneous`` (and ``interruption_players`` without a
  window) is refused too (``BAD_REQUEST``, the text's "simultaneous_players are invalid").
  A commit that begins a simultaneous turn, like a merge, may leave out ``next_players``: the
  current ones are kept (the merger is chosen from them).
* A simultaneous seat that a robot must play, or whose player is not connected when the turn
  begins, is asked of a client with ``PlayerTimeoutRequest(expected="UpdateUserDataRequest")``
  (status ``ROBOT``, ``FORFEITED``, ``TIMED_OUT`` or ``ABSENT``), chosen as for any robot turn
  (the last committer, then ``next_players`` order, present players first). An absent player
  who comes back gets its ``UserDataUpdateRequiredRequest`` and may still answer: the first
  answer for a seat wins, a second gets ``NOT_YOUR_TURN`` (as for the idle timer's race).
* Clocks: each simultaneous seat's clock runs from the start of the phase (after its pause)
  until it has given its user data, which also earns it the clock increment. The idle timer
  counts from the same start and reports the seats that still owe data and were not handed to
  someone else; at 100 % each of them is handed over (status ``IDLE``). An exhausted clock
  replaces the player (``PlayerReplacedRequest``) and hands the seat over (``TIMED_OUT``).
* Merger (both kinds of merge): the first of ``next_players`` if present or played by a robot
  (an invited robot, a forfeiter, a player out of time: then ``PlayerTimeoutRequest`` with the
  data, as on any robot turn); otherwise the first present active player of the phase (the
  simultaneous seats in their order; the interrupters in the order they interrupted, then the
  committer); with nobody present, the first of ``next_players`` still (it gets its turn when
  it comes back). The merge keeps the turn index of the commit that opened the phase (S20: one
  index per commit; the interruption diagram's ``turn_index=3`` is the same drawing slip).
* Interruptions: the committer gets its ``ActionCommitedRequest`` (the direct reply) and then,
  like every player and observer, the window's ``GameStateUpdatedRequest``. The window lasts at
  most :data:`MAX_WINDOW_MS`; the committer may not interrupt its own action. Only active
  humans may interrupt (``InterruptActionRequest`` has no ``player_id`` to play a robot's
  part), each at most once. ``no_more_interruption=true`` is its sender's answer "I will not
  interrupt" (its ``interruption_data`` is ignored; no reply is sent): one interrupter cannot
  take the chance away from the others, but the window closes as soon as every interrupter
  who can answer has answered (interrupted or declined), or at once if none can. Refusals are
  ``InterruptActionErrorRequest``: ``WINDOW_CLOSED`` (no window open for that ``turn_index``),
  ``NOT_ALLOWED`` (not an interrupter, no longer active, or ``turn`` is not the interrupted
  seat), ``ALREADY_INTERRUPTED`` (this interrupter already answered). A commit's ``pause_time``
  applies to the turn that begins when the window closes.
* Multicast: any active player of a live game may send; ``recipient_ids`` must be seats of the
  game; the sender always gets its copy first, then each connected player among the recipients
  (all seats when empty). Observers get nothing: the data is the players'. Nothing is stored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import msgspec

from parlour.protocols.async_ws import play
from parlour.protocols.async_ws.hub import Hub, Session
from parlour.protocols.async_ws.messages import (
    ActionInterruptedRequest,
    ClientDataRequest,
    ClockPausedRequest,
    CommitActionRequest,
    GameStateUpdatedRequest,
    GameUserDataUpdatedRequest,
    InterruptActionErrorRequest,
    InterruptActionRequest,
    InterruptionOverRequest,
    MulticastDataRequest,
    PlayerData,
    PlayerIdleProgressRequest,
    PlayerReplacedRequest,
    PlayerTimeoutRequest,
    UpdateUserDataRequest,
    UserDataUpdatedRequest,
    UserDataUpdateRequiredRequest,
)
from parlour.protocols.async_ws.model import LIVE, AsyncGame, Delegation, SeatInfo, SimultaneousSeat

__all__ = [
    "MAX_WINDOW_MS",
    "PHASE_HANDLERS",
    "begin_simultaneous",
    "check_commit",
    "hand_over",
    "interrupt",
    "multicast",
    "open_window",
    "resend",
    "seat_left",
    "tick",
    "update_user_data",
]

#: The longest interruption window a commit may ask for (the text gives none; an animation's length).
MAX_WINDOW_MS: Final = 60_000


# -- Commits that open a phase (called by play.commit) ---------------------------------------------


def check_commit(game: AsyncGame, acting: SeatInfo, msg: CommitActionRequest) -> str | None:
    """What is wrong with a commit's simultaneous or interruption fields, if anything
    (the text's BAD_REQUEST: "simultaneous_players are invalid", "interruptible configuration
    is invalid"). ``next_simultaneous`` with a window is refused when the message is decoded."""
    if msg.simultaneous_players and not msg.next_simultaneous:
        return "`simultaneous_players` needs `next_simultaneous`"
    if msg.next_simultaneous:
        problem = _seat_list(game, msg.simultaneous_players, "simultaneous_players")
        if problem is not None:
            return problem
    if msg.interruption_players and not msg.interruption_window_duration:
        return "`interruption_players` needs `interruption_window_duration`"
    if msg.interruption_window_duration:
        if msg.interruption_window_duration > MAX_WINDOW_MS:
            return f"`interruption_window_duration` may be at most {MAX_WINDOW_MS} ms"
        problem = _seat_list(game, msg.interruption_players, "interruption_players")
        if problem is not None:
            return problem
        if acting.local_id in msg.interruption_players:
            return "`interruption_players` cannot name the seat whose action it is"
    return None


def _seat_list(game: AsyncGame, locals_: list[int], field: str) -> str | None:
    if not locals_:
        return f"`{field}` must name at least one seat"
    for local in locals_:
        if game.seat(local) is None:
            return f"`{field}` names seat {local}, not in this game"
    if len(set(locals_)) != len(locals_):
        return f"`{field}` names a seat twice"
    return None


def begin_simultaneous(hub: Hub, game: AsyncGame, msg: CommitActionRequest, now: float) -> None:
    """The commit was acknowledged: each listed seat is asked for its user data, its player with
    UserDataUpdateRequiredRequest, or a client playing it. One pause for all their clocks."""
    game.phase = "SIMULTANEOUS"
    game.turn = game.delegate = game.delegation = None
    game.simultaneous = [SimultaneousSeat(local_id=local) for local in msg.simultaneous_players]
    game.turn_started = now + msg.pause_time
    game.pause_time = msg.pause_time
    game.idle_reported = 0
    required = _required(game)
    for entry in game.simultaneous:
        seat = game.seats[entry.local_id - 1]
        reason: Delegation | None = seat.robot_reason
        if reason is None and seat.player_id not in hub.online:
            reason = "ABSENT"
        if reason is None:
            hub.to_player(seat.player_id, required)
        else:
            _delegate(hub, game, entry, reason)
    play.to_observers(hub, game, required)
    if msg.pause_time:
        # Only one ClockPausedRequest, to everyone (the text's "Pausing Clock in a simultaneous turn").
        hub.to_game(
            game,
            ClockPausedRequest(
                game_id=game.id, pause_time=msg.pause_time, player_ids=msg.simultaneous_players
            ),
        )


def open_window(hub: Hub, game: AsyncGame, acting: SeatInfo, msg: CommitActionRequest, now: float) -> None:
    """The commit was acknowledged: its window opens, on the committer's clock."""
    game.phase = "INTERRUPTION"
    game.turn = acting.local_id
    game.delegate = game.delegation = None
    game.turn_started = now
    game.pause_time = game.idle_reported = 0
    game.window = msg.interruption_window_duration
    game.window_pause = msg.pause_time
    game.interrupters = list(msg.interruption_players)
    game.answered, game.interruptions = [], []
    hub.to_game(
        game,
        GameStateUpdatedRequest(
            game_id=game.id,
            state=game.state,
            turn_index=game.turn_index,
            player_id=acting.local_id,
            interruption_window_duration=game.window,
        ),
    )
    if _all_answered(game):
        _close_window(hub, game, now)


# -- Simultaneous turns -----------------------------------------------------------------------------


def _required(game: AsyncGame) -> UserDataUpdateRequiredRequest:
    return UserDataUpdateRequiredRequest(
        game_id=game.id, state=game.state, turn_index=game.turn_index, pause_time=game.pause_time
    )


def _notice(game: AsyncGame, entry: SimultaneousSeat) -> PlayerTimeoutRequest:
    return PlayerTimeoutRequest(
        game_id=game.id,
        offender_id=entry.local_id,
        status=entry.delegation or "ROBOT",
        state=game.state,
        turn_index=game.turn_index,
        expected="UpdateUserDataRequest",
    )


def _delegate(hub: Hub, game: AsyncGame, entry: SimultaneousSeat, reason: Delegation) -> None:
    """Someone else gives ``entry``'s user data: chosen as for any robot turn."""
    candidates = game.candidates(game.seats[entry.local_id - 1])
    if not candidates:
        entry.delegate = entry.delegation = None  # its own player alone can: it will be asked on return
        return
    present = [seat for seat in candidates if seat.player_id in hub.online]
    chosen = (present or candidates)[0]
    entry.delegate, entry.delegation = chosen.local_id, reason
    notice = _notice(game, entry)
    hub.to_player(chosen.player_id, notice)
    play.to_observers(hub, game, notice, skip=(chosen.player_id,) if chosen.player_id else ())


def _repair(hub: Hub, game: AsyncGame, changed: set[int]) -> None:
    """Seats in ``changed`` stopped being active: their pending user data goes to someone else,
    as does what they were asked to give for others."""
    for entry in game.pending():
        gone = entry.delegate is not None and not game.seats[entry.delegate - 1].human_active
        if entry.local_id in changed or gone:
            reason = game.seats[entry.local_id - 1].robot_reason or entry.delegation
            if reason is not None:
                _delegate(hub, game, entry, reason)


def update_user_data(hub: Hub, session: Session, msg: UpdateUserDataRequest, now: float) -> None:
    found = play.seat_for(hub, session, msg.game_id, msg)
    if found is None:
        return
    game, sender = found
    conn = session.conn
    if game.server_rules:
        return hub.error(conn, "BAD_REQUEST", "this game has server rules: it has no simultaneous turns", msg)
    acting = sender
    if msg.player_id is not None and msg.player_id != sender.local_id:
        target = game.seat(msg.player_id)
        if target is None:
            return hub.error(conn, "UNKNOWN_PLAYER", f"no seat {msg.player_id} in this game", msg)
        acting = target
    if acting is sender and sender.state != "ACTIVE":
        return play.refuse_inactive(hub, conn, sender, msg)
    if acting is not sender and not sender.human_active:
        return hub.error(conn, "YOU_FORFEITED", "you can no longer play in this game", msg)
    if game.phase != "SIMULTANEOUS":
        return hub.error(conn, "NOT_YOUR_TURN", "no simultaneous turn waits for user data", msg)
    if msg.turn_index is not None and msg.turn_index != game.turn_index:
        return hub.error(
            conn, "INDEX_CONFLICT", f"the turn being played is {game.turn_index}, not {msg.turn_index}", msg
        )
    entry = next((entry for entry in game.pending() if entry.local_id == acting.local_id), None)
    if entry is None:
        listed = any(entry.local_id == acting.local_id for entry in game.simultaneous)
        why = "has already given its user data" if listed else "is not part of this simultaneous turn"
        return hub.error(conn, "NOT_YOUR_TURN", f"seat {acting.local_id} {why}", msg)
    if acting is not sender and entry.delegate != sender.local_id:
        return hub.error(conn, "NOT_YOUR_TURN", "you were not asked to play that seat now", msg)
    if len(msg.user_data) > hub.limits.max_state_bytes:
        return hub.error(
            conn, "TOO_LARGE", f"user data is limited to {hub.limits.max_state_bytes} bytes", msg
        )
    game.charge_seat(acting, now)  # its clock stops (before it leaves the pending seats)
    entry.user_data = msg.user_data
    entry.delegate = entry.delegation = None
    hub.send(
        conn, UserDataUpdatedRequest(game_id=game.id, turn_index=game.turn_index, request_id=msg.request_id)
    )
    if msg.broadcast:
        hub.to_game(
            game,
            GameUserDataUpdatedRequest(game_id=game.id, player=acting.local_id, user_data=msg.user_data),
            skip=[session.player_id] if session.player_id is not None else [],
        )
    if not game.pending():
        _merge_simultaneous(hub, game, now)
    hub.save(game, now)


def _merge_simultaneous(hub: Hub, game: AsyncGame, now: float) -> None:
    """Every seat gave its data: the merger's turn, with all of it (``user_data``)."""
    data = [PlayerData(player_id=entry.local_id, data=entry.user_data or "") for entry in game.simultaneous]
    involved = [entry.local_id for entry in game.simultaneous]
    game.end_phase()
    game.user_data = data
    game.turn = _merger(hub, game, involved)
    play.begin_turn(hub, game, now, pause=0)  # cancels a resume still pending


def _merger(hub: Hub, game: AsyncGame, involved: list[int]) -> int:
    first = game.seat(game.next_players[0]) if game.next_players else None
    if first is not None and (not first.human_active or first.player_id in hub.online):
        return first.local_id
    for local in involved:
        seat = game.seats[local - 1]
        if seat.human_active and seat.player_id in hub.online:
            return local
    return first.local_id if first is not None else involved[0]


def _tick_simultaneous(hub: Hub, game: AsyncGame, now: float) -> bool:
    changed: set[int] = set()
    for entry in game.pending():
        seat = game.seats[entry.local_id - 1]
        deadline = game.deadline(seat)
        if deadline is not None and now >= deadline:
            seat.remaining, seat.state = 0.0, "TIMED_OUT"
            hub.to_game(
                game, PlayerReplacedRequest(game_id=game.id, player_id=seat.local_id, reason="TIMED_OUT")
            )
            changed.add(seat.local_id)
    if changed:
        if not any(seat.human_active for seat in game.seats):
            play.abort(hub, game, now)
            return True
        _repair(hub, game, changed)
    reported = False
    if game.idle_time > 0:
        elapsed = now - game.turn_started
        for step in play.IDLE_STEPS:
            if step > game.idle_reported and elapsed >= game.idle_time * step / 100:
                game.idle_reported = step
                reported = True
                idle = [
                    entry
                    for entry in game.pending()
                    if entry.delegate is None and game.seats[entry.local_id - 1].human_active
                ]
                if idle:
                    hub.to_game(
                        game,
                        PlayerIdleProgressRequest(
                            game_id=game.id, progress=step, player_ids=[entry.local_id for entry in idle]
                        ),
                    )
                if step == 100:
                    for entry in idle:
                        _delegate(hub, game, entry, "IDLE")
    return bool(changed) or reported


# -- Interruptions ----------------------------------------------------------------------------------


def _window_end(game: AsyncGame) -> float:
    return game.turn_started + game.window / 1000


def _all_answered(game: AsyncGame) -> bool:
    """No interrupter who could still answer is left."""
    return all(
        local in game.answered or not game.seats[local - 1].human_active for local in game.interrupters
    )


def interrupt(hub: Hub, session: Session, msg: InterruptActionRequest, now: float) -> None:
    found = play.seat_for(hub, session, msg.game_id, msg)
    if found is None:
        return
    game, sender = found
    conn = session.conn
    if game.server_rules:
        return hub.error(conn, "BAD_REQUEST", "this game has server rules: it has no interruptions", msg)

    def refuse(reason: str) -> None:
        hub.send(
            conn,
            InterruptActionErrorRequest(
                game_id=game.id,
                turn_index=msg.turn_index,
                reason=reason,  # type: ignore[arg-type]
                request_id=msg.request_id,
            ),
        )

    if game.phase == "INTERRUPTION" and now >= _window_end(game):
        _close_window(hub, game, now)  # due, and not yet ticked: closed before the refusal
        hub.save(game, now)
    if game.phase != "INTERRUPTION" or msg.turn_index != game.turn_index:
        return refuse("WINDOW_CLOSED")
    if sender.local_id not in game.interrupters or not sender.human_active or msg.turn != game.turn:
        return refuse("NOT_ALLOWED")
    if sender.local_id in game.answered:
        return refuse("ALREADY_INTERRUPTED")
    if len(msg.interruption_data) > hub.limits.max_state_bytes:
        return hub.error(conn, "TOO_LARGE", "interruption data must be small", msg)
    game.answered.append(sender.local_id)
    if not msg.no_more_interruption:
        game.interruptions.append(PlayerData(player_id=sender.local_id, data=msg.interruption_data))
        interrupted = ActionInterruptedRequest(
            game_id=game.id,
            turn_index=game.turn_index,
            turn=msg.turn,
            player_id=sender.local_id,
            interruption_data=msg.interruption_data,
        )
        # The interrupter first, as in the text's diagram: its copy is the reply (S2 request_id).
        hub.send(conn, msgspec.structs.replace(interrupted, request_id=msg.request_id))
        hub.to_game(game, interrupted, skip=[session.player_id] if session.player_id is not None else [])
    if _all_answered(game):
        _close_window(hub, game, now)
    hub.save(game, now)


def _close_window(hub: Hub, game: AsyncGame, now: float) -> None:
    """InterruptionOverRequest to all; then the merger's turn with the interruptions, or, with
    none, the next player's turn as after any commit."""
    assert game.turn is not None
    committer = game.turn
    game.charge(min(now, _window_end(game)), increment=False)  # the window is the committer's time
    hub.to_game(game, InterruptionOverRequest(game_id=game.id, turn_index=game.turn_index))
    data, pause = list(game.interruptions), game.window_pause
    game.end_phase()
    if data:
        game.interruption_data = data
        game.turn = _merger(hub, game, [entry.player_id for entry in data] + [committer])
    else:
        game.turn = game.next_players[0]
    play.begin_turn(hub, game, now, pause)


def _tick_window(hub: Hub, game: AsyncGame, now: float) -> bool:
    assert game.turn is not None
    committer = game.seats[game.turn - 1]
    deadline = game.deadline(committer)
    end = _window_end(game)
    changed = False
    if deadline is not None and now >= deadline and deadline < end:
        committer.remaining, committer.state = 0.0, "TIMED_OUT"
        hub.to_game(
            game, PlayerReplacedRequest(game_id=game.id, player_id=committer.local_id, reason="TIMED_OUT")
        )
        changed = True
        if not any(seat.human_active for seat in game.seats):
            play.abort(hub, game, now)
            return True
    if now >= end or _all_answered(game):
        _close_window(hub, game, now)
        changed = True
    return changed


# -- Shared with play.py: timers, players leaving and coming back -----------------------------------


def tick(hub: Hub, game: AsyncGame, now: float) -> bool:
    """Deadlines due at ``now`` in a simultaneous turn or a window; whether the game changed."""
    if game.phase == "SIMULTANEOUS":
        return _tick_simultaneous(hub, game, now)
    return _tick_window(hub, game, now)


def seat_left(hub: Hub, game: AsyncGame, seat: SeatInfo, now: float) -> None:
    """``seat`` forfeited during a phase: its part goes to a robot (or its window answer is none)."""
    if game.phase == "SIMULTANEOUS":
        _repair(hub, game, {seat.local_id})
    elif _all_answered(game):
        _close_window(hub, game, now)


def resend(hub: Hub, game: AsyncGame, player_id: int, now: float) -> None:
    """A player comes back during a simultaneous turn: it is asked for its own user data and for
    the seats it was asked to play (or now plays instead of someone away)."""
    returning = game.seat_of(player_id)
    if returning is None or game.phase != "SIMULTANEOUS":
        return
    moved = False
    for entry in game.pending():
        if entry.delegate is not None and entry.delegate != returning.local_id:
            chosen = game.seats[entry.delegate - 1]
            if chosen.player_id not in hub.online and returning in game.candidates(
                game.seats[entry.local_id - 1]
            ):
                entry.delegate, moved = returning.local_id, True
        if entry.delegate == returning.local_id:
            hub.to_player(player_id, _notice(game, entry))
        if entry.local_id == returning.local_id and returning.human_active:
            hub.to_player(player_id, _required(game))
    if moved:
        hub.save(game, now)


def hand_over(hub: Hub, game: AsyncGame, player_id: int, now: float) -> None:
    """``player_id`` went away while asked to give seats' user data: present players take them."""
    if game.phase != "SIMULTANEOUS":
        return
    moved = False
    for entry in game.pending():
        if entry.delegate is None or game.seats[entry.delegate - 1].player_id != player_id:
            continue
        present = [
            seat
            for seat in game.candidates(game.seats[entry.local_id - 1])
            if seat.player_id in hub.online and seat.player_id != player_id
        ]
        if present:
            entry.delegate, moved = present[0].local_id, True
            hub.to_player(present[0].player_id, _notice(game, entry))
    if moved:
        hub.save(game, now)


# -- Multicast --------------------------------------------------------------------------------------


def multicast(hub: Hub, session: Session, msg: MulticastDataRequest, now: float) -> None:
    """Transient data to the present players (never stored: the text's "Multicast")."""
    game = hub.games.get(msg.game_id)
    assert session.player_id is not None
    if game is None or game.status not in LIVE:
        return hub.error(session.conn, "UNKNOWN_GAME", "no live game with this id", msg)
    sender = game.seat_of(session.player_id)
    if sender is None:
        return hub.error(session.conn, "UNKNOWN_PLAYER", "only the players of a game multicast to it", msg)
    if sender.state != "ACTIVE":
        return play.refuse_inactive(hub, session.conn, sender, msg)
    for local in msg.recipient_ids:
        if game.seat(local) is None:
            return hub.error(session.conn, "UNKNOWN_PLAYER", f"`recipient_ids` names seat {local}", msg)
    if len(msg.data) > hub.limits.max_state_bytes:
        return hub.error(
            session.conn, "TOO_LARGE", f"data is limited to {hub.limits.max_state_bytes} bytes", msg
        )
    data = ClientDataRequest(game_id=game.id, sender=sender.local_id, data=msg.data)
    hub.send(session.conn, data)
    wanted = set(msg.recipient_ids) or {seat.local_id for seat in game.seats}
    absent: list[int] = []
    for seat in game.seats:
        if seat.local_id not in wanted or seat is sender or seat.player_id is None:
            continue
        if not hub.to_player(seat.player_id, data):
            absent.append(seat.local_id)
    if msg.notification and absent:
        play.notify_absent(hub, game, absent, msg.notification, now)


Handler = Callable[[Hub, Session, Any, float], None]

#: The handlers of this module, by message type, for the service's table.
PHASE_HANDLERS: Final[dict[str, Handler]] = {
    "UpdateUserDataRequest": update_user_data,
    "InterruptActionRequest": interrupt,
    "MulticastDataRequest": multicast,
}
