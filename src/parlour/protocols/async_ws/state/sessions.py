"""The /async connections and who is signed in on them (docs/async-decisions.md S5: one live
connection per account).

One ``Sessions`` per service owns both maps; the hub hands out read-only views of them
(``hub.sessions``, ``hub.online``) and every change goes through the methods below.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from parlour.core.effects import ConnId
from parlour.core.ratelimit import TokenBucket

__all__ = ["Session", "Sessions"]


@dataclass(slots=True)
class Session:
    """One /async connection: anonymous until AsyncAuthRequest succeeds."""

    conn: ConnId
    last_seen: float
    player_id: int | None = None
    session: str = ""
    #: Kept by the lobby (lobby_members.Lobby.move) with its member set.
    in_lobby: bool = False
    #: The rate limit's token bucket (S8: requests per second per connection).
    bucket: TokenBucket = field(default_factory=lambda: TokenBucket.full(1.0, 0.0))
    #: What this session was last sent of the lobby lists (S13: pushed only when changed),
    #: kept by the lobby (Lobby.unsent).
    sent_players: str = ""
    sent_games: str = ""
    #: Whether this connection takes the lobby lists as deltas (a Parlour extension:
    #: EnterLobbyRequest.deltas, GetLobbyListsRequest), kept by the lobby (Lobby.take_deltas).
    lobby_deltas: bool = False
    #: This session's own capped player list (lobby/lobby_requests.py), with what it was made of
    #: (the shared window's text and the buddies shown), so that a push builds it again only when
    #: that changed.
    lobby_own: tuple[str, tuple[int, ...], str] | None = None

    def player(self) -> int:
        """The signed-in account's id (handlers run only for authenticated sessions)."""
        assert self.player_id is not None
        return self.player_id


class Sessions:
    """Every open connection, and each signed-in account's live one."""

    __slots__ = ("_by_conn", "_online")

    def __init__(self) -> None:
        self._by_conn: dict[ConnId, Session] = {}
        #: account id -> its one live connection (S5).
        self._online: dict[int, ConnId] = {}

    @property
    def by_conn(self) -> Mapping[ConnId, Session]:
        return self._by_conn

    @property
    def online(self) -> Mapping[int, ConnId]:
        return self._online

    def opened(self, conn: ConnId, now: float, bucket: TokenBucket) -> Session:
        session = self._by_conn[conn] = Session(conn, now, bucket=bucket)
        return session

    def closed(self, conn: ConnId) -> Session | None:
        """The connection is gone: its session (its account, if any, is signed out apart)."""
        return self._by_conn.pop(conn, None)

    def bind(self, session: Session, player_id: int, digest: str) -> None:
        """``session`` is now ``player_id``'s live connection (replacing any other)."""
        session.player_id = player_id
        session.session = digest
        self._online[player_id] = session.conn

    def unbind(self, session: Session) -> int | None:
        """``session`` is anonymous again; the account it was signed in as if that account is
        now offline (it was its live connection), else None."""
        player_id, session.player_id = session.player_id, None
        if player_id is not None and self._online.get(player_id) == session.conn:
            del self._online[player_id]
            return player_id
        return None
