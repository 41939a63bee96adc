"""A player's profile over HTTP, what /profile.html draws.

``GET /api/profile?name=NAME`` (names compare case-insensitively) -> 200 ``{"player_id", "name",
"presence", "ratings": [{"game_type", "rating", "provisional", "games"}], "history": {game_type:
[{"game_id", "at", "games", "rating", "provisional", "change"}]}, "recent": [{"game_id", "game_type", "at", "rank",
"score", "rating", "change", "players": [{"seat", "name", "robot", "rank", "score"}]}],
"opponents": [{"name", "robot", "wins", "losses", "draws"}]}``; 404 ``{"error"}`` when nobody has
that name, 400 without a name.

- ``ratings``: the account's rating per game type now, on the scale people read
  (parlour.core.rating_scale; provisional until 5 games).
- ``history``: its rating after each of its last HISTORY_POINTS rated games, oldest first, per
  game type: the points of the profile's chart, each with the count of games rated so far
  (``games``) and what that game changed (``change``; null for the oldest point when the
  history does not reach back to the first game).
- ``recent``: its last RECENT_GAMES ended games, newest first, with every seat; ``rank`` and
  ``score`` are null for an aborted game, ``rating`` and ``change`` (what the game changed of
  the shown rating) null for a game that did not rate it. Their replays are
  ``GET /api/async/replay?game_id=`` (replay_http.py), for whoever may read them.
- ``opponents``: wins, losses and draws against each account or robot it finished a game with
  (by rank), most games first.

Anyone may read a profile: what it shows is what the leaderboard and the public game lists
show. The rows are read from the store off the event loop (``ProfileReader``, given by the
composition root); without a store there is no history, and the lists are empty.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Any, Final, NamedTuple

import msgspec

from parlour.api import ApiResponse, HttpRequest
from parlour.core.rating_scale import MU0, shown_rating
from parlour.protocols.async_ws.http.account_routes import named_account
from parlour.protocols.async_ws.service import AsyncService
from parlour.protocols.async_ws.state.known_accounts import Account
from parlour.storage import GameResultRow, Opponent, Store

__all__ = [
    "HISTORY_POINTS",
    "OPPONENTS",
    "PROFILE_PATH",
    "RECENT_GAMES",
    "ProfileReader",
    "ProfileRoutes",
    "ProfileRows",
    "profile_of",
    "stored_profiles",
]

PROFILE_PATH: Final = "/api/profile"
#: How much of a player's past a profile shows.
HISTORY_POINTS: Final = 500
RECENT_GAMES: Final = 20
OPPONENTS: Final = 50


class ProfileRows(NamedTuple):
    """What the store holds of one account for its profile."""

    history: list[GameResultRow]
    recent: list[GameResultRow]
    opponents: list[Opponent]


#: Reads an account's ProfileRows from the store (off the event loop).
ProfileReader = Callable[[int], Awaitable[ProfileRows]]


def stored_profiles(
    in_store_thread: Callable[[Callable[[], ProfileRows]], Awaitable[ProfileRows]], store: Store
) -> ProfileReader:
    """A ProfileReader over ``store``, read through ``in_store_thread``: store reads block."""

    def read(account_id: int) -> ProfileRows:
        return ProfileRows(
            store.rating_history(account_id, HISTORY_POINTS),
            store.recent_results(account_id, RECENT_GAMES),
            store.opponents(account_id, OPPONENTS),
        )

    async def load(account_id: int) -> ProfileRows:
        return await in_store_thread(lambda: read(account_id))

    return load


def _history(rows: list[GameResultRow]) -> tuple[dict[str, list[dict[str, Any]]], dict[int, int]]:
    """The chart's points per game type, and what each game changed of the shown rating (by game
    id; unknown for the oldest point of a window that does not start at the first game)."""
    points: dict[str, list[dict[str, Any]]] = {}
    changes: dict[int, int] = {}
    before: dict[str, float] = {}
    for row in rows:
        if row.mu is None or row.games is None:
            continue
        seen = shown_rating(row.mu, row.games)
        previous = before.get(row.game_type, MU0 if row.games == 1 else None)
        change = None if previous is None else seen.rating - shown_rating(previous, 0).rating
        if change is not None:
            changes[row.game_id] = change
        before[row.game_type] = row.mu
        points.setdefault(row.game_type, []).append(
            {
                "game_id": row.game_id,
                "at": row.at,
                "games": row.games,
                "rating": seen.rating,
                "provisional": seen.provisional,
                "change": change,
            }
        )
    return points, changes


def profile_of(account: Account, presence: str, rows: ProfileRows) -> dict[str, Any]:
    """The profile's JSON body (see the module's text)."""
    history, changes = _history(rows.history)
    games: dict[int, list[GameResultRow]] = {}
    for row in rows.recent:
        games.setdefault(row.game_id, []).append(row)
    recent = []
    for game_id, seats in games.items():
        mine = next((seat for seat in seats if seat.account_id == account.id), seats[0])
        rated = None if mine.mu is None or mine.games is None else shown_rating(mine.mu, mine.games)
        recent.append(
            {
                "game_id": game_id,
                "game_type": mine.game_type,
                "at": mine.at,
                "rank": mine.rank,
                "score": mine.score,
                "rating": None if rated is None else rated.rating,
                "provisional": None if rated is None else rated.provisional,
                "change": changes.get(game_id),
                "players": [
                    {
                        "seat": seat.seat,
                        "name": seat.name,
                        "robot": seat.account_id is None,
                        "rank": seat.rank,
                        "score": seat.score,
                    }
                    for seat in sorted(seats, key=lambda seat: seat.seat)
                ],
            }
        )
    ratings = []
    for game_type, (mu, _, played) in sorted(account.ratings.items()):
        seen = shown_rating(mu, played)
        ratings.append(
            {"game_type": game_type, "rating": seen.rating, "provisional": seen.provisional, "games": played}
        )
    return {
        "player_id": account.id,
        "name": account.name,
        "presence": presence,
        "ratings": ratings,
        "history": history,
        "recent": recent,
        "opponents": [
            {
                "name": opponent.name,
                "robot": opponent.account_id is None,
                "wins": opponent.wins,
                "losses": opponent.losses,
                "draws": opponent.draws,
            }
            for opponent in rows.opponents
        ],
    }


def _error(status: HTTPStatus, message: str, headers: tuple[tuple[str, str], ...] = ()) -> ApiResponse:
    return ApiResponse(status, msgspec.json.encode({"error": message}), headers)


class ProfileRoutes:
    """The handler, bound to the /async service that holds the accounts and to the store's rows
    (``read``; None without a store)."""

    def __init__(self, service: AsyncService, read: ProfileReader | None = None) -> None:
        self.service = service
        self.read = read

    def routes(self) -> dict[str, Callable[[HttpRequest], Awaitable[ApiResponse]]]:
        return {PROFILE_PATH: self.profile}

    async def profile(self, request: HttpRequest) -> ApiResponse:
        account = named_account(request, self.service)
        if isinstance(account, ApiResponse):
            return account
        rows = ProfileRows([], [], []) if self.read is None else await self.read(account.id)
        body = profile_of(account, self.service.hub.presence(account.id), rows)
        return ApiResponse(HTTPStatus.OK, msgspec.json.encode(body))
