"""The owner of one shard of started /async games in a cluster (placement.py; docs/cluster.md
"Placement").

A shard's owner runs its games exactly as one server runs all of them (the same game machine,
registry and handlers) over a hub of its own that holds no connection: who is online, names and
ratings come from the node's directory, requests arrive as Routed notes with their account,
and what a game must tell the hub's side (a push notification, a new rating, its end) leaves as
notes. Sends go to connections wherever they are: the runtime hands other nodes' to the bus.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from random import Random
from typing import Any, Final

import msgspec

from parlour.core.effects import ConnId, Effect, Relay
from parlour.core.effects import Store as StoreEffect
from parlour.core.ids import IdSource
from parlour.protocols.async_ws.game.game_registry import Games
from parlour.protocols.async_ws.game.host import Notice
from parlour.protocols.async_ws.game.lifecycle import LIVE, WATCHABLE
from parlour.protocols.async_ws.game.model import AsyncGame, decode_game
from parlour.protocols.async_ws.ingame import phase_requests, play
from parlour.protocols.async_ws.ingame.aborts import abort_here
from parlour.protocols.async_ws.lobby import observe
from parlour.protocols.async_ws.players.hubhost import HubHost
from parlour.protocols.async_ws.shards.placement import (
    EVERYONE,
    HUB,
    MAX_HOPS,
    NOT_SAVED,
    AbortDone,
    AbortGame,
    Changed,
    Directory,
    Gather,
    Gone,
    Named,
    Noticed,
    Online,
    OnlineAll,
    Placed,
    Rated,
    Routed,
    Watch,
    decode_note,
    encode_note,
    head,
    shard_name,
    shard_of,
)
from parlour.protocols.async_ws.state.hub import AsyncLimits, Handler, Hub, Session
from parlour.protocols.async_ws.state.readback import AsyncReload, read_back, refusal_text
from parlour.protocols.async_ws.state.refusals import Unread, answer_if_refused, tell_refused
from parlour.protocols.async_ws.wire.messages import (
    ClientMessage,
    ErrorCode,
    GameObservedRequest,
    GameStatusReportRequest,
    StartObserveGameRequest,
    StopObserveGameRequest,
    WhatsNewPussycatRequest,
    decode_client,
)
from parlour.storage import AsyncGameRow, RatingRow, Record, Store

__all__ = ["ShardService"]

log = logging.getLogger("parlour.async")

#: The requests a shard answers (placement.IN_GAME but WhatsNewPussycatRequest, answered apart).
HANDLERS: Final[dict[str, Handler]] = {**play.HANDLERS, **phase_requests.PHASE_HANDLERS}


class ShardHost(HubHost):
    """game.host.GameHost on a shard's owner: the hub's side is reached by notes."""

    __slots__ = ()

    def notify(
        self,
        player_id: int,
        kind: Notice,
        game_id: int,
        turn_index: int,
        now: float,
        about: int | None = None,
        text: str | None = None,
    ) -> int:
        if player_id in self.hub.online:
            return 0  # the websocket message says it already
        # The devices are the hub's: it queues the notification (S16).
        self.hub.output.relay(HUB, encode_note(Noticed(player_id, kind, game_id, turn_index, about, text)))
        return 0

    def rated(self, rows: list[RatingRow]) -> None:
        """Stored with the game's end, and every node's copy of the ratings (the hub's too)
        learns them."""
        if rows:
            self.hub.store(*rows)
            self.hub.output.relay(EVERYONE, encode_note(Rated(rows)))

    def started(self, game_id: int, player_ids: Sequence[int]) -> None:
        """Games arrive here started: the hub took them out of its lobby."""

    def lists_changed(self, game_id: int | None = None) -> None:
        """The lobby's lists are the hub's (a started game is in none of them)."""


class ShardService:
    """One shard of started games, on the node that holds its lease."""

    def __init__(
        self,
        shard: int,
        shards: int,
        directory: Directory,
        limits: AsyncLimits,
        rng: Random | None = None,
        ids: IdSource | None = None,
    ) -> None:
        self.shard = shard
        self.shards = shards
        self.name = shard_name(shard)
        self.directory = directory
        hub = self.hub = Hub(limits, rng or Random())
        # No connection is this service's: presence, names and ratings are the node's copy.
        hub.online = directory.online
        hub.accounts = directory.accounts
        self.games = Games(ShardHost(hub), limits, ids)
        hub.games = self.games
        #: What the hub's copy of each game shows: its status and seat states (hub_placement.py).
        self._told: dict[int, tuple[str, tuple[str, ...]]] = {}
        #: Reads one game from the store and hands it to ``found`` (or ``unread``): set by the
        #: node, which does the reading; None: games are never read one by one.
        self.fetch: Callable[[int], None] | None = None
        #: The games being read so (one read each, however many requests ask meanwhile).
        self._fetching: set[int] = set()

    # -- The Service protocol: a shard has no connection of its own ------------------------------

    def connected(self, conn: ConnId, now: float) -> list[Effect]:
        return []

    def received(self, conn: ConnId, data: str | bytes, now: float) -> list[Effect]:
        return []

    def disconnected(self, conn: ConnId, now: float) -> list[Effect]:
        return []

    def tick(self, now: float) -> list[Effect]:
        for game_id in self.games.tick(now):
            self.hub.observers.forget(game_id)
        return self._take(now)

    def shutdown(self, now: float) -> list[Effect]:
        return []

    def stats(self) -> dict[str, Any]:
        return {
            "async_shard_games_live": sum(1 for game in self.games.values() if game.status in LIVE),
        }

    def reload(self, records: list[Record], store: Store) -> AsyncReload:
        return read_back(records, store)

    def store_failed(
        self, records: list[Record], origins: list[ConnId], reload: AsyncReload | None, now: float
    ) -> list[Effect]:
        """A commit failed: the games it touched return to what the store holds, and the senders
        are told nothing changed (as AsyncService.store_failed)."""
        reload = AsyncReload() if reload is None else reload
        self.games.reload(reload.async_games, now)
        for game_id, row in reload.async_games.items():
            self._follow(game_id, row)
        for conn in origins:
            self.hub.error(conn, "INTERNAL_ERROR", refusal_text(reload.failure is None))
        return self._take(now)

    def found(self, game_id: int, row: AsyncGameRow | None, now: float) -> list[Effect]:
        """The store's row of a game the hub sent a request for and this shard did not hold
        (``fetch``; None: the store has none). The shard runs it from now on as if it had been
        placed here, and the hub's copy follows the store (or goes)."""
        self._fetching.discard(game_id)
        if game_id not in self.games and self.owns(game_id):
            if row is not None and row.status != "NOT_STARTED":
                game = self.games.adopt(decode_game(row.doc))
                if game.status in LIVE:
                    game.resume_robots(now)
                    for seat in game.record.seats:
                        if seat.player_id is not None and seat.player_id in self.hub.online:
                            game.returned(seat.player_id, now)
            self._follow(game_id, row)
        return self._take(now)

    def unread(self, game_id: int) -> None:
        """The store could not be read for ``fetch``: the next request for the game asks again."""
        self._fetching.discard(game_id)

    def _follow(self, game_id: int, row: AsyncGameRow | None) -> None:
        """The hub's copy of a game becomes what the store holds: this shard returned to it (a
        read-back, or a game read because the hub held it and the shard did not)."""
        if not self.owns(game_id):
            return
        game = self.games.get(game_id)
        if row is None:
            self._told.pop(game_id, None)
            self.hub.output.relay(HUB, encode_note(Gone(game_id)))
            return
        if game is not None and game.status in LIVE:
            self._told[game_id] = _shown(game)
        else:
            self._told.pop(game_id, None)
        self.hub.output.relay(HUB, encode_note(Changed(row.doc)))

    def thought(self, token: tuple[str, int], choice: int | None, now: float) -> list[Effect]:
        """A robot's decision made away from the event loop is back (AsyncService.thought)."""
        self.games.thought(token, choice, now)
        return self._take(now)

    def _abort_refused(self, note: AbortGame, code: ErrorCode, confirmed: bool) -> None:
        """Store.refused of an admin's abort: the admin is told (the game is read back as
        stored by store_failed, which follows)."""
        self.hub.output.relay(HUB, encode_note(AbortDone(note.call, note.game_id, NOT_SAVED)))

    # -- The shard's own ------------------------------------------------------------------------

    def owns(self, game_id: int) -> bool:
        return shard_of(game_id, self.shards) == self.shard

    def restore(self, rows: Iterable[AsyncGameRow], heartbeat: float | None, now: float) -> list[Effect]:
        """The shard's started games the store holds, clocks not charged for the time nobody
        ran them; players online are asked again for what the games wait for (a request sent
        to the previous owner may have been lost with it)."""
        mine = [
            row for row in rows if row.status != "NOT_STARTED" and row.status in LIVE and self.owns(row.id)
        ]
        self.games.restore(mine, None, heartbeat, now)
        for row in mine:
            game = self.games.game(row.id)
            if game is None:
                continue
            for seat in game.record.seats:
                if seat.player_id is not None and seat.player_id in self.hub.online:
                    game.returned(seat.player_id, now)
        return self._take(now)

    def noted(self, data: bytes, now: float) -> list[Effect]:
        """A note from the hub, a gateway or the directory."""
        try:
            note = decode_note(data)
        except (msgspec.DecodeError, msgspec.ValidationError) as error:
            log.error("%s: unreadable note: %s", self.name, error)
            return []
        # The client's request this note carries, and its connection, on whichever node.
        request: ClientMessage | Unread | None = None
        conn: ConnId = 0
        if type(note) is Routed:
            request, conn = self._routed(note, now), note.conn
        elif type(note) is Placed:
            record = decode_game(note.doc)
            if self.owns(record.id):
                game = self.games.adopt(record)
                self._told[record.id] = _shown(record)
                for player_id in note.observers:
                    self.hub.observers.add(record.id, player_id)
                game.resume_robots(now)  # started by the hub with a robot's turn to think
        elif type(note) is Gather:
            self._gather(note, now)
            request, conn = WhatsNewPussycatRequest(request_id=note.request_id), note.conn
        elif type(note) is Watch:
            self._watch(note, now)
            kind = StartObserveGameRequest if note.on else StopObserveGameRequest
            request, conn = kind(game_id=note.game_id, request_id=note.request_id), note.conn
        elif type(note) is Online:
            # The directory took it first: a player still online left an older connection only.
            if note.on or note.player not in self.hub.online:
                self._online(note.player, note.on, now)
        elif type(note) is OnlineAll:
            for player_id, _ in note.pairs:
                self._online(player_id, True, now)
        elif type(note) is Named:  # the directory took the new name already (on_everyone)
            self.games.rename_seats(note.account, note.name, now, live_only=True)
        elif type(note) is AbortGame:
            # The answer follows the records (a Relay is released after the same commit): the
            # admin hears it is done once it is stored.
            problem = abort_here(self.hub, self.games, note.game_id, note.reason, now)
            self.hub.output.relay(HUB, encode_note(AbortDone(note.call, note.game_id, problem)))
        effects = self._take(now)
        if request is not None:
            # If its effects are refused, the request's own error answers it (its request_id),
            # sent with the effects of store_failed, which the runtime calls next.
            answer_if_refused(effects, tell_refused, self.hub, conn, request)
        elif type(note) is AbortGame:
            answer_if_refused(effects, self._abort_refused, note)
        return effects

    def _routed(self, note: Routed, now: float) -> ClientMessage | Unread:
        """A request routed here, handled or sent on (then lost if its effects are refused);
        returns it, or what it says of itself if it cannot be read."""
        hub = self.hub
        try:
            message = decode_client(note.text)
        except (msgspec.DecodeError, msgspec.ValidationError):
            self._to_hub(note)  # the hub answers what is not a request for a game
            return Unread(*head(note.text))
        game_id = getattr(message, "game_id", None)
        if game_id is None or not self.owns(game_id) or game_id not in self.games:
            if note.hops and game_id is not None and self.owns(game_id):
                # Sent on by the hub, which holds the game as started here: the two disagree
                # (a Placed note lost, a read-back that found the game gone). The store says
                # which is right; meanwhile the request is answered TRY_AGAIN.
                self._ask_store(game_id)
            self._to_hub(note)  # not started yet (the hub runs it), or unknown: the hub says
            return message
        session = Session(note.conn, now, player_id=note.player)
        if type(message) is WhatsNewPussycatRequest:
            game = self.games.game(game_id)
            if game is None or game.record.seat_of(note.player) is None:
                hub.error(note.conn, "UNKNOWN_GAME", "you are not in a game with this id", message)
                return message
            reports = [game.report(now, note.player)]
            hub.send(
                note.conn, GameStatusReportRequest(status_reports=reports, request_id=message.request_id)
            )
            return message
        handler = HANDLERS.get(type(message).__name__)
        if handler is None:
            self._to_hub(note)
            return message
        handler(hub, session, message, now)
        return message

    def _ask_store(self, game_id: int) -> None:
        if self.fetch is not None and game_id not in self._fetching:
            self._fetching.add(game_id)
            self.fetch(game_id)

    def _to_hub(self, note: Routed) -> None:
        if note.hops >= MAX_HOPS:
            kind, request_id, game_id = head(note.text)
            self.hub.error(
                note.conn,
                "TRY_AGAIN",
                "the game is moving between nodes; send it again",
                request_type=kind,
                request_id=request_id,
                game_id=game_id,
            )
            return
        self.hub.output.relay(HUB, encode_note(Routed(note.conn, note.player, note.text, note.hops + 1)))

    def _gather(self, note: Gather, now: float) -> None:
        lacking = [game_id for game_id in note.games if self.owns(game_id) and game_id not in self.games]
        if lacking:
            # Left out, the game would look ended to the player: read it, and ask again.
            for game_id in lacking:
                self._ask_store(game_id)
            self.hub.error(
                note.conn,
                "TRY_AGAIN",
                "the game is moving between nodes; send it again",
                request_type="WhatsNewPussycatRequest",
                request_id=note.request_id,
            )
            return
        reports = note.reports + [game.report(now, note.player) for game in self.games.live(note.player)]
        rest = [shard for shard in note.shards if shard != self.shard]
        if rest:
            forward = Gather(note.conn, note.player, note.request_id, reports, rest, note.games)
            self.hub.output.relay(shard_name(rest[0]), encode_note(forward))
        else:
            reports.sort(key=lambda report: report.game_id)
            self.hub.send(
                note.conn, GameStatusReportRequest(status_reports=reports, request_id=note.request_id)
            )

    def _watch(self, note: Watch, now: float) -> None:
        hub = self.hub
        game = self.games.get(note.game_id)
        if not note.on:
            observe.unwatch(hub, note.conn, note.player, note.game_id, note.request_id)
        elif game is None or game.status not in WATCHABLE:
            refused = GameObservedRequest(
                game_id=note.game_id, status="GAME_NOT_RUNNING", request_id=note.request_id
            )
            hub.send(note.conn, refused)
        else:
            observe.watch(hub, note.conn, note.player, game.id, now, note.request_id)

    def _online(self, player_id: int, on: bool, now: float) -> None:
        """A player signed in (the games here ask again what they wait for from them) or out
        (a turn they were asked to play for someone goes to a present player; watching ends)."""
        if not on:
            self.hub.observers.signed_out(player_id)
        for game in self.games.live(player_id):
            if on:
                game.returned(player_id, now)
            else:
                game.hand_over(player_id, now)

    def _take(self, now: float) -> list[Effect]:
        """This input's effects; the hub's copy of each game whose status or seats changed
        follows (after the same commit)."""
        effects = self.hub.take(now)
        first = effects[0] if effects else None
        if type(first) is StoreEffect:
            told = self._told
            for row in first.records:
                if type(row) is not AsyncGameRow:
                    continue
                game = self.games.get(row.id)
                shown = _shown(game) if game is not None else (row.status, ())
                if told.get(row.id) != shown:
                    told[row.id] = shown
                    effects.insert(1, Relay(HUB, encode_note(Changed(row.doc))))
                if row.status not in LIVE:
                    told.pop(row.id, None)
        return effects


def _shown(game: AsyncGame) -> tuple[str, tuple[str, ...]]:
    return game.status, tuple(seat.state for seat in game.seats)
