"""The checks of each request a game answers: the game as it is and the request in, a refusal
or a plan out (plans.py). Nothing here changes a game; the texts are the protocol's errors
(the Scalable Server text; the choices Parlour makes where it is silent are in the handlers'
modules, ingame/play.py and ingame/phase_requests.py, whose requests are rows of
ingame/game_requests.py's table)."""

from __future__ import annotations

from typing import Final

from parlour.protocols.async_ws.game.lifecycle import CLOSED, LIVE
from parlour.protocols.async_ws.game.model import AsyncGame, SeatInfo
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
from parlour.protocols.async_ws.game.rules import ServerGame
from parlour.protocols.async_ws.wire.limits import AsyncLimits
from parlour.protocols.async_ws.wire.messages import (
    AnswerInvitationRequest,
    CommitActionRequest,
    GameOverRequest,
    InterruptActionRequest,
    LobbyJoinGameRequest,
    MulticastDataRequest,
    UpdateUserDataRequest,
)

__all__ = [
    "INTERRUPT_REASONS",
    "MAX_WINDOW_MS",
    "WindowDue",
    "answer",
    "commit",
    "confirm",
    "finish",
    "forfeit",
    "inactive",
    "interrupt",
    "join",
    "leave",
    "multicast",
    "phase_fields",
    "playing",
    "start_early",
    "user_data",
]

#: The longest interruption window a commit may ask for (the text gives none; an animation's length).
MAX_WINDOW_MS: Final = 60_000
#: An InterruptActionRequest's refusals that are InterruptActionErrorRequest reasons.
INTERRUPT_REASONS: Final = frozenset({"WINDOW_CLOSED", "NOT_ALLOWED", "ALREADY_INTERRUPTED"})


class WindowDue(Refusal):
    """The window an interruption aims at is due to close and the tick has not closed it yet:
    it closes first, then the interruption is refused (WINDOW_CLOSED)."""

    __slots__ = ()


def playing(game: AsyncGame, player_id: int) -> SeatInfo | Refusal:
    """The running game's seat of ``player_id``, or the commit error of the text."""
    if game.status != "RUNNING":
        return Refusal("UNKNOWN_GAME", "no game in progress with this id")
    seat = game.seat_of(player_id)
    if seat is None:
        return Refusal("UNKNOWN_PLAYER", "you are not a player of this game")
    return seat


def inactive(seat: SeatInfo) -> Refusal:
    """The text's error for a player who forfeited, ran out of time or left."""
    code = {"FORFEITED": "YOU_FORFEITED", "TIMED_OUT": "YOU_RAN_OUT_OF_TIME"}.get(seat.state, "YOU_LEFT")
    return Refusal(code, "you can no longer play in this game")


def _acting(game: AsyncGame, sender: SeatInfo, player_id: int | None) -> SeatInfo | Refusal:
    """The seat a request plays (``player_id``: a robot's seat played for it), or a refusal."""
    if player_id is None or player_id == sender.local_id:
        return inactive(sender) if sender.state != "ACTIVE" else sender
    target = game.seat(player_id)
    if target is None:
        return Refusal("UNKNOWN_PLAYER", f"no seat {player_id} in this game")
    return target


def commit(
    game: AsyncGame, rules: ServerGame | None, limits: AsyncLimits, player_id: int, msg: CommitActionRequest
) -> Commit | Action | Refusal:
    sender = playing(game, player_id)
    if isinstance(sender, Refusal):
        return sender
    acting = _acting(game, sender, msg.player_id)
    if isinstance(acting, Refusal):
        return acting
    if game.phase != "TURN":
        waiting = "user data" if game.phase == "SIMULTANEOUS" else "the interruption window to close"
        return Refusal("NOT_YOUR_TURN", f"no turn to commit: the game waits for {waiting}")
    if acting is not sender:
        # Playing for another seat: only a robot's turn, and only by an active human.
        if not sender.human_active:
            return Refusal("YOU_FORFEITED", "you can no longer play in this game")
        if game.turn != acting.local_id or game.delegate != sender.local_id:
            return Refusal("NOT_YOUR_TURN", "you were not asked to play that seat now")
    elif game.turn != acting.local_id:
        return Refusal("NOT_YOUR_TURN", "it is not your turn")
    if msg.turn_index is not None and msg.turn_index != game.turn_index:
        return Refusal("INDEX_CONFLICT", f"the turn being played is {game.turn_index}, not {msg.turn_index}")
    if msg.pause_time > limits.max_pause:
        return Refusal("BAD_REQUEST", f"pause_time may be at most {limits.max_pause} s")
    if game.server_rules:
        if msg.next_simultaneous or msg.simultaneous_players or msg.interruption_window_duration:
            return Refusal("BAD_REQUEST", "this game has server rules: its turns are Parlour's to order")
        if msg.action is None or msg.next_state is not None or rules is None:
            return Refusal("BAD_REQUEST", "this game has server rules: commit an `action`")
        problem = rules.illegal(msg.action)
        if problem is not None:
            return Refusal("BAD_REQUEST", f"illegal action: {problem}")
        return Action(acting.local_id, sender.local_id, msg.action, msg.request_id)
    if msg.action is not None:
        return Refusal("BAD_REQUEST", "`action` is for games with server rules; send `next_state`")
    if msg.next_state is None:
        return Refusal("BAD_REQUEST", "`next_state` is required")
    for payload in (msg.next_state, msg.next_summary_data):
        if payload is not None and len(payload) > limits.max_state_bytes:
            return Refusal("TOO_LARGE", f"states are limited to {limits.max_state_bytes} bytes")
    problem = phase_fields(game, acting, msg)
    if problem is not None:
        return Refusal("BAD_REQUEST", problem)
    # A merge is administrative: it keeps `next_players` unless it gives them (the text's
    # "Simultaneous Game Turn"); so does a commit that begins a simultaneous turn.
    merge = game.user_data is not None or game.interruption_data is not None
    if not msg.next_players and not (merge or msg.next_simultaneous):
        return Refusal("BAD_REQUEST", "`next_players` must name the next player")
    for local in msg.next_players:
        if game.seat(local) is None:
            return Refusal("UNKNOWN_PLAYER", f"`next_players` names seat {local}, not in this game")
    if msg.interruption_window_duration:
        return Commit(acting.local_id, sender.local_id, msg, "INTERRUPTION")
    if msg.next_simultaneous:
        return Commit(acting.local_id, sender.local_id, msg, "SIMULTANEOUS")
    return Commit(acting.local_id, sender.local_id, msg, "TURN")


def phase_fields(game: AsyncGame, acting: SeatInfo, msg: CommitActionRequest) -> str | None:
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


def user_data(
    game: AsyncGame, limits: AsyncLimits, player_id: int, msg: UpdateUserDataRequest
) -> UserData | Refusal:
    sender = playing(game, player_id)
    if isinstance(sender, Refusal):
        return sender
    if game.server_rules:
        return Refusal("BAD_REQUEST", "this game has server rules: it has no simultaneous turns")
    acting = _acting(game, sender, msg.player_id)
    if isinstance(acting, Refusal):
        return acting
    if acting is not sender and not sender.human_active:
        return Refusal("YOU_FORFEITED", "you can no longer play in this game")
    if game.phase != "SIMULTANEOUS":
        return Refusal("NOT_YOUR_TURN", "no simultaneous turn waits for user data")
    if msg.turn_index is not None and msg.turn_index != game.turn_index:
        return Refusal("INDEX_CONFLICT", f"the turn being played is {game.turn_index}, not {msg.turn_index}")
    pending = game.pending()
    entry = next((entry for entry in pending if entry.local_id == acting.local_id), None)
    if entry is None:
        listed = any(entry.local_id == acting.local_id for entry in game.simultaneous)
        why = "has already given its user data" if listed else "is not part of this simultaneous turn"
        return Refusal("NOT_YOUR_TURN", f"seat {acting.local_id} {why}")
    if acting is not sender and entry.delegate != sender.local_id:
        return Refusal("NOT_YOUR_TURN", "you were not asked to play that seat now")
    if len(msg.user_data) > limits.max_state_bytes:
        return Refusal("TOO_LARGE", f"user data is limited to {limits.max_state_bytes} bytes")
    return UserData(
        acting.local_id,
        sender.local_id,
        msg.user_data,
        msg.broadcast,
        msg.request_id,
        merges=len(pending) == 1,
    )


def interrupt(
    game: AsyncGame, limits: AsyncLimits, player_id: int, msg: InterruptActionRequest, now: float
) -> Interrupt | Refusal:
    sender = playing(game, player_id)
    if isinstance(sender, Refusal):
        return sender
    if game.server_rules:
        return Refusal("BAD_REQUEST", "this game has server rules: it has no interruptions")
    if game.phase == "INTERRUPTION" and now >= game.window_end():
        return WindowDue("WINDOW_CLOSED")
    if game.phase != "INTERRUPTION" or msg.turn_index != game.turn_index:
        return Refusal("WINDOW_CLOSED")
    if sender.local_id not in game.interrupters or not sender.human_active or msg.turn != game.turn:
        return Refusal("NOT_ALLOWED")
    if sender.local_id in game.answered:
        return Refusal("ALREADY_INTERRUPTED")
    if len(msg.interruption_data) > limits.max_state_bytes:
        return Refusal("TOO_LARGE", "interruption data must be small")
    # The window closes once every interrupter who can answer has (this one now among them).
    closes = all(
        local in game.answered or local == sender.local_id or not game.seats[local - 1].human_active
        for local in game.interrupters
    )
    return Interrupt(
        sender.local_id, msg.turn, msg.interruption_data, msg.no_more_interruption, msg.request_id, closes
    )


def multicast(
    game: AsyncGame, limits: AsyncLimits, player_id: int, msg: MulticastDataRequest
) -> Multicast | Refusal:
    if game.status not in LIVE:
        return Refusal("UNKNOWN_GAME", "no live game with this id")
    sender = game.seat_of(player_id)
    if sender is None:
        return Refusal("UNKNOWN_PLAYER", "only the players of a game multicast to it")
    if sender.state != "ACTIVE":
        return inactive(sender)
    for local in msg.recipient_ids:
        if game.seat(local) is None:
            return Refusal("UNKNOWN_PLAYER", f"`recipient_ids` names seat {local}")
    if len(msg.data) > limits.max_state_bytes:
        return Refusal("TOO_LARGE", f"data is limited to {limits.max_state_bytes} bytes")
    return Multicast(sender.local_id, msg.data, tuple(msg.recipient_ids), msg.notification)


def forfeit(game: AsyncGame, player_id: int, request_id: str | None) -> Forfeit | Leave | Refusal:
    seat = game.seat_of(player_id)
    if seat is None or game.status not in ("RUNNING", "NOT_STARTED"):
        return Refusal("UNKNOWN_GAME", "you are not in a game in progress with this id")
    if game.status == "NOT_STARTED":
        # The inviter quitting an invitation (or the creator an open game) aborts it.
        return _leaving(game, player_id, request_id)
    if seat.state != "ACTIVE":
        return Refusal("YOU_FORFEITED", "you have already left this game")
    return Forfeit(seat.local_id, request_id)


def finish(game: AsyncGame, limits: AsyncLimits, player_id: int, msg: GameOverRequest) -> Finish | Refusal:
    seat = playing(game, player_id)
    if isinstance(seat, Refusal):
        return seat
    if game.server_rules:
        return Refusal("BAD_REQUEST", "this game has server rules: Parlour ends it")
    if not seat.human_active:
        return Refusal("YOU_FORFEITED", "you can no longer play in this game")
    if msg.turn_index is not None and msg.turn_index != game.turn_index:
        return Refusal("INDEX_CONFLICT", f"the turn being played is {game.turn_index}")
    expected = {str(other.local_id) for other in game.seats}
    if set(msg.finalScores) != expected:
        return Refusal("BAD_REQUEST", f"`finalScores` must rank every seat: {', '.join(sorted(expected))}")
    if any(rank > len(game.seats) for _, rank in msg.finalScores.values()):
        return Refusal("BAD_REQUEST", f"ranks go from 1 to {len(game.seats)}")
    if msg.final_state is not None and len(msg.final_state) > limits.max_state_bytes:
        return Refusal("TOO_LARGE", "the final state is too large")
    scores = tuple((int(local), float(score), rank) for local, (score, rank) in msg.finalScores.items())
    ranked = game.config.ranked if msg.is_ranked is None else msg.is_ranked
    return Finish(scores, ranked, msg.final_state)


def confirm(game: AsyncGame, player_id: int, status: str) -> Confirm | Refusal:
    seat = game.seat_of(player_id)
    if seat is None or game.status != status:
        return Refusal("UNKNOWN_GAME", f"you have no game in {status} with this id")
    closes = all(other.confirmed or other is seat for other in game.seats if not other.robot)
    return Confirm(seat.local_id, closes)


# -- Before the start: the lobby's and the invitations' requests -----------------------------------


def join(
    game: AsyncGame, player_id: int, playing_games: int, max_games: int, msg: LobbyJoinGameRequest
) -> Join | Refusal:
    """A LobbyJoinDeniedRequest's cause, or the seat taken (``playing_games``: the player's live
    games)."""
    if game.invited_by is not None or game.status in CLOSED:
        return Refusal("UNKNOWN_GAME")
    if game.seat_of(player_id) is not None:
        return Refusal("ALREADY_JOINED")
    if game.status != "NOT_STARTED":
        return Refusal("ALREADY_STARTED")
    if len(game.seats) >= game.config.max_players:
        return Refusal("GAME_FULL")
    if game.config.password is not None and msg.password != game.config.password:
        return Refusal("WRONG_PASSWORD")
    if playing_games >= max_games:
        return Refusal("TOO_MANY_GAMES")
    return Join(player_id, msg.request_id, starts=len(game.seats) + 1 == game.config.max_players)


def leave(game: AsyncGame, player_id: int, request_id: str | None) -> Leave | Refusal:
    if game.seat_of(player_id) is None or game.status != "NOT_STARTED":
        return Refusal("UNKNOWN_GAME", "you are in no open game with this id")
    return _leaving(game, player_id, request_id)


def _leaving(game: AsyncGame, player_id: int, request_id: str | None) -> Leave:
    if player_id == game.creator:
        return Leave(player_id, request_id, "ABORT")
    return Leave(player_id, request_id, "DECLINE" if game.invited_by is not None else "LEAVE")


def start_early(game: AsyncGame, player_id: int, request_id: str | None) -> Start | Refusal:
    """A LobbyStartGameDeniedRequest's cause, or the start."""
    if game.invited_by is not None or game.status in CLOSED:
        return Refusal("UNKNOWN_GAME")
    if game.creator != player_id:
        return Refusal("NOT_CREATOR")
    if game.status != "NOT_STARTED":
        return Refusal("ALREADY_STARTED")
    if len(game.seats) < game.config.min_players:
        return Refusal("NOT_ENOUGH_PLAYERS")
    return Start(player_id, request_id)


def answer(game: AsyncGame, player_id: int, msg: AnswerInvitationRequest) -> Answer | Refusal:
    seat = game.seat_of(player_id)
    if (
        seat is None
        or game.invited_by is None
        or game.status != "NOT_STARTED"
        or player_id == game.invited_by
    ):
        return Refusal("UNKNOWN_GAME", "you have no invitation to answer for this game")
    starts = msg.accept and all(other.accepted or other is seat for other in game.seats)
    return Answer(player_id, msg.accept, msg.request_id, starts)
