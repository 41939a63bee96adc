"""Quick play's queues: who waits for which game, and which of them make a game now (sans I/O).

One ``Matchmaker`` per hub (the lobby's owner: one in a cluster, where queue requests reach it as
every lobby request does). It knows account ids, ratings and times, never a connection or a
message: the handlers of lobby/quickplay.py ask it and turn its answers into messages and games.

A queue is a game type, a seat count and ranked or not (``QueueKey``). Each player waiting in it
holds a ``Ticket`` with their rating for that game type (OpenSkill's mu, read when they joined)
and a window around it that widens as they wait: ``Widening.base`` at first, ``per_second``
more every second, at most ``widest``. A game forms around the ticket that has waited longest:
it takes the nearest-rated others whose rating lies within its window (its window is the widest
of the queue, since every ticket widens alike); once it has waited its ``robots_after``, the
seats nobody in its window can take go to robots, with those of its window whose own wait for
robots is over. A player waits in several queues at once; the first game found ends the others.

Matching runs for one queue when someone joins it (a partner already waiting is found at once)
and for every queue on the ticker (windows widen, robots become due): both are ``match(now)``.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Final, NamedTuple

__all__ = ["MAX_QUEUES", "Match", "Matchmaker", "QueueKey", "Ticket", "Widening"]

#: The queues one player may wait in at once: each costs a scan of its queue on every tick.
MAX_QUEUES: Final = 8


class QueueKey(NamedTuple):
    """A queue: what is played, by how many, rated or not."""

    game_type: str
    seats: int
    ranked: bool


@dataclass(frozen=True, slots=True)
class Widening:
    """How a ticket's rating window grows with its wait (in mu; OpenSkill's default sigma is
    8.33, so the first window holds players a third of a new player's uncertainty apart)."""

    base: float = 3.0
    per_second: float = 0.5
    widest: float = 50.0

    def window(self, waited: float) -> float:
        return min(self.widest, self.base + self.per_second * max(0.0, waited))


@dataclass(slots=True, eq=False)
class Ticket:
    """One player waiting in one queue."""

    player_id: int
    key: QueueKey
    #: The player's rating for the game type when they joined (OpenSkill mu).
    rating: float
    #: When they joined this queue.
    since: float
    #: After how long a wait robots may take the seats nobody took; None: never.
    robots_after: float | None
    #: Join order across all queues: breaks ties of ``since`` (one input, one time).
    order: int = 0

    def robots_due(self, now: float) -> bool:
        return self.robots_after is not None and now - self.since >= self.robots_after


class Match(NamedTuple):
    """A game to make: ``tickets`` (the one that waited longest first) and ``robots`` more seats;
    ``ended``: the players' tickets in other queues, which the match ended."""

    key: QueueKey
    tickets: tuple[Ticket, ...]
    robots: int
    ended: tuple[Ticket, ...] = ()


@dataclass(slots=True)
class _Queue:
    """One queue's tickets sorted by (rating, order), the ratings beside them for bisect."""

    tickets: list[Ticket] = field(default_factory=list)
    ratings: list[tuple[float, int]] = field(default_factory=list)

    def add(self, ticket: Ticket) -> None:
        position = bisect_left(self.ratings, (ticket.rating, ticket.order))
        self.ratings.insert(position, (ticket.rating, ticket.order))
        self.tickets.insert(position, ticket)

    def remove(self, ticket: Ticket) -> None:
        position = bisect_left(self.ratings, (ticket.rating, ticket.order))
        if position < len(self.tickets) and self.tickets[position] is ticket:
            del self.tickets[position]
            del self.ratings[position]


class Matchmaker:
    """Every queue and every waiting player's tickets; changed by ``join``, ``leave``,
    ``match`` (which takes the matched tickets out) and ``put_back``."""

    __slots__ = ("_by_player", "_order", "_queues", "_stale", "_told", "widening")

    def __init__(self, widening: Widening | None = None) -> None:
        self.widening = widening or Widening()
        self._queues: dict[QueueKey, _Queue] = {}
        self._by_player: dict[int, dict[QueueKey, Ticket]] = {}
        self._order = 0
        #: Queues changed since they were last matched (a join): ``match`` looks at them first.
        self._stale: set[QueueKey] = set()
        #: When each waiting player was last shown their queues (``due``).
        self._told: dict[int, float] = {}

    # -- Reading ----------------------------------------------------------------------------------

    def __len__(self) -> int:
        """How many players wait (in one queue or more)."""
        return len(self._by_player)

    def players(self) -> Iterator[int]:
        return iter(self._by_player)

    def tickets(self, player_id: int) -> list[Ticket]:
        """The player's tickets in the order they joined."""
        return sorted(self._by_player.get(player_id, {}).values(), key=lambda ticket: ticket.order)

    def window(self, ticket: Ticket, now: float) -> tuple[float, float]:
        """The ratings a partner of ``ticket`` may have now."""
        width = self.widening.window(now - ticket.since)
        return ticket.rating - width, ticket.rating + width

    def waiting(self, key: QueueKey) -> int:
        queue = self._queues.get(key)
        return 0 if queue is None else len(queue.tickets)

    def due(self, now: float, every: float) -> list[int]:
        """The waiting players last shown their queues ``every`` seconds ago or more (now
        counted as shown)."""
        told = self._told
        due = [player for player in self._by_player if now - told.get(player, -1e300) >= every]
        for player in due:
            told[player] = now
        return due

    def told(self, player_id: int, now: float) -> None:
        """The player was shown their queues now (a reply)."""
        if player_id in self._by_player:
            self._told[player_id] = now

    def refusal(self, player_id: int, key: QueueKey) -> tuple[str, str] | None:
        """Why ``player_id`` may not join ``key`` (an error code and words), or None."""
        mine = self._by_player.get(player_id, {})
        if key in mine:
            return "ALREADY_QUEUED", "you are waiting in this queue already"
        if len(mine) >= MAX_QUEUES:
            return "TOO_MANY_OFFERS", f"you are waiting in {MAX_QUEUES} queues already"
        return None

    # -- Changing ---------------------------------------------------------------------------------

    def join(
        self, player_id: int, key: QueueKey, rating: float, robots_after: float | None, now: float
    ) -> Ticket:
        """A new ticket (``refusal`` said yes)."""
        self._order += 1
        ticket = Ticket(player_id, key, rating, now, robots_after, self._order)
        self._enter(ticket)
        return ticket

    def put_back(self, tickets: Iterable[Ticket]) -> None:
        """Tickets of a match that could not be made wait again as they were (their wait kept)."""
        for ticket in tickets:
            if ticket.key not in self._by_player.get(ticket.player_id, {}):
                self._enter(ticket)

    def _enter(self, ticket: Ticket) -> None:
        self._by_player.setdefault(ticket.player_id, {})[ticket.key] = ticket
        queue = self._queues.get(ticket.key)
        if queue is None:
            queue = self._queues[ticket.key] = _Queue()
        queue.add(ticket)
        self._stale.add(ticket.key)

    def leave(
        self,
        player_id: int,
        game_type: str | None = None,
        seats: int | None = None,
        ranked: bool | None = None,
    ) -> list[Ticket]:
        """The player leaves the queues that match the fields given (none: every queue); the
        tickets that left."""
        mine = self._by_player.get(player_id)
        if not mine:
            return []
        gone = [
            ticket
            for key, ticket in mine.items()
            if (game_type is None or key.game_type == game_type)
            and (seats is None or key.seats == seats)
            and (ranked is None or key.ranked == ranked)
        ]
        for ticket in gone:
            self._drop(ticket)
        return sorted(gone, key=lambda ticket: ticket.order)

    def _drop(self, ticket: Ticket) -> None:
        mine = self._by_player.get(ticket.player_id)
        if mine is not None and mine.get(ticket.key) is ticket:
            del mine[ticket.key]
            if not mine:
                del self._by_player[ticket.player_id]
                self._told.pop(ticket.player_id, None)
        queue = self._queues.get(ticket.key)
        if queue is not None:
            queue.remove(ticket)
            if not queue.tickets:
                del self._queues[ticket.key]

    def clear(self) -> list[int]:
        """Every queue ends (the server stops); the players who were waiting."""
        players = list(self._by_player)
        self._queues.clear()
        self._by_player.clear()
        self._stale.clear()
        self._told.clear()
        return players

    # -- Matching ---------------------------------------------------------------------------------

    def match(self, now: float, everywhere: bool = True) -> list[Match]:
        """The games to make now, their tickets taken out of every queue (their players' other
        tickets too). ``everywhere``: every queue (the ticker); else only the queues joined
        since the last call (a join: a partner who waits already is found at once)."""
        keys = list(self._queues) if everywhere else [key for key in self._stale if key in self._queues]
        self._stale.clear()
        matches: list[Match] = []
        for key in keys:
            if key in self._queues:
                self._match_queue(key, now, matches)
        return matches

    def _match_queue(self, key: QueueKey, now: float, matches: list[Match]) -> None:
        queue = self._queues[key]
        wanted = key.seats - 1
        # The anchors, longest waiting first; a list of their own, since matches change the queue.
        for anchor in sorted(queue.tickets, key=lambda ticket: (ticket.since, ticket.order)):
            if self._by_player.get(anchor.player_id, {}).get(key) is not anchor:
                continue  # matched already in this pass
            low, high = self.window(anchor, now)
            robots = anchor.robots_due(now)
            partners = self._nearest(queue, anchor, low, high, wanted, robots, now)
            if len(partners) < wanted and not robots:
                continue
            group = (anchor, *partners)
            ended: list[Ticket] = []
            for ticket in group:
                for other in list(self._by_player.get(ticket.player_id, {}).values()):
                    self._drop(other)  # one game per player: every queue of theirs ends
                    if other is not ticket:
                        ended.append(other)
            matches.append(Match(key, group, wanted - len(partners), tuple(ended)))
            if key not in self._queues:
                return
            queue = self._queues[key]

    @staticmethod
    def _nearest(
        queue: _Queue, anchor: Ticket, low: float, high: float, wanted: int, robots: bool, now: float
    ) -> list[Ticket]:
        """Up to ``wanted`` others of ``queue`` rated within [low, high], nearest to the anchor
        first (with ``robots``: only those whose own wait for robots is over); one account
        never takes two seats."""
        tickets = queue.tickets
        at = bisect_left(queue.ratings, (anchor.rating, anchor.order))
        below, above = at - 1, at + 1
        found: list[Ticket] = []
        while len(found) < wanted:
            down = tickets[below] if below >= 0 and tickets[below].rating >= low else None
            up = tickets[above] if above < len(tickets) and tickets[above].rating <= high else None
            if down is None and up is None:
                break
            if up is None or (down is not None and anchor.rating - down.rating <= up.rating - anchor.rating):
                candidate, below = down, below - 1
            else:
                candidate, above = up, above + 1
            assert candidate is not None
            if robots and not candidate.robots_due(now):
                continue
            found.append(candidate)
        return found
