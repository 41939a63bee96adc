"""The admin's list of finished games: every protocol's, newest first, a page at a
time, read from the store (a cluster's is shared: no node has to be asked).

Two tables hold them: ``games`` (Apologies, Fish and Tsuro: ``finished``, then id) and
``async_games`` (``updated``, then id: an ended game's row is not changed again). A page is the
newest ``limit`` of the two merged; its cursor is the position of the last game shown from
each table (a table none was shown from yet starts from its top: had it a game newer than
the last one shown, the merge would have shown it). The cursor is opaque to callers: base64 of
that pair, checked whole when it comes back.

``read_page`` blocks (store reads and the decoding of /async documents): call it on the store's
thread.
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Any, Final

import msgspec

from parlour.protocols.async_ws.game.model import decode_game
from parlour.storage import AsyncGameRow, GameRow, Store

__all__ = ["OTHER_PROTOCOLS", "PROTOCOLS", "BadCursor", "Cursor", "decode_cursor", "read_page"]

#: The protocols whose games the ``games`` table holds.
OTHER_PROTOCOLS: Final = ("apologies", "fish", "tsuro")
#: Every protocol an admin may list the games of.
PROTOCOLS: Final = ("async", *OTHER_PROTOCOLS)


#: A game id of the store (a signed 64-bit integer): a cursor holding another is no page's.
GameId = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]


class Cursor(msgspec.Struct, array_like=True):
    """Where the next page starts: the (ended, id) of the last game shown from each table,
    None for a table none was shown from yet (``Cursor(None, None)``: the first page)."""

    games: tuple[float, str] | None
    async_games: tuple[float, GameId] | None


class BadCursor(ValueError):
    """A ``before`` that no page gave."""


def encode_cursor(cursor: Cursor) -> str:
    return base64.urlsafe_b64encode(msgspec.json.encode(cursor)).decode().rstrip("=")


def decode_cursor(text: str) -> Cursor:
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        return msgspec.json.decode(raw, type=Cursor)
    except (binascii.Error, ValueError, msgspec.DecodeError) as error:
        raise BadCursor("'before' is the 'next' of a previous page") from error


def _other(row: GameRow) -> dict[str, Any]:
    started = row.started is not None
    return {
        "protocol": row.protocol,
        "game_id": row.id,
        "game": row.game,
        "state": row.state,
        "players": [seat.handle for seat in row.seats],
        "ended": row.finished,
        # A game cancelled before it started has no moves to replay.
        "replay": f"/?replay={row.id}" if started else None,
        "record": f"/api/games/{row.id}",
    }


def _async(row: AsyncGameRow) -> dict[str, Any]:
    try:
        game = decode_game(row.doc)
    except (msgspec.DecodeError, msgspec.ValidationError):
        players: list[str] = []
        replayable = False  # listed all the same: an operator should see a corrupt record
    else:
        players = [seat.name for seat in game.seats]
        # The server knows the moves of server-rules games only (replay_http.py).
        replayable = game.server_rules
    return {
        "protocol": "async",
        "game_id": str(row.id),
        "game": row.game_type,
        "state": row.status,
        "players": players,
        "ended": row.updated,
        "replay": f"/play.html?replay={row.id}" if replayable else None,
        "record": f"/api/async/replay?game_id={row.id}" if replayable else None,
    }


def read_page(
    store: Store, protocol: str, limit: int, cursor: Cursor
) -> tuple[list[dict[str, Any]], str | None]:
    """The newest ``limit`` finished games after ``cursor`` (of ``protocol``, "" for every
    one), and the cursor of the page after it (None: this is the last)."""
    others: list[GameRow] = []
    if protocol != "async":
        others = store.list_games(
            limit=limit + 1, before=cursor.games, protocol=protocol if protocol else None
        )
    ended: list[AsyncGameRow] = []
    if protocol in ("", "async"):
        ended = store.ended_async_games(limit + 1, cursor.async_games)
    # A merge that keeps each table's own order (its ties as the database ordered them, which
    # its cursor follows), taking the games table's first when two end at the same time.
    page: list[dict[str, Any]] = []
    games_at, async_at = cursor.games, cursor.async_games
    i = j = 0
    while len(page) < limit and (i < len(others) or j < len(ended)):
        other = others[i] if i < len(others) else None
        game = ended[j] if j < len(ended) else None
        if other is not None and (game is None or (other.finished or 0.0) >= game.updated):
            page.append(_other(other))
            games_at = (other.finished or 0.0, other.id)
            i += 1
        else:
            assert game is not None
            page.append(_async(game))
            async_at = (game.updated, game.id)
            j += 1
    more = i < len(others) or j < len(ended)
    return page, encode_cursor(Cursor(games_at, async_at)) if more else None
