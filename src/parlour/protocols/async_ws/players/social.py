"""The social side of /async: buddy and ignore lists (the Scalable Server text "Buddy List",
"Ignore List"), and the hooks and request table of chat.py, presence.py and statistics.py
(docs/async-decisions.md S10, S14, S15).

Handlers have the shape of every handler of /async, ``handler(hub, session, msg, now)``, and are
listed in ``HANDLERS`` by message type. What they keep between inputs is held by the hub's owners
of state/social_state.py (``hub.relations``, ``hub.chat_log``, ``hub.presence_state``,
``hub.statistics``), made with the hub. The service calls these hooks:

- ``signed_in(hub, player_id, now)`` once an AsyncAuthRequest succeeded (``hub.online`` set);
- ``signed_out(hub, player_id, now)`` when the account's last connection is gone;
- ``tick(hub, now)`` on the ticker: batched presence updates, subscribed statistics;
- ``restore(hub, chat, relations, mutes, reports, now)`` after a restart, before any connection
  (S10), with ``store.load_chat([LOBBY, *hub.games], HISTORY)`` and ``store.relations()``;
- ``reloaded(hub, records, relations, chat)`` after a failed commit.

Buddy and ignore lists are one-way, at most MAX_LIST each. Adding a player already listed or
removing one who is not is confirmed without change; unknown players and oneself are
UNKNOWN_PLAYER. An ignored player's chat and invitations never reach the ignorer (S14).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from parlour.protocols.async_ws.game.lifecycle import LIVE
from parlour.protocols.async_ws.players import chat, presence, statistics
from parlour.protocols.async_ws.players.chat import LOBBY, MUTES_KEY
from parlour.protocols.async_ws.state.hub import Hub, Session
from parlour.protocols.async_ws.state.profanity import ProfanityFilter
from parlour.protocols.async_ws.state.social_state import HISTORY
from parlour.protocols.async_ws.wire.messages import (
    AsyncBuddyAddedRequest,
    AsyncBuddyListContentRequest,
    AsyncBuddyListRequest,
    AsyncBuddyManagementRequest,
    AsyncBuddyRemovedRequest,
    AsyncIgnoreAddedRequest,
    AsyncIgnoreListContentRequest,
    AsyncIgnoreListRequest,
    AsyncIgnoreManagementRequest,
    AsyncIgnoreRemovedRequest,
    SmallPlayer,
)
from parlour.storage import ChatRow, RelationGone, RelationRow, ReportRow

__all__ = [
    "HANDLERS",
    "HISTORY",
    "LOBBY",
    "MUTES_KEY",
    "REPORTS_RESTORED",
    "reloaded",
    "restore",
    "set_profanity_words",
    "signed_in",
    "signed_out",
    "tick",
]

Handler = Callable[[Hub, Session, Any, float], None]

#: Buddies (and ignored players) one player may list.
MAX_LIST: Final = 500
#: How many of the latest reports a restart reads back for the cooldowns (far more than a
#: minute's worth).
REPORTS_RESTORED: Final = 1000
#: How often ``tick`` forgets expired mutes, old blocks and the history of finished games.
CLEANUP_INTERVAL: Final = 60.0


def set_profanity_words(hub: Hub, words: Iterable[str]) -> None:
    """Replace the shipped word list (S14: "replaceable by a setting"; see profanity.load_words)."""
    hub.chat_log.words = ProfanityFilter(words)


# -- Buddy and ignore lists -----------------------------------------------------------------------


def _listed(hub: Hub, entries: Mapping[int, float]) -> list[SmallPlayer]:
    return [
        SmallPlayer(player_id=other, name=hub.name(other), presence=presence.presence(hub, other).presence)
        for other in sorted(entries, key=lambda other: (hub.name(other).casefold(), other))
    ]


def buddy_list(hub: Hub, session: Session, msg: AsyncBuddyListRequest, now: float) -> None:
    entries = hub.relations.listed("buddy", session.player())
    hub.send(
        session.conn, AsyncBuddyListContentRequest(buddies=_listed(hub, entries), request_id=msg.request_id)
    )


def ignore_list(hub: Hub, session: Session, msg: AsyncIgnoreListRequest, now: float) -> None:
    entries = hub.relations.listed("ignore", session.player())
    hub.send(
        session.conn, AsyncIgnoreListContentRequest(ignored=_listed(hub, entries), request_id=msg.request_id)
    )


def _manage(
    hub: Hub,
    session: Session,
    msg: AsyncBuddyManagementRequest | AsyncIgnoreManagementRequest,
    kind: str,
    now: float,
) -> bool:
    """ADD or REMOVE ``msg.player_id`` on the ``kind`` list; whether the reply may be sent."""
    owner, other = session.player(), msg.player_id
    if other == owner or other not in hub.accounts:
        hub.error(session.conn, "UNKNOWN_PLAYER", f"no other player {other}", msg)
        return False
    entries = hub.relations.listed(kind, owner)
    if msg.operation == "ADD" and other not in entries:
        if len(entries) >= MAX_LIST:
            hub.error(session.conn, "TOO_LARGE", f"a list holds at most {MAX_LIST} players", msg)
            return False
        hub.relations.add(kind, owner, other, now)
        hub.store(RelationRow(owner, other, kind, now))  # S10: stored before confirmed
    elif msg.operation == "REMOVE" and other in entries:
        hub.relations.remove(kind, owner, other)
        hub.store(RelationGone(owner, other, kind))
    return True


def manage_buddies(hub: Hub, session: Session, msg: AsyncBuddyManagementRequest, now: float) -> None:
    if not _manage(hub, session, msg, "buddy", now):
        return
    if msg.operation == "ADD":
        hub.send(session.conn, AsyncBuddyAddedRequest(player_id=msg.player_id, request_id=msg.request_id))
    else:
        hub.send(session.conn, AsyncBuddyRemovedRequest(player_id=msg.player_id, request_id=msg.request_id))


def manage_ignored(hub: Hub, session: Session, msg: AsyncIgnoreManagementRequest, now: float) -> None:
    if not _manage(hub, session, msg, "ignore", now):
        return
    if msg.operation == "ADD":
        hub.send(session.conn, AsyncIgnoreAddedRequest(player_id=msg.player_id, request_id=msg.request_id))
    else:
        hub.send(session.conn, AsyncIgnoreRemovedRequest(player_id=msg.player_id, request_id=msg.request_id))


# -- Hooks --------------------------------------------------------------------------------------------


def signed_in(hub: Hub, player_id: int, now: float) -> None:
    """Hook: ``player_id`` signed in; what belonged to an older connection of it ends."""
    hub.statistics.unsubscribe(player_id)
    presence.signed_in(hub, player_id)


def signed_out(hub: Hub, player_id: int, now: float) -> None:
    """Hook: the account's last connection is gone."""
    hub.statistics.unsubscribe(player_id)
    presence.signed_out(hub, player_id)


def tick(hub: Hub, now: float) -> None:
    """Hook, on the service's ticker: presence batches, subscribed statistics, and now and then
    forgetting what no longer matters (expired mutes, old blocks, finished games' history)."""
    presence.push_presence(hub, now)
    statistics.push_statistics(hub, now)
    log = hub.chat_log
    if now - log.cleaned >= CLEANUP_INTERVAL:
        log.cleaned = now

        def closed(scope: int) -> bool:
            """A finished game's chat is closed: its lines stay stored, not in memory."""
            game = hub.games.get(scope)
            return scope != LOBBY and (game is None or game.status not in LIVE)

        log.clean(now, closed)


def restore(
    hub: Hub,
    chat: dict[int, list[ChatRow]],
    relations: Iterable[RelationRow],
    mutes: str | None = None,
    reports: Iterable[ReportRow] = (),
    now: float = 0.0,
) -> None:
    """Hook, after a restart and before any connection (S10): the chat history of the lobby and
    of every game the hub holds (``store.load_chat([LOBBY, *hub.games], HISTORY)``: the lines
    of a scope left out would be numbered from 1 again and fail to store), every relation, the
    mutes in force (the MUTES_KEY meta value) and the report cooldowns of the latest
    ``reports``, as at ``now``."""
    hub.chat_log.restore(chat, mutes, reports, now)
    hub.relations.restore(relations)


def reloaded(
    hub: Hub,
    records: Iterable[object],
    relations: dict[tuple[int, int, str], RelationRow | None],
    chat: dict[int, list[ChatRow]],
) -> None:
    """Hook, after a failed commit: the relations and chat scopes it touched as the store holds
    them (none of its lines was shown), and the report cooldowns it started lifted."""
    hub.relations.reload(relations)
    hub.chat_log.reload(chat, records)


#: What this side answers, by message type (the service's table takes them in).
HANDLERS: Final[dict[str, Handler]] = {
    "MulticastChatRequest": chat.chat,
    "GetChatHistoryRequest": chat.chat_history,
    "RegisterPresenceRequest": presence.register_presence,
    "SubscribePresenceServiceRequest": presence.subscribe_presence,
    "SwitchedToGameRequest": presence.switched_to_game,
    "AsyncBuddyListRequest": buddy_list,
    "AsyncBuddyManagementRequest": manage_buddies,
    "AsyncIgnoreListRequest": ignore_list,
    "AsyncIgnoreManagementRequest": manage_ignored,
    "AskServerStatisticsRequest": statistics.ask_statistics,
}
