"""In game: turns, robots (hot-swap), clocks and the idle timer, forfeit, game over and abort
(scalable-server-protocol.rst "In game"; scalable-server-notes.md S9-S12, S19, S20).

The server knows no rules with ``rules: "client"``: the committer says who plays next, and a seat
that a robot must play (an invited robot, a forfeiter, a player out of time or idle) is played
by a client the server asks with PlayerTimeoutRequest. With a rules plugin (S9) the server
computes everything and plays those seats itself.

Simultaneous turns, interruption windows and multicast live in phases.py; this module hands a
game to it whenever the game is in one of those phases (``AsyncGame.phase``), and runs the merge
turn that follows them as an ordinary turn that carries ``user_data`` or ``interruption_data``.

Observers (S17) get every game event the players get. A message meant for one seat (its turn, a
robot's turn to play) goes to observers as a copy (:func:`to_observers`), with the spectator
view under server rules, never the seat's.
"""

from __future__ import annotations

from typing import Final

import msgspec

from parlour.core.effects import ConnId
from parlour.protocols.async_ws import notify, phases, ratings
from parlour.protocols.async_ws.hub import Hub, Session
from parlour.protocols.async_ws.messages import (
    ActionCommitedRequest,
    ActionRequiredRequest,
    ClientChatRequest,
    ClockPausedRequest,
    ClockResumedRequest,
    ClocksStatusRequest,
    CommitActionRequest,
    ErrorCode,
    GameAbortedConfirmationRequest,
    GameAbortedRequest,
    GameCreatedRequest,
    GameForfeitedRequest,
    GameForfeitRequest,
    GameOutcomeConfirmationRequest,
    GameOutcomeRequest,
    GameOverRequest,
    GameStateUpdatedRequest,
    GetClocksRequest,
    OutcomeEntry,
    Penalty,
    PlayerIdleProgressRequest,
    PlayerReplacedRequest,
    PlayerTimeoutRequest,
    ServerMessage,
    StatusReport,
)
from parlour.protocols.async_ws.model import AsyncGame, Delegation, SeatInfo, TurnDoc
from parlour.protocols.async_ws.rules import IllegalAction, start

__all__ = [
    "abort",
    "begin_turn",
    "commit",
    "confirm_abort",
    "confirm_outcome",
    "forfeit",
    "game_over",
    "get_clocks",
    "hand_over",
    "notify_absent",
    "refuse_inactive",
    "report",
    "resend_turn",
    "seat_for",
    "start_game",
    "tick_game",
    "to_observers",
]

#: The server's welcome line in a game's chat (chat code 1).
WELCOME_GAME: Final = "The game starts. Good luck! Type /help for the chat commands."
#: The idle timer reports at these fractions of the idle time (the text's 50/75/100 %).
IDLE_STEPS: Final = (50, 75, 100)
#: A server-rules game plays at most this many robot turns in a row on one input.
ROBOT_TURNS: Final = 10_000


def _view(hub: Hub, game: AsyncGame, local_id: int | None) -> str:
    """What ``local_id`` may see (server rules), or the one opaque state (client rules)."""
    rules = hub.rules.get(game.id)
    return game.state if rules is None else rules.view(local_id)


def report(hub: Hub, game: AsyncGame, now: float, player_id: int | None) -> StatusReport:
    """The StatusReport for ``player_id`` (its own view under server rules; S12)."""
    seat = game.seat_of(player_id) if player_id is not None else None
    state = _view(hub, game, seat.local_id if seat else None) if game.server_rules else None
    return game.report(now, hub.presences(game), state)


def to_observers(hub: Hub, game: AsyncGame, message: ServerMessage, skip: tuple[int, ...] = ()) -> None:
    """Observers' copy of a message sent to one seat (S17: they get every event the players
    get). Under server rules ``message`` must already hold the spectator view."""
    for observer in sorted(hub.observers.get(game.id, ())):
        if observer not in skip:
            hub.to_player(observer, message)


def notify_absent(hub: Hub, game: AsyncGame, local_ids: list[int], text: str, now: float) -> None:
    """Push ``text`` (a MulticastDataRequest's ``notification``) to the players of these seats
    who are not connected (S16)."""
    for local_id in local_ids:
        seat = game.seat(local_id)
        if seat is not None and seat.player_id is not None:
            notify.client_data(hub, game, seat.player_id, text, now)


# -- Starting --------------------------------------------------------------------------------------


def start_game(
    hub: Hub, game: AsyncGame, now: float, starter: int | None = None, request_id: str | None = None
) -> None:
    """Every seat is taken (or the creator started early): the first turn goes to local id 1.
    The ``starter``'s GameCreatedRequest is the direct reply to its request (``request_id``)."""
    game.status = "RUNNING"
    clock = float(game.config.clock_seconds) or None
    for seat in game.seats:
        seat.remaining = clock
    game.turn_index = 1
    game.turn_started = now  # the reports below show the clocks as the first turn starts
    game.idle_time = game.config.idle_time
    game.next_players = [seat.local_id for seat in game.seats]
    if game.server_rules:
        game.seed = hub.ids.bits(63)
        rules = start(game.config.rules, len(game.seats), game.seed)
        hub.rules[game.id] = rules
        game.turn = rules.to_move()
        game.state = rules.view(None)
    else:
        game.turn = 1
    hub.track(game)
    # "When that game starts, the player is exited" from the lobby; the game is no longer open.
    hub.lobby.game_started(seat.player_id for seat in game.seats if seat.player_id is not None)
    for seat in game.seats:
        hub.to_player(
            seat.player_id,
            GameCreatedRequest(
                game_id=game.id,
                invited_by=game.invited_by,
                status_report=report(hub, game, now, seat.player_id),
                request_id=request_id if seat.player_id == starter else None,
            ),
        )
    # The text's chat code 1: the server's welcome line in the game's chat, to every seat.
    hub.to_game(
        game,
        ClientChatRequest(game_id=game.id, text=WELCOME_GAME, sender=0, code=1),
        observers=False,
    )
    begin_turn(hub, game, now, pause=0)
    hub.save(game, now)


# -- Turns ------------------------------------------------------------------------------------------


def begin_turn(hub: Hub, game: AsyncGame, now: float, pause: int) -> None:
    """Ask for the turn of ``game.turn``: its player, a client playing it as a robot, or (server
    rules) Parlour's robot at once. A merge turn's data are already in the game."""
    game.turn_started = now + pause
    game.pause_time = pause
    game.idle_reported = 0
    game.delegate = game.delegation = None
    if game.turn is None:
        return
    seat = game.seats[game.turn - 1]
    reason = seat.robot_reason
    if reason is not None:
        _delegate(hub, game, seat, reason, now)
    else:
        _ask(hub, game, seat, now)
    if pause and game.status == "RUNNING":
        # After the turn's own message, as in the text's diagram: everyone learns the clock waits.
        hub.to_game(game, ClockPausedRequest(game_id=game.id, pause_time=pause, player_ids=[seat.local_id]))


def _required(hub: Hub, game: AsyncGame, seat: SeatInfo, now: float) -> ActionRequiredRequest:
    rules = hub.rules.get(game.id)
    return ActionRequiredRequest(
        game_id=game.id,
        player_id=seat.local_id,
        state=_view(hub, game, seat.local_id),
        turn_index=game.turn_index,
        player_clock=game.clock(seat, now),
        pause_time=game.pause_time,
        user_data=game.user_data,
        interruption_data=game.interruption_data,
        legal_actions=None if rules is None else rules.legal_actions(seat.local_id),
    )


def _ask(hub: Hub, game: AsyncGame, seat: SeatInfo, now: float, observers: bool = True) -> None:
    """The seat's ActionRequiredRequest, and the observers' copy: the spectator view and no
    legal actions under server rules (they would show a hand)."""
    required = _required(hub, game, seat, now)
    if not hub.to_player(seat.player_id, required):
        notify.your_turn(hub, game, seat, now)
    if observers and hub.observers.get(game.id):
        if game.server_rules:
            required = msgspec.structs.replace(required, state=_view(hub, game, None), legal_actions=None)
        to_observers(hub, game, required, skip=(seat.player_id,) if seat.player_id else ())


def _delegate(hub: Hub, game: AsyncGame, offender: SeatInfo, reason: Delegation, now: float) -> None:
    """Someone else plays ``offender``'s turn (the text's "Robots" workflow)."""
    if not any(seat.human_active for seat in game.seats):
        abort(hub, game, now)
        return
    if game.server_rules:
        game.delegation = reason
        _play_robots(hub, game, now)
        return
    candidates = game.candidates(offender)
    if not candidates:
        return  # only the idle player is left: its clock decides
    present = [seat for seat in candidates if seat.player_id in hub.online]
    chosen = (present or candidates)[0]
    game.delegate, game.delegation = chosen.local_id, reason
    notice = _timeout_notice(game)
    if not hub.to_player(chosen.player_id, notice):
        notify.robot_turn(hub, game, chosen, now)
    to_observers(hub, game, notice, skip=(chosen.player_id,) if chosen.player_id else ())


def _play_robots(hub: Hub, game: AsyncGame, now: float) -> None:
    """Server rules: Parlour's robot plays every turn that is not a present-or-absent active
    human's, until a human must act or the game ends."""
    rules = hub.rules[game.id]
    for _ in range(ROBOT_TURNS):
        if game.status != "RUNNING" or game.turn is None:
            return
        seat = game.seats[game.turn - 1]
        if game.delegation is None and seat.robot_reason is None:
            _ask(hub, game, seat, now)
            return
        _apply_action(hub, game, seat, hub.robot_action(rules, seat.local_id), None, now)


def _apply_action(
    hub: Hub, game: AsyncGame, seat: SeatInfo, action: str, by: SeatInfo | None, now: float
) -> None:
    """Server rules: one legal action of ``seat``, applied, stored and shown to everyone."""
    rules = hub.rules[game.id]
    rules.apply(action)
    game.actions.append(action)
    game.charge(now)
    game.turn_index += 1
    game.state = rules.view(None)
    game.turn = rules.to_move()
    game.next_players = [game.turn] if game.turn else []
    game.delegate = game.delegation = None
    game.turn_started, game.pause_time, game.idle_reported = now, 0, 0
    if by is not None:
        game.last_actor = by.local_id
    hub.save(
        game, now, TurnDoc(seat=seat.local_id, by=None if by in (None, seat) else by.local_id, action=action)
    )
    update = GameStateUpdatedRequest(
        game_id=game.id, state="", turn_index=game.turn_index, player_id=seat.local_id
    )
    # Every seat gets its own new view, the mover too: under server rules the client computes
    # nothing, so the acknowledgement alone would leave it without the state it moved to.
    for other in game.seats:
        if other.player_id is not None:
            hub.to_player(other.player_id, msgspec.structs.replace(update, state=rules.view(other.local_id)))
    # Observers see what no seat hides (S9, S17); one who holds a seat has had its own view.
    seated = tuple(other.player_id for other in game.seats if other.player_id is not None)
    to_observers(hub, game, msgspec.structs.replace(update, state=game.state), skip=seated)
    result = rules.outcome()
    if result is not None:
        _finish(hub, game, {local: score for local, score in result.items()}, game.config.ranked, now)


def _refuse(hub: Hub, conn: ConnId, code: ErrorCode, message: str, request: object) -> None:
    hub.error(conn, code, message, request)


def seat_for(hub: Hub, session: Session, game_id: int, request: object) -> tuple[AsyncGame, SeatInfo] | None:
    """The running game and the sender's seat, or the commit error of the text."""
    game = hub.games.get(game_id)
    if game is None or game.status != "RUNNING":
        _refuse(hub, session.conn, "UNKNOWN_GAME", "no game in progress with this id", request)
        return None
    assert session.player_id is not None
    seat = game.seat_of(session.player_id)
    if seat is None:
        _refuse(hub, session.conn, "UNKNOWN_PLAYER", "you are not a player of this game", request)
        return None
    return game, seat


def refuse_inactive(hub: Hub, conn: ConnId, seat: SeatInfo, request: object) -> None:
    """The text's error for a player who forfeited, ran out of time or left."""
    code: ErrorCode = {"FORFEITED": "YOU_FORFEITED", "TIMED_OUT": "YOU_RAN_OUT_OF_TIME"}.get(
        seat.state, "YOU_LEFT"
    )  # type: ignore[assignment]
    _refuse(hub, conn, code, "you can no longer play in this game", request)


def commit(hub: Hub, session: Session, msg: CommitActionRequest, now: float) -> None:
    found = seat_for(hub, session, msg.game_id, msg)
    if found is None:
        return
    game, sender = found
    conn = session.conn
    acting = sender
    if msg.player_id is not None and msg.player_id != sender.local_id:
        target = game.seat(msg.player_id)
        if target is None:
            return _refuse(hub, conn, "UNKNOWN_PLAYER", f"no seat {msg.player_id} in this game", msg)
        acting = target
    if acting is sender and sender.state != "ACTIVE":
        return refuse_inactive(hub, conn, sender, msg)
    if game.phase != "TURN":
        waiting = "user data" if game.phase == "SIMULTANEOUS" else "the interruption window to close"
        return _refuse(hub, conn, "NOT_YOUR_TURN", f"no turn to commit: the game waits for {waiting}", msg)
    if acting is not sender:
        # Playing for another seat: only a robot's turn, and only by an active human.
        if not sender.human_active:
            return _refuse(hub, conn, "YOU_FORFEITED", "you can no longer play in this game", msg)
        if game.turn != acting.local_id or game.delegate != sender.local_id:
            return _refuse(hub, conn, "NOT_YOUR_TURN", "you were not asked to play that seat now", msg)
    elif game.turn != acting.local_id:
        return _refuse(hub, conn, "NOT_YOUR_TURN", "it is not your turn", msg)
    if msg.turn_index is not None and msg.turn_index != game.turn_index:
        return _refuse(
            hub,
            conn,
            "INDEX_CONFLICT",
            f"the turn being played is {game.turn_index}, not {msg.turn_index}",
            msg,
        )
    limits = hub.limits
    if msg.pause_time > limits.max_pause:
        return _refuse(hub, conn, "BAD_REQUEST", f"pause_time may be at most {limits.max_pause} s", msg)
    if game.server_rules:
        if msg.next_simultaneous or msg.simultaneous_players or msg.interruption_window_duration:
            return _refuse(
                hub, conn, "BAD_REQUEST", "this game has server rules: its turns are Parlour's to order", msg
            )
        return _commit_action(hub, session, game, acting, sender, msg, now)
    if msg.action is not None:
        return _refuse(
            hub, conn, "BAD_REQUEST", "`action` is for games with server rules; send `next_state`", msg
        )
    if msg.next_state is None:
        return _refuse(hub, conn, "BAD_REQUEST", "`next_state` is required", msg)
    for payload in (msg.next_state, msg.next_summary_data):
        if payload is not None and len(payload) > limits.max_state_bytes:
            return _refuse(
                hub, conn, "TOO_LARGE", f"states are limited to {limits.max_state_bytes} bytes", msg
            )
    problem = phases.check_commit(game, acting, msg)
    if problem is not None:
        return _refuse(hub, conn, "BAD_REQUEST", problem, msg)
    # A merge is administrative: it keeps `next_players` unless it gives them (the text's
    # "Simultaneous Game Turn"); so does a commit that begins a simultaneous turn.
    merge = game.user_data is not None or game.interruption_data is not None
    if not msg.next_players and not (merge or msg.next_simultaneous):
        return _refuse(hub, conn, "BAD_REQUEST", "`next_players` must name the next player", msg)
    for local in msg.next_players:
        if game.seat(local) is None:
            return _refuse(
                hub, conn, "UNKNOWN_PLAYER", f"`next_players` names seat {local}, not in this game", msg
            )
    game.charge(now)
    game.turn_index += 1
    game.state = msg.next_state
    if msg.next_summary_data is not None:
        game.summary = msg.next_summary_data
    if msg.next_players:
        game.next_players = list(msg.next_players)
    game.last_actor = sender.local_id
    game.user_data = game.interruption_data = None
    game.idle_time = game.config.idle_time if msg.idle_time is None else msg.idle_time
    turn = TurnDoc(
        seat=acting.local_id,
        by=None if acting is sender else sender.local_id,
        state=msg.next_state,
        summary=msg.next_summary_data,
        next_players=game.next_players,
    )
    hub.send(
        conn,
        ActionCommitedRequest(
            game_id=game.id, turn_index=game.turn_index, pause_time=msg.pause_time, request_id=msg.request_id
        ),
    )
    if msg.interruption_window_duration:
        # The window's GameStateUpdatedRequest goes to everyone, the committer included.
        phases.open_window(hub, game, acting, msg, now)
        hub.save(game, now, turn)
        return
    if msg.broadcast:
        hub.to_game(
            game,
            GameStateUpdatedRequest(
                game_id=game.id, state=game.state, turn_index=game.turn_index, player_id=acting.local_id
            ),
            skip=[session.player_id] if session.player_id is not None else [],
        )
    if msg.next_simultaneous:
        phases.begin_simultaneous(hub, game, msg, now)
    else:
        game.turn = game.next_players[0]
        begin_turn(hub, game, now, msg.pause_time)
    hub.save(game, now, turn)


def _commit_action(
    hub: Hub,
    session: Session,
    game: AsyncGame,
    acting: SeatInfo,
    sender: SeatInfo,
    msg: CommitActionRequest,
    now: float,
) -> None:
    """S9: the client commits one of the legal actions; Parlour computes the rest."""
    if msg.action is None or msg.next_state is not None:
        return _refuse(
            hub, session.conn, "BAD_REQUEST", "this game has server rules: commit an `action`", msg
        )
    try:
        _apply_action(hub, game, acting, msg.action, sender, now)
    except IllegalAction as error:
        return _refuse(hub, session.conn, "BAD_REQUEST", f"illegal action: {error}", msg)
    hub.send(
        session.conn,
        ActionCommitedRequest(game_id=game.id, turn_index=game.turn_index, request_id=msg.request_id),
    )
    if game.status == "RUNNING":
        begin_turn(hub, game, now, pause=0)
        if game.server_rules and game.status == "RUNNING":
            hub.save(game, now)


# -- Clocks and timers ------------------------------------------------------------------------------


def get_clocks(hub: Hub, session: Session, msg: GetClocksRequest, now: float) -> None:
    game = hub.games.get(msg.game_id)
    if game is None or session.player_id is None or game.seat_of(session.player_id) is None:
        return hub.error(session.conn, "UNKNOWN_GAME", "you are not in a game with this id", msg)
    hub.send(
        session.conn, ClocksStatusRequest(game_id=game.id, clocks=game.clocks(now), request_id=msg.request_id)
    )


def tick_game(hub: Hub, game: AsyncGame, now: float) -> None:
    """Deadlines due at ``now``: the end of a pause, idle timer steps, an exhausted clock, and
    how long an outcome or an abort waits for confirmations."""
    if game.status in ("OUTCOME", "ABORTING"):
        if game.finished is not None and now - game.finished >= hub.limits.outcome_retention:
            _close(hub, game, now)
        return
    if game.status != "RUNNING":
        return
    changed = False
    if game.pause_time and now >= game.turn_started:
        game.pause_time = 0  # the resume is sent once
        hub.to_game(game, ClockResumedRequest(game_id=game.id, clocks=game.clocks(now)))
        changed = True
    if game.phase != "TURN":
        if phases.tick(hub, game, now) or changed:
            hub.save(game, now)
        return
    if game.turn is None:
        if changed:
            hub.save(game, now)
        return
    seat = game.seats[game.turn - 1]
    deadline = game.clock_deadline()
    if deadline is not None and now >= deadline:
        _time_out(hub, game, seat, now)
        return
    if game.idle_time > 0 and seat.human_active and game.delegation is None:
        elapsed = now - game.turn_started
        for step in IDLE_STEPS:
            if step > game.idle_reported and elapsed >= game.idle_time * step / 100:
                game.idle_reported = step
                changed = True
                hub.to_game(
                    game,
                    PlayerIdleProgressRequest(game_id=game.id, progress=step, player_ids=[seat.local_id]),
                )
                if step == 100:
                    _delegate(hub, game, seat, "IDLE", now)
    if changed:
        hub.save(game, now)


def _time_out(hub: Hub, game: AsyncGame, seat: SeatInfo, now: float) -> None:
    """The seat's clock is exhausted: a robot plays it from now on (the text's "Player Timeout")."""
    seat.remaining = 0.0
    seat.state = "TIMED_OUT"
    hub.to_game(game, PlayerReplacedRequest(game_id=game.id, player_id=seat.local_id, reason="TIMED_OUT"))
    game.turn_started = now
    game.delegate = game.delegation = None
    _delegate(hub, game, seat, "TIMED_OUT", now)
    if game.status == "RUNNING" or game.status == "ABORTING":
        hub.save(game, now)


# -- Leaving ----------------------------------------------------------------------------------------


def forfeit(hub: Hub, session: Session, msg: GameForfeitRequest, now: float) -> None:
    game = hub.games.get(msg.game_id)
    assert session.player_id is not None
    seat = game.seat_of(session.player_id) if game is not None else None
    if game is None or seat is None or game.status not in ("RUNNING", "NOT_STARTED"):
        return hub.error(session.conn, "UNKNOWN_GAME", "you are not in a game in progress with this id", msg)
    if game.status == "NOT_STARTED":
        # The inviter quitting an invitation (or the creator an open game) aborts it.
        from parlour.protocols.async_ws.lobby import leave_open_game

        return leave_open_game(hub, session, game, msg, now)
    if seat.state != "ACTIVE":
        return hub.error(session.conn, "YOU_FORFEITED", "you have already left this game", msg)
    seat.state = "FORFEITED"
    forfeited = GameForfeitedRequest(game_id=game.id, player_id=seat.local_id)
    hub.send(session.conn, msgspec.structs.replace(forfeited, request_id=msg.request_id))
    hub.to_game(game, forfeited, skip=[session.player_id])
    hub.to_game(game, PlayerReplacedRequest(game_id=game.id, player_id=seat.local_id, reason="FORFEITED"))
    if not any(other.human_active for other in game.seats):
        abort(hub, game, now)
    elif game.phase != "TURN":
        phases.seat_left(hub, game, seat, now)
    elif game.turn is not None and seat.local_id in (game.turn, game.delegate):
        offender = game.seats[game.turn - 1]
        game.delegate = game.delegation = None
        _delegate(hub, game, offender, offender.robot_reason or "FORFEITED", now)
    hub.save(game, now)


def abort(hub: Hub, game: AsyncGame, now: float) -> None:
    """No active player is left: ABORTING until everyone confirmed (the text's "Abort")."""
    penalties: list[Penalty] = []
    if game.status == "RUNNING" and (game.config.ranked or game.is_ranked):
        losers = [
            seat.local_id
            for seat in game.seats
            if not seat.robot and seat.state in ("FORFEITED", "TIMED_OUT")
        ]
        rows, changes = ratings.penalise(hub, game, losers, now)
        penalties = [
            Penalty(player_id=local, rating_change=change)
            for local, change in zip(losers, changes, strict=True)
            if change is not None
        ]
        if rows:
            hub.store(*rows)
    game.status = "ABORTING"
    game.finished = now
    game.turn = game.delegate = game.delegation = None
    game.end_phase()
    game.penalties = penalties
    hub.to_game(game, GameAbortedRequest(game_id=game.id, penalties=penalties))
    if not any(not seat.robot for seat in game.seats):
        _close(hub, game, now)


def confirm_abort(hub: Hub, session: Session, msg: GameAbortedConfirmationRequest, now: float) -> None:
    _confirm(hub, session, msg.game_id, "ABORTING", msg, now)


def confirm_outcome(hub: Hub, session: Session, msg: GameOutcomeConfirmationRequest, now: float) -> None:
    _confirm(hub, session, msg.game_id, "OUTCOME", msg, now)


def _confirm(hub: Hub, session: Session, game_id: int, status: str, msg: object, now: float) -> None:
    game = hub.games.get(game_id)
    assert session.player_id is not None
    seat = game.seat_of(session.player_id) if game is not None else None
    if game is None or seat is None or game.status != status:
        hub.error(session.conn, "UNKNOWN_GAME", f"you have no game in {status} with this id", msg)
        return
    seat.confirmed = True
    if all(other.confirmed for other in game.seats if not other.robot):
        _close(hub, game, now)
    else:
        hub.save(game, now)


def _close(hub: Hub, game: AsyncGame, now: float) -> None:
    """OUTCOME -> OVER, ABORTING -> ABORTED: the game leaves every player's live games."""
    game.status = "OVER" if game.status == "OUTCOME" else "ABORTED"
    if game.finished is None:
        game.finished = now
    hub.track(game)
    hub.rules.pop(game.id, None)
    hub.save(game, now)


# -- Game over --------------------------------------------------------------------------------------


def game_over(hub: Hub, session: Session, msg: GameOverRequest, now: float) -> None:
    found = seat_for(hub, session, msg.game_id, msg)
    if found is None:
        return
    game, seat = found
    conn = session.conn
    if game.server_rules:
        return hub.error(conn, "BAD_REQUEST", "this game has server rules: Parlour ends it", msg)
    if not seat.human_active:
        return hub.error(conn, "YOU_FORFEITED", "you can no longer play in this game", msg)
    if msg.turn_index is not None and msg.turn_index != game.turn_index:
        return hub.error(conn, "INDEX_CONFLICT", f"the turn being played is {game.turn_index}", msg)
    expected = {str(other.local_id) for other in game.seats}
    if set(msg.finalScores) != expected:
        return hub.error(
            conn, "BAD_REQUEST", f"`finalScores` must rank every seat: {', '.join(sorted(expected))}", msg
        )
    ranks = [rank for _, rank in msg.finalScores.values()]
    if any(rank > len(game.seats) for rank in ranks):
        return hub.error(conn, "BAD_REQUEST", f"ranks go from 1 to {len(game.seats)}", msg)
    if msg.final_state is not None:
        if len(msg.final_state) > hub.limits.max_state_bytes:
            return hub.error(conn, "TOO_LARGE", "the final state is too large", msg)
        game.state = msg.final_state
    game.charge(now)
    scores = {int(local): (float(score), rank) for local, (score, rank) in msg.finalScores.items()}
    ranked = game.config.ranked if msg.is_ranked is None else msg.is_ranked
    _finish(hub, game, scores, ranked, now)


def _finish(
    hub: Hub, game: AsyncGame, scores: dict[int, tuple[float, int]], ranked: bool, now: float
) -> None:
    """OUTCOME: the results are shown and wait for every human's confirmation (S11)."""
    changes: list[float | None] = [None] * len(game.seats)
    if ranked:
        rows, changes = ratings.rate(hub, game, [scores[seat.local_id][1] for seat in game.seats], now)
        if rows:
            hub.store(*rows)
    game.outcome = [
        OutcomeEntry(
            player_id=seat.local_id,
            score=scores[seat.local_id][0],
            rank=scores[seat.local_id][1],
            rating_change=change,
        )
        for seat, change in zip(game.seats, changes, strict=True)
    ]
    game.is_ranked = ranked
    game.status = "OUTCOME"
    game.finished = now
    game.turn = game.delegate = game.delegation = None
    game.end_phase()
    hub.to_game(game, GameOutcomeRequest(game_id=game.id, outcome=game.outcome, is_ranked=ranked))
    notify.game_over(hub, game, now)
    if not any(not seat.robot for seat in game.seats):
        _close(hub, game, now)
    else:
        hub.save(game, now)


def _timeout_notice(game: AsyncGame) -> PlayerTimeoutRequest:
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


def resend_turn(hub: Hub, game: AsyncGame, player_id: int, now: float) -> None:
    """A player who comes back gets what the game waits for from them: its turn, or a robot's
    (also one asked of a player who is away: whoever is present plays it)."""
    if game.status != "RUNNING":
        return
    if game.phase != "TURN":
        return phases.resend(hub, game, player_id, now)
    if game.turn is None:
        return
    seat = game.seats[game.turn - 1]
    if game.delegate is not None:
        chosen = game.seats[game.delegate - 1]
        if chosen.player_id != player_id and chosen.player_id not in hub.online:
            returning = game.seat_of(player_id)
            if returning is not None and returning in game.candidates(seat):
                game.delegate = returning.local_id
                hub.save(game, now)
                chosen = returning
        if chosen.player_id == player_id:
            hub.to_player(player_id, _timeout_notice(game))
        if seat.player_id != player_id:
            return
    if seat.player_id == player_id and seat.human_active:
        _ask(hub, game, seat, now, observers=False)


def hand_over(hub: Hub, game: AsyncGame, player_id: int, now: float) -> None:
    """``player_id`` went away while asked to play a robot's turn: a present player takes it."""
    if game.status == "RUNNING" and game.phase != "TURN":
        return phases.hand_over(hub, game, player_id, now)
    if game.status != "RUNNING" or game.turn is None or game.delegate is None:
        return
    if game.seats[game.delegate - 1].player_id != player_id:
        return
    present = [
        seat
        for seat in game.candidates(game.seats[game.turn - 1])
        if seat.player_id in hub.online and seat.player_id != player_id
    ]
    if present:
        game.delegate = present[0].local_id
        hub.to_player(present[0].player_id, _timeout_notice(game))
        hub.save(game, now)
