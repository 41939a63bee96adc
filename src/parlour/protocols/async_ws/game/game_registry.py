"""The games of the /async service: the one owner of every game, the index of each account's
live games, the next game id, and the records the games produce in an input (the ledger).

Created once by the service (service.AsyncService) and reached by the handlers as ``hub.games``.
Anyone may read a game's record (``get``, ``values``, ``live_games``); only the game itself
(``game``: a game.machine.Game) changes it, through its transitions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import msgspec

from parlour.core.effects import Think
from parlour.core.ids import IdSource
from parlour.protocols.async_ws.game.context import GameContext, RobotTimer
from parlour.protocols.async_ws.game.host import GameHost
from parlour.protocols.async_ws.game.lifecycle import LIVE
from parlour.protocols.async_ws.game.machine import Game
from parlour.protocols.async_ws.game.model import AsyncGame, SeatInfo, decode_game
from parlour.protocols.async_ws.game.plans import Create, Invite, Matched, Refusal, Start
from parlour.protocols.async_ws.game.rules import check_options, replay, seat_range
from parlour.protocols.async_ws.wire.limits import AsyncLimits
from parlour.protocols.async_ws.wire.messages import (
    EngageGameWithFriendsRequest,
    GameConfiguration,
    LobbyCreateGameRequest,
    LobbyGameCreatedRequest,
    StatusReport,
)
from parlour.storage import AsyncGameRow, Record

__all__ = ["Games", "public"]


def public(config: GameConfiguration) -> GameConfiguration:
    """The configuration as others see it: never the password."""
    return config if config.password is None else msgspec.structs.replace(config, password=None)


class Games:
    def __init__(self, host: GameHost, limits: AsyncLimits, ids: IdSource | None = None) -> None:
        self.context = GameContext(host, limits, ids if ids is not None else IdSource())
        self._games: dict[int, Game] = {}
        #: The next game id (S6: never reused while the store lives; restored from it).
        self.next_id = 1
        #: In a cluster's hub: whether a game runs on its shard's owner (shards/placement.py), where
        #: this registry keeps only a copy to read (its seats, its status until it ends) and
        #: never runs it. None: every game runs here.
        self.placed: Callable[[AsyncGame], bool] | None = None

    # -- Reading ----------------------------------------------------------------------------------

    def game(self, game_id: int) -> Game | None:
        return self._games.get(game_id)

    def get(self, game_id: int) -> AsyncGame | None:
        game = self._games.get(game_id)
        return None if game is None else game.record

    def __getitem__(self, game_id: int) -> AsyncGame:
        return self._games[game_id].record

    def __contains__(self, game_id: object) -> bool:
        return game_id in self._games

    def __iter__(self) -> Iterator[int]:
        return iter(self._games)

    def __len__(self) -> int:
        return len(self._games)

    def values(self) -> list[AsyncGame]:
        return [game.record for game in self._games.values()]

    def items(self) -> list[tuple[int, AsyncGame]]:
        return [(game_id, game.record) for game_id, game in self._games.items()]

    def live(self, player_id: int) -> list[Game]:
        """The account's live games (any status but OVER and ABORTED), by id."""
        games = self._games
        return [games[game_id] for game_id in self.context.roster.of(player_id)]

    def here(self, player_id: int) -> list[Game]:
        """The account's live games that run here (all of them but those placed elsewhere)."""
        placed = self.placed
        games = self.live(player_id)
        return games if placed is None else [game for game in games if not placed(game.record)]

    def is_placed(self, game_id: int) -> bool:
        """Whether the game runs on another owner (a cluster's hub only)."""
        game = self._games.get(game_id)
        return game is not None and self.placed is not None and self.placed(game.record)

    def rename_seats(self, account_id: int, name: str, now: float, live_only: bool = False) -> None:
        """The account's seats named ``name`` in the games kept here (``live_only``: its live
        games), each stored so. The live games another owner runs (a cluster's hub keeps a
        copy) are renamed in the copy only: their owner renames and stores them itself."""
        games = self.live(account_id) if live_only else list(self._games.values())
        placed = self.placed
        for game in games:
            if game.rename(account_id, name) and not (
                placed is not None and placed(game.record) and game.status in LIVE
            ):
                game.save(now)

    def live_games(self, player_id: int) -> list[AsyncGame]:
        return [game.record for game in self.live(player_id)]

    def playing(self, player_id: int) -> int:
        """How many live games the account has a seat in."""
        return self.context.roster.count(player_id)

    def players(self) -> Iterator[int]:
        """The accounts with a live game."""
        return self.context.roster.players()

    def report(self, game_id: int, now: float, player_id: int | None) -> StatusReport:
        """The game's StatusReport for ``player_id`` (None: an observer's; S12, S17)."""
        return self._games[game_id].report(now, player_id)

    def offers(self, player_id: int) -> int:
        """Open offers and invitations this player created and that have not started (S8)."""
        return sum(
            1
            for game in self.live_games(player_id)
            if game.status == "NOT_STARTED" and game.creator == player_id
        )

    @property
    def robot_timer(self) -> RobotTimer | None:
        return self.context.robot_timer

    @robot_timer.setter
    def robot_timer(self, timer: RobotTimer | None) -> None:
        self.context.robot_timer = timer

    @property
    def offload(self) -> bool:
        """Whether slow robots decide away from the event loop (GameContext.offload)."""
        return self.context.offload

    @offload.setter
    def offload(self, on: bool) -> None:
        self.context.offload = on

    # -- Robots thinking away from the event loop -------------------------------------------------

    def take_thinks(self) -> list[Think]:
        """This input's Think effects (turns.Turns.think_later)."""
        context = self.context
        thinks, context.thinks = context.thinks, []
        return thinks

    def thought(self, token: tuple[str, int], choice: int | None, now: float) -> None:
        """A Think's answer (``token``: the game's id and its position when asked) for the game
        that asked, if it still runs here: it checks the answer against where it stands."""
        game_id, position = int(token[0]), token[1]
        thinking = self.context.thinking
        if thinking.get(game_id) == position:
            del thinking[game_id]
        game = self._games.get(game_id)
        if game is not None and not self.is_placed(game_id):
            game.thought(position, choice, now)

    def resume_robots(self, now: float) -> None:
        """Robots play (or are asked to) in every game run here that waits for one: a game is
        stored between a human's move and the robot's that follows when the robot decides
        away from the event loop, so a restart, a takeover or a read-back can find it so."""
        for game in list(self._games.values()):
            if not self.is_placed(game.id):
                game.resume_robots(now)

    # -- New games --------------------------------------------------------------------------------

    def _refusal(self, player_id: int, config: GameConfiguration) -> Refusal | None:
        """S7/S9: a private game has a password; the rules plugin exists and takes the seat
        counts. S8: the creator's open offers and live games."""
        limits = self.context.limits
        if config.private and config.password is None:
            return Refusal("BAD_REQUEST", "`password` is required for a private game")
        if config.rules != "client":
            try:
                low, high = seat_range(config.rules)
            except ValueError as error:
                return Refusal("BAD_REQUEST", str(error))
            if config.min_players < low or config.max_players > high:
                return Refusal(
                    "BAD_REQUEST",
                    f"`{config.rules}` is played by {low} to {high} players: check min_players and max_players",
                )
            try:
                check_options(config.rules, config.options)
            except ValueError as error:
                return Refusal("BAD_REQUEST", f"`options`: {error}")
        elif config.options or config.robot_level is not None:
            return Refusal("BAD_REQUEST", "`options` and `robot_level` need server rules (`rules`)")
        if self.offers(player_id) >= limits.max_offers:
            return Refusal("TOO_MANY_OFFERS", f"you have {limits.max_offers} games waiting to start")
        if self.playing(player_id) >= limits.max_games:
            return Refusal("TOO_MANY_OFFERS", f"you are in {limits.max_games} games already")
        return None

    def plan_create(self, player_id: int, msg: LobbyCreateGameRequest) -> Create | Refusal:
        config = msg.configuration
        if config.password is not None and not config.private:
            # A password makes the game private (S7): the lobby shows it locked, as the text means.
            config = msgspec.structs.replace(config, private=True)
        refusal = self._refusal(player_id, config)
        if refusal is not None:
            return refusal
        limit = self.context.limits.max_state_bytes
        for payload in (msg.initial_state, msg.initial_summary):
            if payload is not None and len(payload) > limit:
                return Refusal("TOO_LARGE", f"states are limited to {limit} bytes")
        return Create(player_id, config, msg.initial_state or "", msg.initial_summary, msg.request_id)

    def create(self, plan: Create, now: float) -> Game:
        """An open game waits in the lobby for its players."""
        host = self.context.host
        record = AsyncGame(
            id=self._new_id(),
            config=plan.config,
            status="NOT_STARTED",
            creator=plan.creator,
            seats=[
                SeatInfo(local_id=1, player_id=plan.creator, name=self._name(plan.creator), accepted=True)
            ],
            created=now,
            updated=now,
            state=plan.state,
            summary=plan.summary,
        )
        game = self._add(record)
        host.lists_changed(record.id)
        host.send(
            plan.creator,
            LobbyGameCreatedRequest(
                game_id=record.id, configuration=public(plan.config), request_id=plan.request_id
            ),
        )
        game.save(now)
        return game

    def plan_invite(self, player_id: int, msg: EngageGameWithFriendsRequest) -> Invite | Refusal:
        host = self.context.host
        friends = [friend for friend in msg.friend_ids if friend != 0]
        for friend in friends:
            if friend == player_id or host.name(friend) is None:
                return Refusal("UNKNOWN_PLAYER", f"cannot invite player {friend}")
        if len(set(friends)) != len(friends):
            return Refusal("BAD_REQUEST", "`friend_ids` names a player twice")
        seats = len(msg.friend_ids) + 1
        config = msg.configuration or GameConfiguration(
            game_type="generic", min_players=seats, max_players=seats
        )
        if config.max_players != seats or config.min_players > seats:
            config = msgspec.structs.replace(config, min_players=seats, max_players=seats)
        refusal = self._refusal(player_id, config)
        if refusal is not None:
            return refusal
        ignored = any(host.ignores(friend, player_id) for friend in friends)
        return Invite(player_id, config, tuple(msg.friend_ids), ignored, msg.request_id)

    def invite(self, plan: Invite, now: float) -> Game:
        """An invitation seats everyone at once and waits for every invitee's answer."""
        seats = [SeatInfo(local_id=1, player_id=plan.creator, name=self._name(plan.creator), accepted=True)]
        robots = 0
        for index, friend in enumerate(plan.friends, 2):
            if friend == 0:
                robots += 1
                seats.append(SeatInfo(local_id=index, name=f"Robot {robots}", robot=True, accepted=True))
            else:
                seats.append(SeatInfo(local_id=index, player_id=friend, name=self._name(friend)))
        record = AsyncGame(
            id=self._new_id(),
            config=plan.config,
            status="NOT_STARTED",
            creator=plan.creator,
            invited_by=plan.creator,
            seats=seats,
            created=now,
            updated=now,
        )
        game = self._add(record)
        if plan.ignored:
            game.refuse_invitation(plan.request_id, now)
        else:
            game.invite(plan.request_id, now)
        return game

    def plan_match(
        self, config: GameConfiguration, players: tuple[int, ...], robots: int
    ) -> Matched | Refusal:
        """A game quick play found: its configuration is checked as a creator's would be (the
        rules and their seats), and each player may take one more game (S8); a refusal names
        the first player who may not (``Refusal.message``: the account id)."""
        if config.rules == "client":
            return Refusal("BAD_REQUEST", "quick play needs server rules")
        try:
            low, high = seat_range(config.rules)
        except ValueError as error:
            return Refusal("BAD_REQUEST", str(error))
        if not low <= config.max_players <= high or len(players) + robots != config.max_players:
            return Refusal("BAD_REQUEST", f"`{config.rules}` is played by {low} to {high} players")
        limit = self.context.limits.max_games
        for player_id in players:
            if self.playing(player_id) >= limit:
                return Refusal("TOO_MANY_OFFERS", str(player_id))
        return Matched(config, players, robots)

    def match(self, plan: Matched, now: float) -> Game:
        """Quick play's game: every seat taken at once (the players, then robots), started as an
        invitation does when its last invitee accepts; from then on it is like any other game
        (placed on its shard in a cluster, robots and clocks as configured)."""
        seats = [
            SeatInfo(local_id=index, player_id=player_id, name=self._name(player_id), accepted=True)
            for index, player_id in enumerate(plan.players, 1)
        ]
        for robot in range(1, plan.robots + 1):
            seats.append(SeatInfo(local_id=len(seats) + 1, name=f"Robot {robot}", robot=True, accepted=True))
        record = AsyncGame(
            id=self._new_id(),
            config=plan.config,
            status="NOT_STARTED",
            creator=plan.players[0],
            seats=seats,
            created=now,
            updated=now,
        )
        game = self._add(record)
        game.start(Start(), now)
        return game

    def _name(self, player_id: int) -> str:
        return self.context.host.name(player_id) or f"player {player_id}"

    def _new_id(self) -> int:
        game_id = self.next_id
        self.next_id += 1
        self.context.ledger.next_game(self.next_id)
        return game_id

    def adopt(self, record: AsyncGame) -> Game:
        """A game that was placed here (a shard's owner), or that came back ended (the hub):
        it replaces any copy of it."""
        old = self._games.pop(record.id, None)
        if old is not None:
            for seat in old.record.seats:
                if seat.player_id is not None:
                    self.context.roster.untrack(record.id, seat.player_id)
        return self._add(record)

    def _add(self, record: AsyncGame) -> Game:
        rules = None
        placed = self.placed
        if placed is not None and placed(record):
            pass  # a copy: its rules run on its owner
        elif record.server_rules and record.status == "RUNNING":
            config = record.config
            rules = replay(
                config.rules,
                len(record.seats),
                record.seed,
                record.actions,
                config.options,
                config.robot_level,
                record.snapshot,
            )
        game = self._games[record.id] = Game(record, rules, self.context)
        self.context.roster.track(record)
        return game

    # -- Time -------------------------------------------------------------------------------------

    def tick(self, now: float) -> list[int]:
        """Each live game's deadlines; finished games past their retention leave memory (which
        ones: returned)."""
        retention = self.context.limits.finished_retention
        placed = self.placed
        forgotten: list[int] = []
        for game in list(self._games.values()):
            record = game.record
            if record.status in LIVE:
                if placed is None or not placed(record):
                    game.tick(now)
            elif (
                record.finished is not None and now - record.finished >= retention and self.forget(record.id)
            ):
                forgotten.append(record.id)
        return forgotten

    def forget(self, game_id: int) -> bool:
        """A finished game leaves memory (the store keeps it), as if the server had restarted;
        not while its last change waits to be stored (the next tick forgets it)."""
        if self.context.ledger.pending(game_id):
            return False
        return self._games.pop(game_id, None) is not None

    def take_records(self) -> list[Record]:
        return self.context.ledger.take()

    # -- The store --------------------------------------------------------------------------------

    def restore(
        self, rows: Iterable[AsyncGameRow], next_game: str | None, heartbeat: float | None, now: float
    ) -> None:
        """The games the store holds (S10). The clocks of running games are not charged for the
        time the server was down (from ``heartbeat``, when it was last known alive, to ``now``):
        their turns start again later by it."""
        for row in rows:
            record = decode_game(row.doc)
            if record.status == "RUNNING" and heartbeat is not None:
                # Alive at least until its last heartbeat and its last change of this game.
                record.shift(max(0.0, now - max(heartbeat, record.updated)))
            self._add(record)
            self.next_id = max(self.next_id, record.id + 1)
        if next_game is not None and next_game.isdigit():
            self.next_id = max(self.next_id, int(next_game))
        self.resume_robots(now)

    def reload(self, stored: dict[int, AsyncGameRow | None], now: float) -> None:
        """A commit failed: these games return to what the store holds (None: not stored), and
        a robot whose move was lost plays again."""
        roster = self.context.roster
        for game_id, row in stored.items():
            old = self._games.pop(game_id, None)
            if old is not None:
                for seat in old.record.seats:
                    if seat.player_id is not None:
                        roster.untrack(game_id, seat.player_id)
            if row is not None:
                game = self._add(decode_game(row.doc))
                if not self.is_placed(game.id):
                    game.resume_robots(now)
        self.context.host.lists_changed()
