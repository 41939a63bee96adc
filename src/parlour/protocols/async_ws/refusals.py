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
from typing import Final

from parlour.core.effects import Effect, Store
from parlour.protocols.async_ws.messages import ErrorCode
from parlour.protocols.async_ws.readback import refusal_text

__all__ = ["STORE_FAILED", "Answer", "answer_if_refused", "refusal_words"]

#: TRY_AGAIN's words for a request that changed nothing, whose answer was held behind a commit
#: that failed.
STORE_FAILED: Final = (
    "the server's store failed before this could be answered; nothing changed: send it again"
)

#: What answers one request refused: called with the error code and whether the store confirmed
#: that nothing of it was stored.
Answer = Callable[[ErrorCode, bool], None]


def answer_if_refused(effects: list[Effect], answer: Answer) -> None:
    """Make one request's ``effects`` say how it is answered if the store refuses them: its
    Store's ``refused`` (the records come first: Hub.take), or, when it stores nothing, a Store
    of no records carrying only that (which makes the runtime hold nothing by itself)."""
    if not effects:
        return  # nothing is held for it, so nothing can be taken back
    first = effects[0]
    if type(first) is Store:
        first.refused = partial(answer, "INTERNAL_ERROR")
    else:
        effects.insert(0, Store([], partial(answer, "TRY_AGAIN")))


def refusal_words(code: ErrorCode, confirmed: bool) -> str:
    """The message of the error ``answer_if_refused`` answers with (``code``)."""
    return STORE_FAILED if code == "TRY_AGAIN" else refusal_text(confirmed)
