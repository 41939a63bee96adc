"""The hub's side of placement in a cluster (placement.py; docs/cluster.md "Placement"): which
games run on shards, and the notes the hub sends them and takes from them.

A game runs on the hub until it starts; the input that starts it stores it, and the same commit
releases a Placed note to its shard's owner, which runs it from then on. The hub keeps a copy to
read (its seats for chat, presence and statistics, its status for the lists) until the owner
says it ended, or that the store holds no such game (Gone). Requests for a started game that
reach the hub (a connection its node did not know as signed in yet) are relayed to the owner.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import msgspec

from parlour.core.effects import Effect, Relay, Store
from parlour.protocols.async_ws.game.lifecycle import LIVE
from parlour.protocols.async_ws.game.model import AsyncGame, decode_game
from parlour.protocols.async_ws.players import notify
from parlour.protocols.async_ws.shards.placement import (
    EVERYONE,
    IN_GAME,
    MAX_HOPS,
    AbortDone,
    AbortGame,
    Changed,
    Gather,
    Gone,
    Named,
    Note,
    Noticed,
    Online,
    OnlineAll,
    Placed,
    Rated,
    Routed,
    WantOnline,
    Watch,
    decode_note,
    encode_note,
    shard_name,
    shard_of,
)
from parlour.protocols.async_ws.state.hub import Hub, Session
from parlour.protocols.async_ws.wire.messages import ClientMessage, WhatsNewPussycatRequest
from parlour.storage import AsyncGameRow

__all__ = ["Placing", "Routed"]

log = logging.getLogger("parlour.async")


def started(record: AsyncGame) -> bool:
    """Placed on its shard: every game but those waiting for their players."""
    return record.status != "NOT_STARTED"


class Placing:
    """One per hub of a cluster (AsyncService.placing)."""

    __slots__ = ("_calls", "aborting", "hub", "shards")

    def __init__(self, hub: Hub, shards: int) -> None:
        self.hub = hub
        self.shards = shards
        #: Admins' aborts sent to shards, by call: what to tell when the shard answers.
        self.aborting: dict[int, tuple[int, Callable[[str | None], None]]] = {}
        self._calls = 0
        hub.games.placed = started
        hub.placing = self

    def shard(self, game_id: int) -> str:
        return shard_name(shard_of(game_id, self.shards))

    def decode(self, data: bytes) -> Note | None:
        try:
            return decode_note(data)
        except (msgspec.DecodeError, msgspec.ValidationError) as error:
            log.error("async hub: unreadable note: %s", error)
            return None

    # -- Out ------------------------------------------------------------------------------------

    def place(self, effects: list[Effect]) -> None:
        """A game this input started (stored by its first effect) goes to its shard's owner once
        the commit is done: the Placed note follows the Store. The hub never stores a game it
        placed again, so each is placed once."""
        first = effects[0] if effects else None
        if type(first) is not Store:
            return
        notes = [
            Relay(self.shard(row.id), encode_note(Placed(row.doc, [])))
            for row in first.records
            if isinstance(row, AsyncGameRow) and row.status != "NOT_STARTED" and row.status in LIVE
        ]
        effects[1:1] = notes

    def online(self, player_id: int, conn: int, on: bool) -> None:
        """Every node (its routing, its shards' games) learns a sign-in or sign-out."""
        self.hub.output.relay(EVERYONE, encode_note(Online(player_id, conn, on)))

    def named(self, account_id: int, name: str) -> None:
        self.hub.output.relay(EVERYONE, encode_note(Named(account_id, name)))

    def relayed(self, session: Session, message: ClientMessage, text: str, hops: int) -> bool:
        """A request for a started game goes to its shard's owner (True: relayed or refused)."""
        hub = self.hub
        kind = type(message).__name__
        game_id = getattr(message, "game_id", None)
        if game_id is None or not hub.games.is_placed(game_id):
            return False
        if kind == "StartObserveGameRequest" or kind == "StopObserveGameRequest":
            # the hub checks what it knows first (lobby/observe.py), then tells the shard
            return False
        if kind not in IN_GAME:
            return False
        assert session.player_id is not None
        if hops >= MAX_HOPS or not text:
            hub.error(session.conn, "TRY_AGAIN", "the game is moving between nodes; send it again", message)
            return True
        hub.output.relay(
            self.shard(game_id), encode_note(Routed(session.conn, session.player_id, text, hops + 1))
        )
        return True

    def gathered(self, session: Session, msg: WhatsNewPussycatRequest, now: float) -> bool:
        """WhatsNewPussycatRequest without a game: the reports of the games that run here, then
        through each shard with started games of the player (the last one answers)."""
        hub = self.hub
        player_id = session.player()
        games = hub.games.live(player_id)
        placed = sorted(game.id for game in games if hub.games.is_placed(game.id))
        if not placed:
            return False
        shards = sorted({shard_of(game_id, self.shards) for game_id in placed})
        reports = [game.report(now, player_id) for game in games if not hub.games.is_placed(game.id)]
        note = Gather(session.conn, player_id, msg.request_id, reports, shards, placed)
        hub.output.relay(shard_name(shards[0]), encode_note(note))
        return True

    def abort(self, game_id: int, reason: str, answered: Callable[[str | None], None]) -> int:
        """An admin's abort of a started game, sent to its shard's owner; ``answered`` gets
        None once the abort is stored there, or why it was not done. The call's number (for
        ``forget``, when nobody waits any more)."""
        self._calls += 1
        self.aborting[self._calls] = (game_id, answered)
        self.hub.output.relay(self.shard(game_id), encode_note(AbortGame(self._calls, game_id, reason)))
        return self._calls

    def forget(self, call: int) -> None:
        self.aborting.pop(call, None)

    def watch(self, game_id: int, conn: int, player_id: int, on: bool, request_id: str | None) -> None:
        self.hub.output.relay(
            self.shard(game_id), encode_note(Watch(game_id, conn, player_id, on, request_id))
        )

    # -- In -------------------------------------------------------------------------------------

    def noted(self, note: Note, now: float) -> None:
        hub = self.hub
        if type(note) is Changed:
            record = decode_game(note.doc)
            if record.id in hub.games:
                hub.games.adopt(record)
                if record.status not in LIVE:  # no longer anyone's live game
                    hub.observers.forget(record.id)
                    hub.lobby.lists_changed(record.id)
        elif type(note) is Gone:
            if hub.games.is_placed(note.game_id):  # the store lost it: nobody runs it any more
                hub.games.reload({note.game_id: None}, now)
                hub.observers.forget(note.game_id)
        elif type(note) is Noticed:
            args = [hub.name(note.about)] if note.about is not None else []
            notify.notify(
                hub, note.player, note.kind, note.game_id, note.turn_index, args, now, loc_key=note.text
            )
        elif type(note) is Rated:
            for row in note.rows:
                hub.accounts.rate(row)
        elif type(note) is WantOnline:
            self.everyone_online()
        elif type(note) is AbortDone:
            waiting = self.aborting.get(note.call)
            if waiting is not None and waiting[0] == note.game_id:  # not an earlier hub's call
                del self.aborting[note.call]
                waiting[1](note.problem)

    def everyone_online(self) -> None:
        """Every node's directory gets who is signed in, whole (a node that starts asks)."""
        pairs = sorted(self.hub.online.items())
        self.hub.output.relay(EVERYONE, encode_note(OnlineAll(pairs)))
