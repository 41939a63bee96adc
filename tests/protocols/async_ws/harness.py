"""The /async service without sockets: connections are numbers, time is a number the test moves,
and every effect is read back (messages decoded, records kept as the store would keep them)."""

from __future__ import annotations

import itertools
from collections import defaultdict, deque
from random import Random
from typing import Any

import msgspec

from parlour.accounts.tokens import SessionTokens
from parlour.core.effects import Broadcast, Close, Effect, Send, Store
from parlour.protocols.async_ws.service import AsyncService
from parlour.protocols.async_ws.state.hub import AsyncLimits
from parlour.storage import AccountRow, AsyncGameRow, AsyncTurnRow, MetaRow, RatingRow, Record

SECRET = b"k" * 32


class Harness:
    def __init__(self, limits: AsyncLimits | None = None, seed: int = 1, now: float = 1_000_000.0) -> None:
        self.now = now
        self.service = AsyncService(SessionTokens(SECRET, 86400.0), limits, Random(seed))
        self.inbox: dict[int, deque[dict[str, Any]]] = defaultdict(deque)
        self.closed: dict[int, Close] = {}
        self.records: list[Record] = []
        #: What a store would hold now: the last row of each game, every turn row, accounts...
        self.games: dict[int, AsyncGameRow] = {}
        self.turns: dict[tuple[int, int], AsyncTurnRow] = {}
        self.accounts: dict[int, AccountRow] = {}
        self.ratings: dict[tuple[int, str], RatingRow] = {}
        self.meta: dict[str, str] = {}
        self._conns = itertools.count(1)
        self.names: dict[int, str] = {}

    # -- Driving --------------------------------------------------------------------------------

    def run(self, effects: list[Effect]) -> None:
        stored_first = True
        for effect in effects:
            if isinstance(effect, Store):
                assert stored_first, "records must come before anything that reveals them"
                self._keep(effect.records)
            else:
                stored_first = False
                if isinstance(effect, Send):
                    self.inbox[effect.conn].append(msgspec.json.decode(effect.data))
                elif isinstance(effect, Broadcast):
                    assert len(set(effect.conns)) == len(effect.conns), "one message per recipient"
                    for send in effect.sends():
                        self.inbox[send.conn].append(msgspec.json.decode(send.data))
                elif isinstance(effect, Close):
                    self.closed[effect.conn] = effect

    def _keep(self, records: list[Record]) -> None:
        for record in records:
            self.records.append(record)
            if isinstance(record, AsyncGameRow):
                self.games[record.id] = record
            elif isinstance(record, AsyncTurnRow):
                assert record.game_id in self.games, "a turn row needs its game row first"
                self.turns[(record.game_id, record.turn_index)] = record
            elif isinstance(record, AccountRow):
                self.accounts[record.id] = record
            elif isinstance(record, RatingRow):
                self.ratings[(record.account_id, record.game_type)] = record
            elif isinstance(record, MetaRow):
                self.meta[record.key] = record.value

    def account(self, name: str) -> tuple[int, str]:
        account, effects = self.service.create_account(name, "", self.now)
        assert account is not None
        self.run(effects)
        token, _ = self.service.tokens.issue(account.id, name, self.now)
        return account.id, token

    def connect(self) -> int:
        conn = next(self._conns)
        self.run(self.service.connected(conn, self.now))
        return conn

    def player(self, name: str) -> tuple[int, int]:
        """A new account, connected and authenticated: (connection, account id)."""
        account_id, token = self.account(name)
        conn = self.connect()
        self.send(conn, type="AsyncAuthRequest", name=name, sessionToken=token)
        self.expect(conn, "AsyncConnectedRequest")
        self.names[conn] = name
        return conn, account_id

    def back(self, name: str) -> int:
        """``name`` signs in again on a new connection (after a restart or a drop)."""
        account_id = self.service.hub.accounts.named(name).id
        conn = self.connect()
        token = self.service.tokens.issue(account_id, name, self.now)[0]
        self.send(conn, type="AsyncAuthRequest", name=name, sessionToken=token)
        self.expect(conn, "AsyncConnectedRequest")
        return conn

    def send(self, conn: int, **message: Any) -> None:
        self.run(self.service.received(conn, msgspec.json.encode(message).decode(), self.now))

    def raw(self, conn: int, data: str | bytes) -> None:
        self.run(self.service.received(conn, data, self.now))

    def drop(self, conn: int) -> None:
        self.run(self.service.disconnected(conn, self.now))

    def advance(self, seconds: float) -> None:
        """Move the clock and run the ticker once, as the transport does every second."""
        self.now += seconds
        self.run(self.service.tick(self.now))

    # -- Reading --------------------------------------------------------------------------------

    def expect(self, conn: int, kind: str, **fields: Any) -> dict[str, Any]:
        """The first queued message of ``kind`` with these ``fields`` (others stay queued)."""
        box = self.inbox[conn]
        for index, message in enumerate(box):
            if message["type"] == kind and all(message.get(key) == value for key, value in fields.items()):
                del box[index]
                return message
        raise AssertionError(
            f"no {kind} with {fields} for connection {conn}; queued: "
            f"{[(m['type'], {k: m.get(k) for k in fields}) for m in box]}"
        )

    def error(self, conn: int, code: str) -> dict[str, Any]:
        return self.expect(conn, "ErrorRequest", code=code)

    def none(self, conn: int, kind: str) -> None:
        assert all(message["type"] != kind for message in self.inbox[conn]), f"unexpected {kind}"

    def clear(self, *conns: int) -> None:
        for conn in conns or tuple(self.inbox):
            self.inbox[conn].clear()

    # -- Scenarios ------------------------------------------------------------------------------

    def open_game(self, creator: int, *joiners: int, **config: Any) -> int:
        """A game created by ``creator`` and joined by ``joiners`` (started when full)."""
        configuration = {"game_type": "test", "max_players": len(joiners) + 1, **config}
        self.send(creator, type="LobbyCreateGameRequest", configuration=configuration, initial_state="s0")
        game_id: int = self.expect(creator, "LobbyGameCreatedRequest")["game_id"]
        for conn in joiners:
            self.send(conn, type="LobbyJoinGameRequest", game_id=game_id, password=config.get("password"))
            self.expect(conn, "LobbyNewPlayerRequest", game_id=game_id)
        return game_id

    def restart(self, downtime: float = 0.0, offload: bool = False) -> Harness:
        """A new service restored from what this one stored, ``downtime`` seconds after this
        one's last heartbeat (its ``now``); ``offload``: its slow robots think away from the loop."""
        other = Harness(self.service.hub.limits, seed=2, now=self.now + downtime)
        other.service.games.offload = offload
        other.service.restore(
            self.accounts.values(),
            self.ratings.values(),
            [row for row in self.games.values() if row.status not in ("OVER", "ABORTED")],
            self.meta.get("async_next_game_id"),
            self.now,
            other.now,
        )
        for attribute in ("games", "turns", "accounts", "ratings", "meta"):
            getattr(other, attribute).update(getattr(self, attribute))
        return other
