"""A game of /async: its status, seats, clocks and rules adapter, and one method per transition.

Each request is first planned (``plan_*``: checks.py, the game untouched) into a refusal or a
plan (plans.py); the handler sends the refusal or applies the plan with the transition of the
same name, which changes the game, stores it (the ledger) and tells the players through the
host (host.py). Time moves the game too: ``tick`` (pauses ending, idle steps, clocks running
out, windows closing, outcomes expiring). A player's return and departure (``returned``,
``hand_over``) move the turns they were asked for.
"""

from __future__ import annotations

import msgspec

from parlour.protocols.async_ws.game import checks
from parlour.protocols.async_ws.game.base import GameContext
from parlour.protocols.async_ws.game.model import AsyncGame, SeatInfo, TurnDoc
from parlour.protocols.async_ws.game.phases import IDLE_STEPS, Phases
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
from parlour.protocols.async_ws.game.rules import ServerGame, start
from parlour.protocols.async_ws.wire.messages import (
    ActionCommitedRequest,
    ActionInterruptedRequest,
    AnswerInvitationRequest,
    ClientChatRequest,
    ClientDataRequest,
    ClockResumedRequest,
    CommitActionRequest,
    GameAbortedRequest,
    GameCreatedRequest,
    GameForfeitedRequest,
    GameOverRequest,
    GameStateUpdatedRequest,
    GameUserDataUpdatedRequest,
    InterruptActionRequest,
    InvitationAnsweredRequest,
    LobbyJoinGameRequest,
    LobbyNewPlayerRequest,
    LobbyPlayerLeftGameRequest,
    MulticastDataRequest,
    PlayerData,
    PlayerIdleProgressRequest,
    PlayerReplacedRequest,
    SmallPlayer,
    UpdateUserDataRequest,
    UserDataUpdatedRequest,
)

__all__ = ["WELCOME_GAME", "Game"]

#: The server's welcome line in a game's chat (chat code 1).
WELCOME_GAME = "The game starts. Good luck! Type /help for the chat commands."


class Game(Phases):
    """One game (see the module's docstring). Built by the registry (games.Games)."""

    __slots__ = ()

    def __init__(self, record: AsyncGame, rules: ServerGame | None, context: GameContext) -> None:
        super().__init__(record, rules, context)

    # -- Starting ---------------------------------------------------------------------------------

    def plan_join(self, player_id: int, playing: int, msg: LobbyJoinGameRequest) -> Join | Refusal:
        return checks.join(self._record, player_id, playing, self.context.limits.max_games, msg)

    def join(self, plan: Join, now: float) -> None:
        """A player takes the next seat; a full game starts."""
        game, host = self._record, self.host
        name = host.name(plan.player_id) or f"player {plan.player_id}"
        player = SmallPlayer(
            player_id=plan.player_id,
            name=name,
            presence="ONLINE" if host.online(plan.player_id) else "OFFLINE",
        )
        seat = SeatInfo(local_id=len(game.seats) + 1, player_id=plan.player_id, name=name, accepted=True)
        game.seats.append(seat)
        self.context.roster.track(game)
        self.host.lists_changed(game.id)
        joined = LobbyNewPlayerRequest(game_id=game.id, player=player, local_id=seat.local_id)
        self.host.send(plan.player_id, msgspec.structs.replace(joined, request_id=plan.request_id))
        self.to_game(joined, skip=[plan.player_id])
        if plan.starts:
            self.start(Start(), now)
        self.save(now)

    def plan_start(self, player_id: int, request_id: str | None) -> Start | Refusal:
        return checks.start_early(self._record, player_id, request_id)

    def start(self, plan: Start, now: float) -> None:
        """Every seat is taken (or the creator started early): the first turn goes to local id 1
        (or the rules' first mover). The starter's GameCreatedRequest answers its request."""
        game = self._record
        game.enter("RUNNING")
        clock = float(game.config.clock_seconds) or None
        for seat in game.seats:
            seat.remaining = clock
        game.turn_index = 1
        game.turn_started = now  # the reports below show the clocks as the first turn starts
        game.idle_time = game.config.idle_time
        game.next_players = [seat.local_id for seat in game.seats]
        if game.server_rules:
            game.seed = self.context.ids.bits(63)
            config = game.config
            self.rules = start(config.rules, len(game.seats), game.seed, config.options, config.robot_level)
            game.turn = self.rules.to_move()
            game.state = self.rules.view(None)
        else:
            game.turn = 1
        self.context.roster.track(game)
        self.host.started(game.id, [seat.player_id for seat in game.seats if seat.player_id is not None])
        self.host.lists_changed(game.id)
        for seat in game.seats:
            self.host.send(
                seat.player_id,
                GameCreatedRequest(
                    game_id=game.id,
                    invited_by=game.invited_by,
                    status_report=self.report(now, seat.player_id),
                    request_id=plan.request_id if seat.player_id == plan.starter else None,
                ),
            )
        # The text's chat code 1: the server's welcome line in the game's chat, to every seat.
        self.to_game(ClientChatRequest(game_id=game.id, text=WELCOME_GAME, sender=0, code=1), observers=False)
        self.begin_turn(now, pause=0)
        self.save(now)

    def plan_leave(self, player_id: int, request_id: str | None) -> Leave | Refusal:
        return checks.leave(self._record, player_id, request_id)

    def leave(self, plan: Leave, now: float) -> None:
        """A player leaves a game that has not started; the creator leaving aborts it, an
        invitee leaving declines it."""
        game = self._record
        player_id = plan.player_id
        left = LobbyPlayerLeftGameRequest(game_id=game.id, player_id=player_id, aborted=plan.kind == "ABORT")
        self.host.send(player_id, msgspec.structs.replace(left, request_id=plan.request_id))
        self.to_game(left, skip=[player_id])
        if plan.kind == "ABORT":
            if game.invited_by is not None:
                self.to_game(GameAbortedRequest(game_id=game.id), skip=[player_id])
            self.abort_unstarted(now)
            return
        if plan.kind == "DECLINE":
            self.notify_answered(player_id, False, now)
            self.abort_unstarted(now)
            return
        self.context.roster.untrack(game.id, player_id)
        game.seats = [seat for seat in game.seats if seat.player_id != player_id]
        for index, seat in enumerate(game.seats, 1):
            seat.local_id = index  # seats are join order among those still there (S6)
        self.host.lists_changed(game.id)
        self.save(now)

    def abort_unstarted(self, now: float) -> None:
        """A game that never started ends ABORTED at once: nobody has anything to confirm."""
        game = self._record
        game.enter("ABORTED")
        game.finished = now
        self.context.roster.track(game)
        self.host.lists_changed(game.id)
        self.save(now)

    def invite(self, request_id: str | None, now: float) -> None:
        """A new invitation is shown to the inviter (the reply) and to each invitee."""
        game = self._record
        for seat in game.seats:
            if seat.player_id is None:
                continue
            created = GameCreatedRequest(
                game_id=game.id, invited_by=game.invited_by, status_report=self.report(now, seat.player_id)
            )
            if seat.player_id == game.creator:
                self.host.send(seat.player_id, msgspec.structs.replace(created, request_id=request_id))
            else:
                self.host.send(seat.player_id, created)
                self.notify_invited(seat.player_id, now)
        self.save(now)

    def refuse_invitation(self, request_id: str | None, now: float) -> None:
        """An invitee ignores the inviter (S14): to the inviter the invitation is declined like
        any other, and nobody else is bothered with it."""
        game = self._record
        self.host.send(
            game.creator,
            GameCreatedRequest(
                game_id=game.id,
                invited_by=game.invited_by,
                status_report=self.report(now, game.creator),
                request_id=request_id,
            ),
        )
        self.host.send(game.creator, GameAbortedRequest(game_id=game.id))
        self.abort_unstarted(now)

    def plan_answer(self, player_id: int, msg: AnswerInvitationRequest) -> Answer | Refusal:
        return checks.answer(self._record, player_id, msg)

    def answer(self, plan: Answer, now: float) -> None:
        """An invitee's answer: one decline aborts the invitation, the last acceptance starts it."""
        game = self._record
        seat = game.seat_of(plan.player_id)
        assert seat is not None
        seat.accepted = plan.accept
        self.host.send(
            plan.player_id,
            InvitationAnsweredRequest(game_id=game.id, accept=plan.accept, request_id=plan.request_id),
        )
        self.notify_answered(plan.player_id, plan.accept, now)
        if not plan.accept:
            self.to_game(GameAbortedRequest(game_id=game.id), skip=[plan.player_id])
            self.abort_unstarted(now)
            return
        if plan.starts:
            self.start(Start(), now)
        self.save(now)

    # -- Turns ------------------------------------------------------------------------------------

    def plan_commit(self, player_id: int, msg: CommitActionRequest) -> Commit | Action | Refusal:
        return checks.commit(self._record, self.rules, self.context.limits, player_id, msg)

    def commit(self, plan: Commit, now: float) -> None:
        """A client-rules turn is committed: the committer's reply, then the next phase."""
        game, msg = self._record, plan.request
        sender = game.seats[plan.sender - 1]
        acting = game.seats[plan.acting - 1]
        game.charge(now)
        game.turn_index += 1
        game.state = msg.next_state or ""
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
            state=game.state,
            summary=msg.next_summary_data,
            next_players=game.next_players,
        )
        self.host.send(
            sender.player_id,
            ActionCommitedRequest(
                game_id=game.id,
                turn_index=game.turn_index,
                pause_time=msg.pause_time,
                request_id=msg.request_id,
            ),
        )
        if plan.opens == "INTERRUPTION":
            # The window's GameStateUpdatedRequest goes to everyone, the committer included.
            self.open_window(acting, msg, now)
            self.save(now, turn)
            return
        if msg.broadcast:
            self.to_game(
                GameStateUpdatedRequest(
                    game_id=game.id, state=game.state, turn_index=game.turn_index, player_id=acting.local_id
                ),
                skip=[sender.player_id] if sender.player_id is not None else [],
            )
        if plan.opens == "SIMULTANEOUS":
            self.begin_simultaneous(msg, now)
        else:
            game.turn = game.next_players[0]
            self.begin_turn(now, msg.pause_time)
        self.save(now, turn)

    def act(self, plan: Action, now: float) -> None:
        """S9: a legal action of a server-rules game; Parlour computes the rest."""
        game, rules = self._record, self.rules
        assert rules is not None
        sender = game.seats[plan.sender - 1]
        self.apply_action(rules, game.seats[plan.acting - 1], plan.action, sender, now)
        self.host.send(
            sender.player_id,
            ActionCommitedRequest(game_id=game.id, turn_index=game.turn_index, request_id=plan.request_id),
        )
        if game.status == "RUNNING":
            self.begin_turn(now, pause=0)
            if game.status == "RUNNING":
                self.save(now)

    def plan_user_data(self, player_id: int, msg: UpdateUserDataRequest) -> UserData | Refusal:
        return checks.user_data(self._record, self.context.limits, player_id, msg)

    def give_user_data(self, plan: UserData, now: float) -> None:
        """A simultaneous seat's user data; the last one owed starts the merge."""
        game = self._record
        acting, sender = game.seats[plan.acting - 1], game.seats[plan.sender - 1]
        entry = next(entry for entry in game.simultaneous if entry.local_id == plan.acting)
        game.charge_seat(acting, now)  # its clock stops (before it leaves the pending seats)
        entry.user_data = plan.user_data
        entry.delegate = entry.delegation = None
        self.host.send(
            sender.player_id,
            UserDataUpdatedRequest(game_id=game.id, turn_index=game.turn_index, request_id=plan.request_id),
        )
        if plan.broadcast:
            self.to_game(
                GameUserDataUpdatedRequest(game_id=game.id, player=acting.local_id, user_data=plan.user_data),
                skip=[sender.player_id] if sender.player_id is not None else [],
            )
        if plan.merges:
            self.merge_simultaneous(now)
        self.save(now)

    def plan_interrupt(self, player_id: int, msg: InterruptActionRequest, now: float) -> Interrupt | Refusal:
        return checks.interrupt(self._record, self.context.limits, player_id, msg, now)

    def close_due_window(self, now: float) -> None:
        """The window is due and the tick has not closed it yet (checks.WindowDue)."""
        self.close_window(now)
        self.save(now)

    def interrupt(self, plan: Interrupt, now: float) -> None:
        """An interrupter answers the window: its interruption, or none."""
        game = self._record
        sender = game.seats[plan.seat - 1]
        game.answered.append(plan.seat)
        if not plan.declines:
            game.interruptions.append(PlayerData(player_id=plan.seat, data=plan.data))
            interrupted = ActionInterruptedRequest(
                game_id=game.id,
                turn_index=game.turn_index,
                turn=plan.turn,
                player_id=plan.seat,
                interruption_data=plan.data,
            )
            # The interrupter first, as in the text's diagram: its copy is the reply (S2 request_id).
            self.host.send(sender.player_id, msgspec.structs.replace(interrupted, request_id=plan.request_id))
            self.to_game(interrupted, skip=[sender.player_id] if sender.player_id is not None else [])
        if plan.closes:
            self.close_window(now)
        self.save(now)

    def plan_multicast(self, player_id: int, msg: MulticastDataRequest) -> Multicast | Refusal:
        return checks.multicast(self._record, self.context.limits, player_id, msg)

    def multicast(self, plan: Multicast, now: float) -> None:
        """Transient data to the present players (never stored: the text's "Multicast")."""
        game = self._record
        sender = game.seats[plan.sender - 1]
        data = ClientDataRequest(game_id=game.id, sender=plan.sender, data=plan.data)
        self.host.send(sender.player_id, data)
        wanted = set(plan.recipients) or {seat.local_id for seat in game.seats}
        absent: list[int] = []
        for seat in game.seats:
            if seat.local_id not in wanted or seat is sender or seat.player_id is None:
                continue
            if not self.host.send(seat.player_id, data):
                absent.append(seat.player_id)
        if plan.notification:
            for player_id in absent:
                self.notify_data(player_id, plan.notification, now)

    # -- Leaving and ending -------------------------------------------------------------------------

    def plan_forfeit(self, player_id: int, request_id: str | None) -> Forfeit | Leave | Refusal:
        return checks.forfeit(self._record, player_id, request_id)

    def forfeit(self, plan: Forfeit, now: float) -> None:
        """A player leaves a running game: robots play its seat from now on."""
        game = self._record
        seat = game.seats[plan.seat - 1]
        seat.state = "FORFEITED"
        forfeited = GameForfeitedRequest(game_id=game.id, player_id=seat.local_id)
        self.host.send(seat.player_id, msgspec.structs.replace(forfeited, request_id=plan.request_id))
        self.to_game(forfeited, skip=[seat.player_id] if seat.player_id is not None else [])
        self.to_game(PlayerReplacedRequest(game_id=game.id, player_id=seat.local_id, reason="FORFEITED"))
        if not any(other.human_active for other in game.seats):
            self.abort(now)
        elif game.phase != "TURN":
            self.seat_left_phase(seat, now)
        elif game.turn is not None and seat.local_id in (game.turn, game.delegate):
            offender = game.seats[game.turn - 1]
            game.delegate = game.delegation = None
            self.delegate_turn(offender, offender.robot_reason or "FORFEITED", now)
        self.save(now)

    def plan_finish(self, player_id: int, msg: GameOverRequest) -> Finish | Refusal:
        return checks.finish(self._record, self.context.limits, player_id, msg)

    def game_over(self, plan: Finish, now: float) -> None:
        """A client-rules game is over: its final state, the clocks stopped, the outcome."""
        game = self._record
        if plan.final_state is not None:
            game.state = plan.final_state
        game.charge(now)
        self.finish({local: (score, rank) for local, score, rank in plan.scores}, plan.ranked, now)

    def plan_confirm(self, player_id: int, status: str) -> Confirm | Refusal:
        return checks.confirm(self._record, player_id, status)

    def confirm(self, plan: Confirm, now: float) -> None:
        """A human saw the outcome (or the abort); the last one closes the game."""
        self._record.seats[plan.seat - 1].confirmed = True
        if plan.closes:
            self.close(now)
        else:
            self.save(now)

    # -- Time, and players coming and going -------------------------------------------------------

    def tick(self, now: float) -> None:
        """Deadlines due at ``now``: the end of a pause, idle timer steps, an exhausted clock,
        and how long an outcome or an abort waits for confirmations."""
        game = self._record
        if game.status in ("OUTCOME", "ABORTING"):
            if game.finished is not None and now - game.finished >= self.context.limits.outcome_retention:
                self.close(now)
            return
        if game.status != "RUNNING":
            return
        changed = False
        if game.pause_time and now >= game.turn_started:
            game.pause_time = 0  # the resume is sent once
            self.to_game(ClockResumedRequest(game_id=game.id, clocks=game.clocks(now)))
            changed = True
        if game.phase != "TURN":
            ticked = self.tick_simultaneous(now) if game.phase == "SIMULTANEOUS" else self.tick_window(now)
            if ticked or changed:
                self.save(now)
            return
        if game.turn is None:
            if changed:
                self.save(now)
            return
        seat = game.seats[game.turn - 1]
        deadline = game.clock_deadline()
        if deadline is not None and now >= deadline:
            self.time_out(seat, now)
            return
        if game.idle_time > 0 and seat.human_active and game.delegation is None:
            elapsed = now - game.turn_started
            for step in IDLE_STEPS:
                if step > game.idle_reported and elapsed >= game.idle_time * step / 100:
                    game.idle_reported = step
                    changed = True
                    self.to_game(
                        PlayerIdleProgressRequest(game_id=game.id, progress=step, player_ids=[seat.local_id])
                    )
                    if step == 100:
                        self.delegate_turn(seat, "IDLE", now)
        if changed:
            self.save(now)

    def returned(self, player_id: int, now: float) -> None:
        """A player who comes back gets what the game waits for from them."""
        if self._record.status != "RUNNING":
            return
        if self._record.phase != "TURN":
            self.resend_data(player_id, now)
        else:
            self.resend_turn(player_id, now)

    def hand_over(self, player_id: int, now: float) -> None:
        """``player_id`` went away while asked to play for someone: a present player takes it."""
        if self._record.status != "RUNNING":
            return
        if self._record.phase != "TURN":
            self.hand_over_data(player_id, now)
        else:
            self.hand_over_turn(player_id, now)
