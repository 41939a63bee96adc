"""Who is in the /async lobby (scalable-server-protocol.rst "Lobby"; scalable-server-notes.md S13).

Three things must agree on it: each session's ``in_lobby`` flag (what the lobby chat checks of a
sender), the member set (the pushed player list, /statistics), and the cached list of the members'
connections that every lobby chat line is broadcast to (one list shared by all the lines until the
membership changes, so that the transport recognises them as one audience). ``Lobby.move`` is the
one place that changes membership, and it keeps the three together: entering, leaving, a game
starting, signing out and a replaced connection all come through it. Whether the pushed lists
changed is said through ``lists_changed``, by the games too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, ValuesView

from parlour.core.effects import ConnId
from parlour.protocols.async_ws.sessions import Session

__all__ = ["Lobby"]


class Lobby:
    """The players in the lobby, their connections, and whether its lists are due a push."""

    __slots__ = ("_changed", "_conns", "_members", "_pushed")

    def __init__(self) -> None:
        #: account id -> its session (members are signed in: leaving comes first when a
        #: connection goes or is replaced).
        self._members: dict[int, Session] = {}
        #: The members' connections (see ``conns``), None when stale.
        self._conns: list[ConnId] | None = None
        self._changed = False
        self._pushed = float("-inf")

    def __contains__(self, player_id: object) -> bool:
        return player_id in self._members

    def __len__(self) -> int:
        return len(self._members)

    def __iter__(self) -> Iterator[int]:
        return iter(self._members)

    def sessions(self) -> ValuesView[Session]:
        return self._members.values()

    def move(self, session: Session, inside: bool) -> bool:
        """The one change of membership: ``session``'s player enters (``inside``) or leaves the
        lobby. Whether it changed anything (entering twice or leaving when out does not)."""
        player_id = session.player_id
        if session.in_lobby == inside or player_id is None:
            return False
        session.in_lobby = inside
        if inside:
            self._members[player_id] = session
        else:
            del self._members[player_id]
            session.sent_players = session.sent_games = ""  # the lists again on coming back
        self._conns = None
        self._changed = True
        return True

    def game_started(self, player_ids: Iterable[int]) -> None:
        """These players' game started: those in the lobby leave it (the text: "when that game
        starts, the player is exited"), and the lists change (the game is no longer open)."""
        for player_id in player_ids:
            session = self._members.get(player_id)
            if session is not None:
                self.move(session, False)
        self._changed = True

    def conns(self) -> list[ConnId]:
        """The connections of everyone in the lobby: one list, kept until someone enters or
        leaves, and never changed once handed out (a new one replaces it), so that the chat
        lines of a busy lobby share it and a transport recognises them as one audience (see
        Broadcast)."""
        conns = self._conns
        if conns is None:
            conns = self._conns = [session.conn for session in self._members.values()]
        return conns

    def unsent(self, session: Session, players: str, games: str) -> tuple[str | None, str | None]:
        """Which of the lists (deflated) ``session`` was not sent yet, None for those it has;
        from now on it has both (S13: pushed only when changed)."""
        new_players = players if players != session.sent_players else None
        new_games = games if games != session.sent_games else None
        session.sent_players, session.sent_games = players, games
        return new_players, new_games

    def lists_changed(self) -> None:
        """The pushed lists (players, open games) changed: pushed on the next due tick."""
        self._changed = True

    def push_due(self, now: float, interval: float) -> bool:
        """Whether the lists are to be pushed now (changed, and ``interval`` since the last
        push); if so, they count as pushed."""
        if not self._changed or now - self._pushed < interval:
            return False
        self._changed = False
        self._pushed = now
        return True
