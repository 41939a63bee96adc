"""How an /async request is answered when the store refuses its effects (docs/durability.md,
"When the store fails").

While a commit is under way or failing, the runtime holds every later input's effects behind it
(stored before shown). When the commit fails, the sends it held are dropped, and each input is
answered once, by the ``refused`` of its Store (core.effects.Store). A request that made records
is told INTERNAL_ERROR: they were not stored (or nobody can tell). One that made none (a read, a
watch, a request sent on to another owner) is told TRY_AGAIN: nothing changed, and its answer,
built on what the store refused, is dropped; asked again, it is answered from what the store
holds. Either echoes the request's id, so that the client knows which request it answers.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Final, NamedTuple

from parlour.core.effects import ConnId, Effect, Store
from parlour.protocols.async_ws.state.hub import Hub
from parlour.protocols.async_ws.state.readback import refusal_text
from parlour.protocols.async_ws.wire.messages import ClientMessage, ErrorCode

__all__ = ["STORE_FAILED", "Unread", "answer_if_refused", "tell_refused"]

#: TRY_AGAIN's words for a request that changed nothing, whose answer was held behind a commit
#: that failed.
STORE_FAILED: Final = (
    "the server's store failed before this could be answered; nothing changed: send it again"
)


class Unread(NamedTuple):
    """What a frame that could not be read as a request says of itself (its error echoes it)."""

    kind: str | None
    request_id: str | None
    game_id: int | None = None


def answer_if_refused(effects: list[Effect], answer: Callable[..., None], *about: object) -> None:
    """Make one request's ``effects`` say how it is answered if the store refuses them:
    ``answer(*about, code, confirmed)``, with INTERNAL_ERROR when they store records (in their
    Store's ``refused``: the records come first, Hub.take) and TRY_AGAIN when they store none
    (in a Store of no records, first, which makes the runtime hold nothing by itself). One
    partial: this runs for every request."""
    if not effects:
        return  # nothing is held for it, so nothing can be taken back
    first = effects[0]
    if type(first) is Store:
        first.refused = partial(answer, *about, "INTERNAL_ERROR")
    else:
        effects.insert(0, Store([], partial(answer, *about, "TRY_AGAIN")))


def tell_refused(
    hub: Hub, conn: ConnId, request: ClientMessage | Unread, code: ErrorCode, confirmed: bool
) -> None:
    """The error ``answer_if_refused`` answers with (``confirmed``: the store said nothing was
    stored; else it could not be asked), echoing the request's type, id and game."""
    words = STORE_FAILED if code == "TRY_AGAIN" else refusal_text(confirmed)
    if type(request) is Unread:
        hub.error(conn, code, words, None, request.game_id, request.kind, request.request_id)
    else:
        hub.error(conn, code, words, request)
