"""A game of /async: the one owner of its record (status, seats, clocks, phase), its rules adapter
and its transitions, one method per transition.

Each request is first planned (``plan_*``: checks.py, the game untouched) into a refusal or a
plan (plans.py); the handler sends the refusal or applies the plan with the transition of the
same name, which changes the game, stores it (the ledger) and tells the players through the
host (host.py). Time moves the game too: ``tick`` (pauses ending, idle steps, clocks running
out, windows closing, outcomes expiring). A player's return and departure (``returned``,
``hand_over``) move the turns they were asked for.

The game hands each job to a helper it makes, which reads the record and asks the game for every
change it makes (the methods under "Changes"); nothing but the game writes its record:

- ``outbound`` (outbound.py): its messages to players and observers, and push notifications;
- ``turns`` (turns.py): asking for turns, robots playing them, a player's return or departure;
- ``phases`` (phases.py): simultaneous turns and interruption windows;
- ``ending`` (ending.py): the outcome and its ratings, the abort and its penalties.

Statuses and phases change only through the record's ``enter`` and ``enter_phase``
(lifecycle.py).
"""

from __future__ import annotations

import msgspec

from parlour.protocols.async_ws.game import checks
from parlour.protocols.async_ws.game.context import GameContext
from parlour.protocols.async_ws.game.ending import Ending
from parlour.protocols.async_ws.game.model import AsyncGame, Delegation, SeatInfo, SimultaneousSeat, TurnDoc
from parlour.protocols.async_ws.game.outbound import Outbound
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
from parlour.protocols.async_ws.game.server_game import SNAPSHOT_EVERY
from parlour.protocols.async_ws.game.turns import Turns
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
    OutcomeEntry,
    Penalty,
    PlayerData,
    PlayerIdleProgressRequest,
    PlayerReplacedRequest,
    SmallPlayer,
    StatusReport,
    UpdateUserDataRequest,
    UserDataUpdatedRequest,
)

__all__ = ["WELCOME_GAME", "Game"]

#: The server's welcome line in a game's chat (chat code 1).
WELCOME_GAME = "The game starts. Good luck! Type /help for the chat commands."


class Game:
    """One game (see the module's docstring). Built by the registry (game_registry.Games)."""

    __slots__ = ("_host", "_record", "_rules", "context", "ending", "outbound", "phases", "turns")

    def __init__(self, record: AsyncGame, rules: ServerGame | None, context: GameContext) -> None:
        self._record = record
        self._rules = rules
        self.context = context
        self._host = context.host
        self.outbound = Outbound(record, context.host)
        self.turns = Turns(self, record, self.outbound, context)
        self.phases = Phases(self, record, self.outbound)
        self.ending = Ending(self, record, self.outbound, context.host)

    @property
    def record(self) -> AsyncGame:
        """The stored game. Only the game changes it; everyone else reads it."""
        return self._record

    @property
    def rules(self) -> ServerGame | None:
        """Server rules (S9) while the game runs; None under client rules or once it ended."""
        return self._rules

    @property
    def id(self) -> int:
        return self._record.id

    @property
    def status(self) -> str:
        return self._record.status

    # -- Views ----------------------------------------------------------------------------------

    def view(self, local_id: int | None) -> str:
        """What ``local_id`` may see (server rules), or the one opaque state (client rules)."""
        rules = self._rules
        return self._record.state if rules is None else rules.view(local_id)

    def report(self, now: float, player_id: int | None) -> StatusReport:
        """The StatusReport for ``player_id`` (its own view under server rules; S12)."""
        game = self._record
        seat = game.seat_of(player_id) if player_id is not None else None
        state = self.view(seat.local_id if seat else None) if game.server_rules else None
        return game.report(now, self.outbound.presences(), state)

    # -- Changes: each a step the helpers ask for (the transitions below take them too) ------

    def save(self, now: float, turn: TurnDoc | None = None) -> None:
        """Store the game (and a committed turn) before anything of this input is shown."""
        self.context.ledger.changed(self._record, now, turn)

    def rename(self, account_id: int, name: str) -> bool:
        """The account's seats named ``name``; whether one changed (the caller stores it)."""
        seats = [seat for seat in self._record.seats if seat.player_id == account_id and seat.name != name]
        for seat in seats:
            seat.name = name
        return bool(seats)

    def turn_begins(self, now: float, pause: int) -> None:
        """The turn's clock starts after ``pause``; nobody plays it for anyone yet."""
        game = self._record
        game.turn_started = now + pause
        game.pause_time = pause
        game.idle_reported = 0
        game.delegate = game.delegation = None

    def hand_turn(self, delegate: int | None, delegation: Delegation | None) -> None:
        """Who plays the turn for its seat (``delegate``, None: its seat or Parlour's robot), and
        why (None: nobody needs to)."""
        game = self._record
        game.delegate, game.delegation = delegate, delegation

    def action_played(self, seat: SeatInfo, action: str, by: SeatInfo | None, now: float) -> None:
        """Server rules: ``seat``'s legal action (sent by ``by``; None: Parlour's robot) applied
        to the rules adapter and the record, and stored with its turn."""
        game, rules = self._record, self._rules
        assert rules is not None
        rules.apply(action)
        game.actions.append(action)
        if len(game.actions) % SNAPSHOT_EVERY == 0:
            game.snapshot = rules.snapshot()
        game.charge(now)
        game.turn_index += 1
        game.state = rules.view(None)
        game.turn = rules.to_move()
        game.next_players = [game.turn] if game.turn else []
        game.delegate = game.delegation = None
        game.turn_started, game.pause_time, game.idle_reported = now, 0, 0
        if by is not None:
            game.last_actor = by.local_id
        self.save(
            now, TurnDoc(seat=seat.local_id, by=None if by in (None, seat) else by.local_id, action=action)
        )

    def seat_times_out(self, seat: SeatInfo) -> None:
        """``seat``'s clock is exhausted: a robot plays it from now on."""
        seat.remaining = 0.0
        seat.state = "TIMED_OUT"

    def idle_reaches(self, step: int) -> None:
        """The idle timer reported ``step`` (IDLE_STEPS) of this turn."""
        self._record.idle_reported = step

    def simultaneous_begins(self, players: list[int], now: float, pause: int) -> None:
        """A simultaneous turn of ``players``' seats, their clocks starting after ``pause``."""
        game = self._record
        game.enter_phase("SIMULTANEOUS")
        game.turn = game.delegate = game.delegation = None
        game.simultaneous = [SimultaneousSeat(local_id=local) for local in players]
        game.turn_started = now + pause
        game.pause_time = pause
        game.idle_reported = 0

    def hand_data(self, entry: SimultaneousSeat, delegate: int | None, delegation: Delegation | None) -> None:
        """Who gives a simultaneous seat's user data for it, and why (None: its own player)."""
        entry.delegate, entry.delegation = delegate, delegation

    def simultaneous_merges(self, turn: int, user_data: list[PlayerData]) -> None:
        """The simultaneous turn is over: ``turn``'s merge turn, with every seat's data."""
        game = self._record
        game.end_phase()
        game.user_data = user_data
        game.turn = turn

    def window_opens(self, acting: SeatInfo, msg: CommitActionRequest, now: float) -> None:
        """The committed turn's interruption window opens, on the committer's clock."""
        game = self._record
        game.enter_phase("INTERRUPTION")
        game.turn = acting.local_id
        game.delegate = game.delegation = None
        game.turn_started = now
        game.pause_time = game.idle_reported = 0
        game.window = msg.interruption_window_duration
        game.window_pause = msg.pause_time
        game.interrupters = list(msg.interruption_players)
        game.answered, game.interruptions = [], []

    def window_closes(self, now: float, turn: int, interruptions: list[PlayerData]) -> None:
        """The window closes, its time charged to the committer: ``turn``'s turn, a merge with the
        interruptions when there are any."""
        game = self._record
        game.charge(min(now, game.window_end()), increment=False)  # the window is the committer's time
        game.end_phase()
        if interruptions:
            game.interruption_data = interruptions
        game.turn = turn

    def enter_outcome(self, outcome: list[OutcomeEntry], ranked: bool, now: float) -> None:
        """OUTCOME: play is over, with these results."""
        game = self._record
        game.outcome = outcome
        game.is_ranked = ranked
        game.enter("OUTCOME")
        self._play_over(now)

    def enter_aborting(self, penalties: list[Penalty], now: float) -> None:
        """ABORTING: play is over, with these penalties."""
        game = self._record
        game.enter("ABORTING")
        self._play_over(now)
        game.penalties = penalties

    def _play_over(self, now: float) -> None:
        game = self._record
        game.finished = now
        game.turn = game.delegate = game.delegation = None
        game.end_phase()

    def close(self, now: float) -> None:
        """OUTCOME -> OVER, ABORTING -> ABORTED: the game leaves every player's live games (the
        registry reads its status after the input)."""
        game = self._record
        game.enter("OVER" if game.status == "OUTCOME" else "ABORTED")
        if game.finished is None:
            game.finished = now
        self._rules = None
        self.context.roster.track(game)
        self.save(now)

    # -- Starting ---------------------------------------------------------------------------------

    def plan_join(self, player_id: int, playing: int, msg: LobbyJoinGameRequest) -> Join | Refusal:
        return checks.join(self._record, player_id, playing, self.context.limits.max_games, msg)

    def join(self, plan: Join, now: float) -> None:
        """A player takes the next seat; a full game starts."""
        game, host = self._record, self._host
        name = host.name(plan.player_id) or f"player {plan.player_id}"
        player = SmallPlayer(
            player_id=plan.player_id,
            name=name,
            presence="ONLINE" if host.online(plan.player_id) else "OFFLINE",
        )
        seat = SeatInfo(local_id=len(game.seats) + 1, player_id=plan.player_id, name=name, accepted=True)
        game.seats.append(seat)
        self.context.roster.track(game)
        self._host.lists_changed(game.id)
        joined = LobbyNewPlayerRequest(game_id=game.id, player=player, local_id=seat.local_id)
        self.outbound.send(plan.player_id, msgspec.structs.replace(joined, request_id=plan.request_id))
        self.outbound.to_game(joined, skip=[plan.player_id])
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
            rules = self._rules = start(
                config.rules, len(game.seats), game.seed, config.options, config.robot_level
            )
            game.turn = rules.to_move()
            game.state = rules.view(None)
        else:
            game.turn = 1
        self.context.roster.track(game)
        self._host.started(game.id, [seat.player_id for seat in game.seats if seat.player_id is not None])
        self._host.lists_changed(game.id)
        for seat in game.seats:
            self.outbound.send(
                seat.player_id,
                GameCreatedRequest(
                    game_id=game.id,
                    invited_by=game.invited_by,
                    status_report=self.report(now, seat.player_id),
                    request_id=plan.request_id if seat.player_id == plan.starter else None,
                ),
            )
        # The text's chat code 1: the server's welcome line in the game's chat, to every seat.
        self.outbound.to_game(
            ClientChatRequest(game_id=game.id, text=WELCOME_GAME, sender=0, code=1), observers=False
        )
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
        self.outbound.send(player_id, msgspec.structs.replace(left, request_id=plan.request_id))
        self.outbound.to_game(left, skip=[player_id])
        if plan.kind == "ABORT":
            if game.invited_by is not None:
                self.outbound.to_game(GameAbortedRequest(game_id=game.id), skip=[player_id])
            self.abort_unstarted(now)
            return
        if plan.kind == "DECLINE":
            self.outbound.notify_answered(player_id, False, now)
            self.abort_unstarted(now)
            return
        self.context.roster.untrack(game.id, player_id)
        game.seats = [seat for seat in game.seats if seat.player_id != player_id]
        for index, seat in enumerate(game.seats, 1):
            seat.local_id = index  # seats are join order among those still there (S6)
        self._host.lists_changed(game.id)
        self.save(now)

    def abort_unstarted(self, now: float) -> None:
        """A game that never started ends ABORTED at once: nobody has anything to confirm."""
        game = self._record
        game.enter("ABORTED")
        game.finished = now
        self.context.roster.track(game)
        self._host.lists_changed(game.id)
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
                self.outbound.send(seat.player_id, msgspec.structs.replace(created, request_id=request_id))
            else:
                self.outbound.send(seat.player_id, created)
                self.outbound.notify_invited(seat.player_id, now)
        self.save(now)

    def refuse_invitation(self, request_id: str | None, now: float) -> None:
        """An invitee ignores the inviter (S14): to the inviter the invitation is declined like
        any other, and nobody else is bothered with it."""
        game = self._record
        self.outbound.send(
            game.creator,
            GameCreatedRequest(
                game_id=game.id,
                invited_by=game.invited_by,
                status_report=self.report(now, game.creator),
                request_id=request_id,
            ),
        )
        self.outbound.send(game.creator, GameAbortedRequest(game_id=game.id))
        self.abort_unstarted(now)

    def plan_answer(self, player_id: int, msg: AnswerInvitationRequest) -> Answer | Refusal:
        return checks.answer(self._record, player_id, msg)

    def answer(self, plan: Answer, now: float) -> None:
        """An invitee's answer: one decline aborts the invitation, the last acceptance starts it."""
        game = self._record
        seat = game.seat_of(plan.player_id)
        assert seat is not None
        seat.accepted = plan.accept
        self.outbound.send(
            plan.player_id,
            InvitationAnsweredRequest(game_id=game.id, accept=plan.accept, request_id=plan.request_id),
        )
        self.outbound.notify_answered(plan.player_id, plan.accept, now)
        if not plan.accept:
            self.outbound.to_game(GameAbortedRequest(game_id=game.id), skip=[plan.player_id])
            self.abort_unstarted(now)
            return
        if plan.starts:
            self.start(Start(), now)
        self.save(now)

    # -- Turns ------------------------------------------------------------------------------------

    def plan_commit(self, player_id: int, msg: CommitActionRequest) -> Commit | Action | Refusal:
        return checks.commit(self._record, self._rules, self.context.limits, player_id, msg)

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
        self.outbound.send(
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
            self.phases.open_window(acting, msg, now)
            self.save(now, turn)
            return
        if msg.broadcast:
            self.outbound.to_game(
                GameStateUpdatedRequest(
                    game_id=game.id, state=game.state, turn_index=game.turn_index, player_id=acting.local_id
                ),
                skip=[sender.player_id] if sender.player_id is not None else [],
            )
        if plan.opens == "SIMULTANEOUS":
            self.phases.begin_simultaneous(msg, now)
        else:
            game.turn = game.next_players[0]
            self.begin_turn(now, msg.pause_time)
        self.save(now, turn)

    def act(self, plan: Action, now: float) -> None:
        """S9: a legal action of a server-rules game; Parlour computes the rest."""
        game, rules = self._record, self._rules
        assert rules is not None
        sender = game.seats[plan.sender - 1]
        self.turns.play(rules, game.seats[plan.acting - 1], plan.action, sender, now)
        self.outbound.send(
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
        self.hand_data(entry, None, None)
        self.outbound.send(
            sender.player_id,
            UserDataUpdatedRequest(game_id=game.id, turn_index=game.turn_index, request_id=plan.request_id),
        )
        if plan.broadcast:
            self.outbound.to_game(
                GameUserDataUpdatedRequest(game_id=game.id, player=acting.local_id, user_data=plan.user_data),
                skip=[sender.player_id] if sender.player_id is not None else [],
            )
        if plan.merges:
            self.phases.merge_simultaneous(now)
        self.save(now)

    def plan_interrupt(self, player_id: int, msg: InterruptActionRequest, now: float) -> Interrupt | Refusal:
        return checks.interrupt(self._record, self.context.limits, player_id, msg, now)

    def close_due_window(self, now: float) -> None:
        """The window is due and the tick has not closed it yet (checks.WindowDue)."""
        self.phases.close_window(now)
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
            self.outbound.send(
                sender.player_id, msgspec.structs.replace(interrupted, request_id=plan.request_id)
            )
            self.outbound.to_game(
                interrupted, skip=[sender.player_id] if sender.player_id is not None else []
            )
        if plan.closes:
            self.phases.close_window(now)
        self.save(now)

    def plan_multicast(self, player_id: int, msg: MulticastDataRequest) -> Multicast | Refusal:
        return checks.multicast(self._record, self.context.limits, player_id, msg)

    def multicast(self, plan: Multicast, now: float) -> None:
        """Transient data to the present players (never stored: the text's "Multicast")."""
        game = self._record
        sender = game.seats[plan.sender - 1]
        data = ClientDataRequest(game_id=game.id, sender=plan.sender, data=plan.data)
        self.outbound.send(sender.player_id, data)
        wanted = set(plan.recipients) or {seat.local_id for seat in game.seats}
        absent: list[int] = []
        for seat in game.seats:
            if seat.local_id not in wanted or seat is sender or seat.player_id is None:
                continue
            if not self.outbound.send(seat.player_id, data):
                absent.append(seat.player_id)
        if plan.notification:
            for player_id in absent:
                self.outbound.notify_data(player_id, plan.notification, now)

    # -- Leaving and ending -------------------------------------------------------------------------

    def plan_forfeit(self, player_id: int, request_id: str | None) -> Forfeit | Leave | Refusal:
        return checks.forfeit(self._record, player_id, request_id)

    def forfeit(self, plan: Forfeit, now: float) -> None:
        """A player leaves a running game: robots play its seat from now on."""
        game = self._record
        seat = game.seats[plan.seat - 1]
        seat.state = "FORFEITED"
        forfeited = GameForfeitedRequest(game_id=game.id, player_id=seat.local_id)
        self.outbound.send(seat.player_id, msgspec.structs.replace(forfeited, request_id=plan.request_id))
        self.outbound.to_game(forfeited, skip=[seat.player_id] if seat.player_id is not None else [])
        self.outbound.to_game(
            PlayerReplacedRequest(game_id=game.id, player_id=seat.local_id, reason="FORFEITED")
        )
        if not any(other.human_active for other in game.seats):
            self.abort(now)
        elif game.phase != "TURN":
            self.phases.seat_left(seat, now)
        elif game.turn is not None and seat.local_id in (game.turn, game.delegate):
            offender = game.seats[game.turn - 1]
            self.hand_turn(None, None)
            self.turns.delegate(offender, offender.robot_reason or "FORFEITED", now)
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
            self.outbound.to_game(ClockResumedRequest(game_id=game.id, clocks=game.clocks(now)))
            changed = True
        if game.phase != "TURN":
            ticked = (
                self.phases.tick_simultaneous(now)
                if game.phase == "SIMULTANEOUS"
                else self.phases.tick_window(now)
            )
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
            self._time_out(seat, now)
            return
        if game.idle_time > 0 and seat.human_active and game.delegation is None:
            elapsed = now - game.turn_started
            for step in IDLE_STEPS:
                if step > game.idle_reported and elapsed >= game.idle_time * step / 100:
                    self.idle_reaches(step)
                    changed = True
                    self.outbound.to_game(
                        PlayerIdleProgressRequest(game_id=game.id, progress=step, player_ids=[seat.local_id])
                    )
                    if step == 100:
                        self.turns.delegate(seat, "IDLE", now)
        if changed:
            self.save(now)

    def _time_out(self, seat: SeatInfo, now: float) -> None:
        """The turn seat's clock is exhausted: a robot plays it from now on (the text's "Player
        Timeout")."""
        game = self._record
        self.seat_times_out(seat)
        self.outbound.to_game(
            PlayerReplacedRequest(game_id=game.id, player_id=seat.local_id, reason="TIMED_OUT")
        )
        game.turn_started = now
        self.hand_turn(None, None)
        self.turns.delegate(seat, "TIMED_OUT", now)
        if game.status == "RUNNING" or game.status == "ABORTING":
            self.save(now)

    def returned(self, player_id: int, now: float) -> None:
        """A player who comes back gets what the game waits for from them."""
        if self._record.status != "RUNNING":
            return
        if self._record.phase != "TURN":
            self.phases.resend_data(player_id, now)
        else:
            self.turns.resend(player_id, now)

    def hand_over(self, player_id: int, now: float) -> None:
        """``player_id`` went away while asked to play for someone: a present player takes it."""
        if self._record.status != "RUNNING":
            return
        if self._record.phase != "TURN":
            self.phases.hand_over_data(player_id, now)
        else:
            self.turns.hand_over(player_id, now)

    # -- Turns, robots and the end, handed to the helpers ----------------------------------------

    def begin_turn(self, now: float, pause: int) -> None:
        """Ask for the turn of ``turn`` (turns.Turns.begin)."""
        self.turns.begin(now, pause)

    def thought(self, position: int, choice: int | None, now: float) -> None:
        """A robot's decision made away from the event loop is back (turns.Turns.thought)."""
        self.turns.thought(position, choice, now)

    def resume_robots(self, now: float) -> None:
        """Server rules: a robot that must play the turn plays or is asked to (turns.Turns.resume)."""
        self.turns.resume(now)

    def abort(self, now: float) -> None:
        """No active player is left, or an admin aborts: ABORTING (ending.Ending.abort)."""
        self.ending.abort(now)

    def finish(self, scores: dict[int, tuple[float, int]], ranked: bool, now: float) -> None:
        """Play is over with these scores by seat (score, rank): OUTCOME (ending.Ending.finish)."""
        self.ending.finish(scores, ranked, now)
