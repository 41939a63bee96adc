"""Who is in the /async lobby, and what changed in its lists since they were last pushed
(the Scalable Server text "Lobby"; docs/async-decisions.md S13; docs/async.md "Lobby lists").

Three things must agree on membership: each session's ``in_lobby`` flag (what the lobby chat checks
of a sender), the member set (the pushed player list, /statistics), and the cached list of the
members' connections that every lobby chat line is broadcast to (one list shared by all the lines
until the membership changes, so that the transport recognises them as one audience). ``Lobby.move``
is the one place that changes membership, and it keeps the three together: entering, leaving, a
game starting, signing out and a replaced connection all come through it.

The lists are pushed in two forms (lobby/lobby_requests.py builds them): the seed's whole or capped
lists, and a Parlour extension's deltas. For the deltas this owner keeps what changed since the last
push: the players who entered, left or changed presence, and the games whose place in the open-games
list may have changed (the games say which through ``lists_changed``). It also keeps the open games
as they are listed, so that no push reads every game of the service.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator, ValuesView
from itertools import islice

from parlour.core.effects import ConnId
from parlour.protocols.async_ws.state.sessions import Session
from parlour.protocols.async_ws.wire.messages import ObservableGame

__all__ = ["Lobby"]


class Lobby:
    """The players in the lobby, their connections, the open games as listed, and what changed
    in the lists since the last push."""

    __slots__ = (
        "_changed",
        "_conns",
        "_delta_conns",
        "_deltas",
        "_dirty_games",
        "_dirty_players",
        "_members",
        "_pushed",
        "_rescan",
        "cache",
        "cap",
        "fragments",
        "moved_games",
        "open_games",
        "window",
        "window_stream",
    )

    def __init__(self, cap: int = 0) -> None:
        #: The cap of the seed's lists (AsyncLimits.list_cap; 0: none).
        self.cap = cap
        #: Each member as the lists show it, JSON-encoded (lobby/lobby_requests.py): a list is made
        #: of these.
        self.fragments: dict[int, bytes] = {}
        #: account id -> its session, in the order they entered (members are signed in: leaving
        #: comes first when a connection goes or is replaced).
        self._members: dict[int, Session] = {}
        #: The members who take deltas (a Parlour extension), a subset of ``_members``.
        self._deltas: dict[int, Session] = {}
        #: The members' connections (see ``conns``) and the delta-takers', None when stale.
        self._conns: list[ConnId] | None = None
        self._delta_conns: list[ConnId] | None = None
        self._changed = False
        self._pushed = float("-inf")
        #: Players who entered, left or changed presence since the last push.
        self._dirty_players: set[int] = set()
        #: Games the games said changed (``lists_changed``), not yet read into ``open_games``;
        #: ``_rescan`` when one could not say which (a reload), and at first (restored games).
        self._dirty_games: set[int] = set()
        self._rescan = True
        #: The open games as listed (kept by lobby/lobby_requests.py from the games' word), by game
        #: id.
        self.open_games: dict[int, ObservableGame] = {}
        #: The ids of the games whose entry in ``open_games`` changed since the last push.
        self.moved_games: set[int] = set()
        #: Built lists (lobby/lobby_requests.py), good until the next push: a list a little older
        #: than the lobby is still right for whoever gets it, as the next push sends what changed
        #: since the last one (docs/async.md "Lobby lists").
        self.cache: dict[str, str] = {}
        #: The ids in the shared window of the capped list (lobby/lobby_requests.py), with
        #: ``cache``.
        self.window: frozenset[int] = frozenset()
        #: The window's deflate stream before its closing bracket, and what it gave so far
        #: (lobby/lobby_requests.py), made with ``cache["window"]``.
        self.window_stream: tuple[zlib._Compress, bytes] = (zlib.compressobj(), b"")

    def __contains__(self, player_id: object) -> bool:
        return player_id in self._members

    def __len__(self) -> int:
        return len(self._members)

    def __iter__(self) -> Iterator[int]:
        return iter(self._members)

    def sessions(self) -> ValuesView[Session]:
        return self._members.values()

    def first(self, count: int) -> list[int]:
        """The ``count`` players who have been in the lobby the longest."""
        return list(islice(self._members, count))

    def move(self, session: Session, inside: bool) -> bool:
        """The one change of membership: ``session``'s player enters (``inside``) or leaves the
        lobby. Whether it changed anything (entering twice or leaving when out does not)."""
        player_id = session.player_id
        if session.in_lobby == inside or player_id is None:
            return False
        session.in_lobby = inside
        if inside:
            self._members[player_id] = session
            if session.lobby_deltas:
                self._deltas[player_id] = session
                self._delta_conns = None
        else:
            del self._members[player_id]
            if self._deltas.pop(player_id, None) is not None:
                self._delta_conns = None
            session.sent_players = session.sent_games = ""  # the lists again on coming back
        self._conns = None
        self.player_changed(player_id)
        return True

    def take_deltas(self, session: Session, deltas: bool) -> None:
        """``session`` takes deltas from now on (``deltas``), or the seed's lists."""
        session.lobby_deltas = deltas
        player_id = session.player_id
        if not session.in_lobby or player_id is None:
            return
        if deltas and player_id not in self._deltas:
            self._deltas[player_id] = session
            self._delta_conns = None
        elif not deltas and self._deltas.pop(player_id, None) is not None:
            self._delta_conns = None

    def game_started(self, player_ids: Iterable[int]) -> None:
        """These players' game started: those in the lobby leave it (the text: "when that game
        starts, the player is exited")."""
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

    def delta_conns(self) -> list[ConnId]:
        """The connections of the members who take deltas, kept as ``conns`` is."""
        conns = self._delta_conns
        if conns is None:
            conns = self._delta_conns = [session.conn for session in self._deltas.values()]
        return conns

    def takes_deltas(self, player_id: int) -> bool:
        return player_id in self._deltas

    def unsent(self, session: Session, players: str, games: str) -> tuple[str | None, str | None]:
        """Which of the lists (deflated) ``session`` was not sent yet, None for those it has;
        from now on it has both (S13: pushed only when changed)."""
        new_players = players if players != session.sent_players else None
        new_games = games if games != session.sent_games else None
        session.sent_players, session.sent_games = players, games
        return new_players, new_games

    # -- What changed -------------------------------------------------------------------------

    def player_changed(self, player_id: int) -> None:
        """A player entered, left, or changed how the list shows it (its presence)."""
        self._dirty_players.add(player_id)
        self._changed = True
        self.fragments.pop(player_id, None)
        # A capped list costs little to build again: whoever enters sees the lobby as it is, as
        # in the seed. So does the whole list of a lobby within the cap, or with no cap at all;
        # beyond the cap it is kept until the next push (see ``cache``).
        self.cache.pop("window", None)
        if not self.cap or len(self._members) <= self.cap:
            self.cache.pop("players", None)

    def lists_changed(self, game_id: int | None = None) -> None:
        """The open-games list may have changed: by ``game_id`` (opened, joined, left, started,
        ended), or by games nobody named (None: every game is read again at the next push)."""
        if game_id is None:
            self._rescan = True
        else:
            self._dirty_games.add(game_id)
        self._changed = True

    def games_to_read(self) -> tuple[bool, set[int]]:
        """Whether every game must be read again, and the games to read again (both cleared):
        lobby/lobby_requests.py reads them into ``open_games`` and ``moved_games``."""
        rescan, dirty = self._rescan, self._dirty_games
        self._rescan, self._dirty_games = False, set()
        return rescan, dirty

    def push_due(self, now: float, interval: float) -> bool:
        """Whether the lists are to be pushed now (changed, and ``interval`` since the last
        push); if so, they count as pushed."""
        if not self._changed or now - self._pushed < interval:
            return False
        self._changed = False
        self._pushed = now
        return True

    def take_changes(self) -> tuple[set[int], set[int]]:
        """At a push: the players and the games that changed since the last one (both start
        empty again), and the built lists are dropped."""
        players, games = self._dirty_players, self.moved_games
        self._dirty_players, self.moved_games = set(), set()
        self.cache.clear()
        return players, games
