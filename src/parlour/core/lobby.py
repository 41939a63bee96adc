"""The lobby: players, connections, advertised and running games, seats, turns and robots.

Protocol-neutral and game-neutral: the game plugin decides the rules, the robot registry
plays programmatic and abandoned seats (both held by the lobby's :class:`~parlour.core.turns.Turns`,
which plays its running games forward), the lobby's :class:`~parlour.core.journal.Journal` keeps
the rows owed to the store, and the protocol adapter renders the events this module emits
through its :class:`~parlour.core.events.Sink`. Every method runs to completion under the single
owner of the lobby, with the current time passed in.

Preconditions are checked in the reference server's order, with Parlour's fixes
(docs/apologies-protocol.md, "Where Parlour differs from apologiesserver 0.2.2"): a player who
left a game hears nothing more from it, a full game cannot be joined, reregistration moves a
player to its new connection.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from random import Random
from typing import Any

from parlour.core.durable import OptionsDecoder, player_row, rebuild
from parlour.core.effects import ConnId
from parlour.core.errors import (
    AdvertiserMayNotQuit,
    AlreadyPlaying,
    ConnectionLimit,
    DuplicateHandle,
    GameLimit,
    IllegalMove,
    NoMovePending,
    NotAdvertiser,
    NotPlaying,
    PlayerLimit,
    UnknownGame,
    UnknownPlayer,
)
from parlour.core.events import (
    AvailableGames,
    Event,
    GameAdvertised,
    GameCancelled,
    GameCompleted,
    GameInvitation,
    GameJoined,
    GamePlayerChange,
    GamePlayerQuit,
    GamePlayerTurn,
    GameStarted,
    GameStateChange,
    PlayerMessageReceived,
    PlayerRegistered,
    PlayerUnregistered,
    RegisteredPlayers,
    ServerShutdown,
    Sink,
)
from parlour.core.ids import IdSource, new_id, new_time_id
from parlour.core.journal import Journal
from parlour.core.ledger import Ledger
from parlour.core.records import (
    Connection,
    Game,
    GameState,
    Player,
    PlayerType,
    Seat,
    SeatState,
    Visibility,
)
from parlour.core.turns import Turns
from parlour.games.registry import plugin
from parlour.robots.levels import pick
from parlour.settings import Settings
from parlour.storage.records import GameRow, GameSnapshotRow, MoveRow, PlayerGone, PlayerRow, Snapshot

__all__ = ["Lobby"]

#: Close code for the shutdown goodbye: "going away".
GOING_AWAY = 1001


class Lobby:
    def __init__(
        self,
        settings: Settings,
        rng: Random,
        sink: Sink,
        game: str = "apologies",
        robot_handles: Sequence[str] = (),
        ledger: Ledger | None = None,
        ids: IdSource | None = None,
    ) -> None:
        self.settings = settings
        #: Player and game ids, game seeds and move-id keys: secrets (parlour.core.ids).
        self.ids = ids if ids is not None else IdSource()
        self.sink = sink
        self.game_name = game
        self.plugin = plugin(game)
        #: With a store, every durable change is also recorded as rows for it to commit.
        self.journal = Journal(game)
        #: What plays the running games. Game rules' seeds are not drawn from ``rng`` but from
        #: ``ids``: robots' choices show this generator's outputs to every player.
        self.turns = Turns(
            self.plugin,
            pick(game, settings.robot),
            rng,
            sink,
            self.journal,
            tuple(robot_handles) or tuple(f"Robot{i}" for i in range(1, 9)),
        )
        self.connections: dict[ConnId, Connection] = {}
        #: Players by id, in registration order; and the same players by handle.
        self.players: dict[str, Player] = {}
        self.handles: dict[str, Player] = {}
        #: Games by id, in creation order, until they are forgotten as obsolete.
        self.games: dict[str, Game] = {}
        #: Games in progress here and in the server's other services, against one limit.
        self.ledger = ledger if ledger is not None else Ledger(settings.max_in_progress_games)
        #: After a restart, until when restored humans keep their seats without a connection.
        self.grace_until: float | None = None

    # -----------------------------------------------------------------------------------------
    # Output

    def send_to(self, conns: Iterable[ConnId | None], event: Event) -> None:
        """Send to each distinct connection once: players who share a connection get one copy."""
        distinct = list(dict.fromkeys(c for c in conns if c is not None))
        if distinct:
            self.sink.send(distinct, event)

    def tell(self, player: Player, event: Event) -> None:
        if player.conn is not None:
            self.sink.send((player.conn,), event)

    def broadcast(self, game: Game, event: Event) -> None:
        self.send_to((p.conn for p in game.audience()), event)

    # -----------------------------------------------------------------------------------------
    # Connections and players

    def connect(self, conn: ConnId, now: float) -> None:
        if len(self.connections) >= self.settings.max_connections:
            raise ConnectionLimit()
        self.connections[conn] = Connection(conn, now)

    def disconnect(self, conn: ConnId, now: float) -> None:
        """A connection closed: its players stay registered, disconnected, and leave their games."""
        connection = self.connections.pop(conn, None)
        if connection is None:
            return
        for player_id in list(connection.players):
            player = self.players.get(player_id)
            if player is None:
                continue
            player.conn = None
            player.idle = True
            self._leave(player, f"Player {player.handle} disconnected", now)

    def lookup(self, player_id: str, now: float, conn: ConnId | None = None) -> Player:
        """The player a request acts for; marks it (and its connection) active, even if the request
        then fails.

        With ``conn``, only from the connection the player is registered on: an id is not a
        password to be replayed from anywhere, and REREGISTER_PLAYER is the one way to move a
        player to another connection. Any other connection hears of no such player."""
        player = self.players.get(player_id)
        if player is None or (conn is not None and player.conn != conn):
            raise UnknownPlayer()
        self._activate(player, now)
        return player

    def _activate(self, player: Player, now: float) -> None:
        player.last_active = now
        player.idle = False
        if player.conn is not None:
            connection = self.connections.get(player.conn)
            if connection is not None:
                connection.last_active = now
                connection.idle = False

    def register(self, conn: ConnId, handle: str, now: float) -> Player:
        if len(self.players) >= self.settings.max_players:
            raise PlayerLimit(handle=handle)
        if handle in self.handles:
            raise DuplicateHandle(handle=handle)
        player = Player(new_id(self.ids), handle, conn, now, now)
        self.players[player.id] = player
        self.handles[handle] = player
        self.journal.add(player_row(player))
        self._attach(player, conn, now)
        self.tell(player, PlayerRegistered(player))
        return player

    def reregister(self, conn: ConnId, player_id: str, handle: str, now: float) -> Player:
        """A known player moves to ``conn`` (and only there); an unknown id registers anew."""
        player = self.players.get(player_id)
        if player is None:
            return self.register(conn, handle, now)
        returning = player.conn is None
        if player.conn is not None and player.conn != conn:
            old = self.connections.get(player.conn)
            if old is not None:
                old.players.discard(player.id)
        self._attach(player, conn, now)
        self._activate(player, now)
        self.tell(player, PlayerRegistered(player))
        game = player.game
        if returning and game is not None and game.state is GameState.PLAYING:
            # Back after a restart, within the grace: its game as it stands, and its turn if
            # it is its turn (the same move ids as before the restart).
            seat = next(i for i, s in enumerate(game.seats) if s.player is player)
            self.tell(player, GameStateChange(game, seat))
            if game.pending_seat == seat:
                self.tell(player, GamePlayerTurn(game, seat))
        return player

    def _attach(self, player: Player, conn: ConnId, now: float) -> None:
        player.conn = conn
        connection = self.connections.get(conn)
        if connection is not None:
            connection.players.add(player.id)
            connection.last_active = now
            connection.idle = False

    def unregister(self, player: Player, now: float) -> None:
        self._leave(player, f"Player {player.handle} unregistered", now)
        self.tell(player, PlayerUnregistered(player.handle))
        self._forget(player)

    def _forget(self, player: Player, stored: bool = True) -> None:
        """``stored``: whether the store holds the player, to be deleted there too."""
        if stored and self.players.get(player.id) is player:
            self.journal.add(PlayerGone(player.id))
        self.players.pop(player.id, None)
        if self.handles.get(player.handle) is player:
            del self.handles[player.handle]
        if player.conn is not None and player.conn in self.connections:
            self.connections[player.conn].players.discard(player.id)
        player.conn = None

    def list_players(self, player: Player) -> None:
        self.tell(player, RegisteredPlayers(list(self.players.values())))

    def send_message(self, player: Player, recipients: list[str], message: str) -> None:
        found = (self.handles.get(handle) for handle in recipients)
        self.send_to(
            (p.conn for p in found if p is not None),
            PlayerMessageReceived(player.handle, recipients, message),
        )

    # -----------------------------------------------------------------------------------------
    # Advertising, joining, leaving

    def list_games(self, player: Player) -> None:
        # Public games, private ones the player is invited to, and its own.
        games = [
            game
            for game in self.games.values()
            if game.state is GameState.ADVERTISED
            and (game.visibility is Visibility.PUBLIC or player.handle in game.invited or player.game is game)
        ]
        self.tell(player, AvailableGames(games))

    def advertise(
        self,
        player: Player,
        name: str,
        options: dict[str, Any],
        players: int,
        visibility: Visibility,
        invited: list[str],
        now: float,
    ) -> Game:
        if player.game is not None:
            raise AlreadyPlaying(handle=player.handle)
        if len(self.games) >= self.settings.max_games:
            raise GameLimit(handle=player.handle)
        if not self.plugin.min_seats <= players <= self.plugin.max_seats:
            raise UnknownGame(f"this game needs {self.plugin.min_seats} to {self.plugin.max_seats} players")
        game = Game(
            id=new_time_id(self.ids, now),
            name=name,
            game=self.game_name,
            options=options,
            players=players,
            visibility=visibility,
            invited=invited,
            advertiser=player.handle,
            created=now,
            last_active=now,
            seed=self.ids.bits(63),
            secret=self.ids.token(16),
        )
        game.seats.append(Seat(player.handle, PlayerType.HUMAN, SeatState.JOINED, player))
        self.games[game.id] = game
        self.ledger.opened()
        player.game = game
        self.journal.save(game)
        self.tell(player, GameJoined(player.handle, game))
        self.broadcast(game, GamePlayerChange(game, "Player joined game"))
        invitees = (self.handles.get(handle) for handle in invited)
        self.send_to((p.conn for p in invitees if p is not None), GameInvitation(game))
        self.tell(player, GameAdvertised(game))
        return game

    def join(self, player: Player, game_id: str, now: float) -> None:
        if player.game is not None:
            raise AlreadyPlaying(handle=player.handle)
        game = self.games.get(game_id)
        if game is None or game.state is not GameState.ADVERTISED:
            raise UnknownGame(handle=player.handle)
        if game.visibility is Visibility.PRIVATE and player.handle not in game.invited:
            raise UnknownGame(handle=player.handle)
        if game.joined_humans() >= game.players:
            raise UnknownGame("Game is full", handle=player.handle)
        game.seats.append(Seat(player.handle, PlayerType.HUMAN, SeatState.JOINED, player))
        player.game = game
        game.touch(now)
        self.journal.save(game)
        self.tell(player, GameJoined(player.handle, game))
        self.broadcast(game, GamePlayerChange(game, "Player joined game"))
        # A full game starts at once, unless the in-progress limit is reached: then it waits
        # for its advertiser's START_GAME.
        if game.joined_humans() >= game.players and self.ledger.in_progress <= self.ledger.limit:
            self._start(game, now)

    def quit(self, player: Player, now: float) -> None:
        game = self._current(player)
        if game.advertiser == player.handle:
            raise AdvertiserMayNotQuit(handle=player.handle)
        game.touch(now)
        self.tell(player, GamePlayerQuit(player.handle, game))
        self._leave(player, f"Player {player.handle} quit", now)

    def _current(self, player: Player) -> Game:
        if player.game is None:
            raise NotPlaying(handle=player.handle)
        if not player.game.in_progress:  # pragma: no cover - finished games release their players
            raise UnknownGame("Game is not in progress", handle=player.handle)
        return player.game

    def _leave(self, player: Player, comment: str, now: float) -> None:
        """A player leaves its game for good: the leaver hears nothing more from it."""
        game = player.game
        if game is None:
            return
        player.game = None
        self.journal.save(game)
        seat_index = next(i for i, seat in enumerate(game.seats) if seat.player is player)
        seat = game.seats[seat_index]
        if game.advertiser == player.handle:
            # The leaver hears the cancellation its own leaving caused, if it can still hear.
            self.send_to(
                [player.conn, *(p.conn for p in game.audience())], GameCancelled(game, "CANCELLED", comment)
            )
            self.finish(game, GameState.CANCELLED, now, "CANCELLED", comment)
            return
        if game.state is GameState.ADVERTISED:
            del game.seats[seat_index]
        else:
            seat.state = SeatState.QUIT
            seat.player = None
        self.broadcast(game, GamePlayerChange(game, comment))
        if game.state is not GameState.PLAYING:
            return
        if sum(1 for s in game.seats if s.state is not SeatState.QUIT) < 2:
            self.broadcast(game, GameCancelled(game, "NOT_VIABLE", comment))
            self.finish(game, GameState.CANCELLED, now, "NOT_VIABLE", comment)
        elif game.pending_seat == seat_index:
            game.pending.clear()
            game.pending_seat = None
            self._advance(game, now)  # the robot plays the leaver's turn at once

    def start(self, player: Player, now: float) -> None:
        game = self._current(player)
        if game.state is not GameState.ADVERTISED:
            raise UnknownGame("Game is already being played", handle=player.handle)
        if game.advertiser != player.handle:
            raise NotAdvertiser(handle=player.handle)
        # The game being started counts itself: with limit N, N games may be in progress.
        if self.ledger.in_progress > self.ledger.limit:
            raise GameLimit(handle=player.handle)
        self._start(game, now)

    def cancel(self, player: Player, now: float) -> None:
        game = self._current(player)
        if game.advertiser != player.handle:
            raise NotAdvertiser(handle=player.handle)
        self.broadcast(game, GameCancelled(game, "CANCELLED", None))
        self.finish(game, GameState.CANCELLED, now)

    def finish(
        self, game: Game, state: GameState, now: float, reason: str | None = None, comment: str | None = None
    ) -> None:
        if game.in_progress:
            self.ledger.closed()
        game.state = state
        game.finished = now
        if game.result is None:
            game.result = {"reason": reason or state.value, "comment": comment}
        self.journal.save(game)
        game.pending.clear()
        game.pending_seat = None
        game.memo.clear()  # a finished game is kept only as a record until it is obsolete
        for seat in game.seats:
            if seat.player is not None and seat.player.game is game:
                seat.player.game = None
            if seat.state is not SeatState.QUIT:
                seat.state = SeatState.FINISHED

    # -----------------------------------------------------------------------------------------
    # Playing

    def _start(self, game: Game, now: float) -> None:
        """The start of a game: fill seats, deal, announce, play to a human."""
        self.turns.deal(game, now)
        game.touch(now)
        self.journal.save(game)
        self.broadcast(game, GameStarted(game))
        self.broadcast(game, GamePlayerChange(game, "Game started"))
        self.turns.announce(game)
        self._advance(game, now)

    def _advance(self, game: Game, now: float, tell: bool = True) -> None:
        """Robots play until a connected human is to move (who is then told), or the game ends."""
        outcome = self.turns.advance(game, now, tell)
        if outcome is not None:
            winner = game.seats[outcome.winners[0]].handle
            comment = f"Player {winner} won after {outcome.turns} turns"
            game.result = {"winners": list(outcome.winners), "reason": outcome.reason, "comment": comment}
            self.broadcast(game, GameCompleted(game, winner, comment))
            self.finish(game, GameState.COMPLETED, now)

    def _turn(self, player: Player) -> tuple[Game, int]:
        game = self._current(player)
        if game.state is not GameState.PLAYING:
            raise UnknownGame("Game is not being played", handle=player.handle)
        seat = game.pending_seat
        if seat is None or game.seats[seat].player is not player:
            raise NoMovePending(handle=player.handle)
        return game, seat

    def execute(self, player: Player, move_id: str, now: float) -> None:
        game, seat = self._turn(player)
        move = game.pending.get(move_id)
        if move is None:
            raise IllegalMove(handle=player.handle)
        choice = list(game.pending).index(move_id) if self.journal.recording else 0
        self.turns.apply(game, seat, choice, move, now)
        self._advance(game, now)

    def optimal(self, player: Player, now: float) -> None:
        game, seat = self._turn(player)
        self.turns.robot_move(game, seat, list(game.pending.values()), now)
        self._advance(game, now)

    def thought(self, token: tuple[str, int], choice: int | None, now: float) -> None:
        """A robot's decision made away from the event loop (Turns.thought): played, and the
        game goes on, unless the game has moved on or is gone."""
        game = self.games.get(token[0])
        if game is not None and self.turns.thought(game, token, choice, now):
            self._advance(game, now)

    def retrieve(self, player: Player, now: float) -> None:
        game = self._current(player)
        if game.state is not GameState.PLAYING:
            raise UnknownGame("Game is not being played", handle=player.handle)
        game.touch(now)
        seat = next(i for i, s in enumerate(game.seats) if s.player is player)
        self.tell(player, GameStateChange(game, seat))

    # -----------------------------------------------------------------------------------------
    # Shutdown

    def shutdown(self, now: float) -> None:
        """SERVER_SHUTDOWN to every connection, games cancelled silently, then close 1001."""
        self.send_to(self.connections, ServerShutdown())
        if not self.journal.recording:  # with a store, games in progress wait for the next start
            for game in self.games.values():
                if game.in_progress:
                    self.finish(game, GameState.CANCELLED, now)
        for conn in list(self.connections):
            self.sink.close(conn, GOING_AWAY, "server shutdown")

    # -----------------------------------------------------------------------------------------
    # Restart and store failures

    def restore(self, snapshot: Snapshot, now: float, decode_options: OptionsDecoder) -> None:
        """Players and live games from the store after a restart. Nobody is connected yet:
        humans keep their seats until ``restart_grace`` is over (a restart is not a player's
        disconnect), and idle clocks are not charged for the downtime."""
        downtime = max(0.0, now - snapshot.heartbeat) if snapshot.heartbeat is not None else 0.0
        for row in snapshot.players:
            self._load_player(row, now)
        for game_row_ in snapshot.games:
            if game_row_.protocol == self.game_name:
                self._load_game(
                    game_row_,
                    snapshot.moves.get(game_row_.id, []),
                    decode_options,
                    downtime,
                    now,
                    snapshot.states.get(game_row_.id),
                )
        self.grace_until = now + self.settings.restart_grace

    def _load_player(self, row: PlayerRow, now: float) -> Player:
        # Player rows are written when players register, not on every request: the idle
        # clock of a restored player starts again at the restart.
        player = Player(row.id, row.handle, None, row.registered, now, idle=True)
        self.players[player.id] = player
        self.handles[player.handle] = player
        return player

    def _load_game(
        self,
        row: GameRow,
        moves: Sequence[MoveRow],
        decode_options: OptionsDecoder,
        downtime: float,
        now: float,
        state: GameSnapshotRow | None = None,
    ) -> Game:
        game = rebuild(row, moves, self.plugin, self.players, decode_options, state, self.turns.codec)
        game.last_active += downtime
        self.games[game.id] = game
        if game.in_progress:
            self.ledger.opened()
        for seat in game.seats:
            if seat.player is not None and seat.state is not SeatState.QUIT and game.in_progress:
                seat.player.game = game
        if game.state is GameState.PLAYING:
            # The turn it stood at, with the ids its player was sent (nobody is told again).
            self._advance(game, now, tell=False)
        return game

    def end_grace(self, now: float) -> None:
        """Humans restored after a restart who have not come back leave their games now."""
        self.grace_until = None
        for player in list(self.players.values()):
            if player.conn is None and player.game is not None:
                self._leave(player, f"Player {player.handle} disconnected", now)

    def revert(
        self,
        players: Mapping[str, PlayerRow | None],
        games: Mapping[str, tuple[GameRow, list[MoveRow]] | None],
        decode_options: OptionsDecoder,
        now: float,
    ) -> None:
        """Return the named players and games to what the store holds, after a failed commit:
        what could not be stored is forgotten, as if it had never been asked for."""
        self.journal.discard()
        for player_id, row in players.items():
            current = self.players.get(player_id)
            if row is None and current is not None:  # registered by the failed change
                self._forget(current, stored=False)
            elif row is not None and current is None:  # unregistered by it
                self._load_player(row, now)
        for game_id, stored in games.items():
            current_game = self.games.pop(game_id, None)
            if current_game is not None:
                if current_game.in_progress:
                    self.ledger.closed()
                for seat in current_game.seats:
                    if seat.player is not None and seat.player.game is current_game:
                        seat.player.game = None
            if stored is not None:
                restored = self._load_game(stored[0], stored[1], decode_options, 0.0, now)
                if any(seat.player is not None and seat.player.conn is None for seat in restored.seats):
                    # Seated again but gone meanwhile: as after a restart, it may come back.
                    self.grace_until = self.grace_until or now + self.settings.restart_grace
        # What remains recorded now (a robot's turn played on reloading) is new: it is stored.
