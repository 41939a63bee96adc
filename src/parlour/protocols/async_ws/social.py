"""Chat, presence, buddy and ignore lists, server statistics (scalable-server-protocol.rst
"Chat", "Chat codes", "Chat commands", "Presence", "Switching to a Game", "Buddy List", "Ignore
List", "Server Statistics"; scalable-server-notes.md S8, S10, S14, S15).

The handlers have lobby.py's and play.py's shape, ``handler(hub, session, msg, now)``, and are
listed in ``HANDLERS`` by message type. What they keep between inputs lives in one ``Social`` per
hub (``social_state``), beside the hub rather than on it. The service calls four hooks:

- ``signed_in(hub, player_id, now)`` once an AsyncAuthRequest succeeded (``hub.online`` set);
- ``signed_out(hub, player_id, now)`` when the account's last connection is gone;
- ``tick(hub, now)`` on the ticker: batched presence updates, subscribed statistics;
- ``restore(hub, chat, relations)`` after a restart, before any connection (S10), with
  ``store.load_chat([LOBBY, *hub.games], HISTORY)`` and ``store.relations()``.

Decisions where the text is silent (catalogue §6 items 19, 34-44, 48-50), beside S14/S15:

- Chat scopes: the lobby (``game_id`` 0) is for players in the lobby; a game's chat is for its
  seated players (any seat state) and its observers, while the game is live. ``sender`` and
  ``recipient_ids`` are global ids in the lobby and local ids in a game; an observer has no local
  id, so its lines carry its global id, and it cannot be addressed privately.
- Recipients that are not in the scope are refused (UNKNOWN_PLAYER) rather than dropped silently.
- A blocked line (profanity) gets ClientChatBlockedRequest to the sender and to whoever the line
  was meant for (the recipients of a private line, else the scope), as the text's diagram; the
  third within BLOCK_WINDOW mutes the sender for MUTE_SECONDS (``muted`` true on that notice);
  a muted sender's lines are refused to it alone. Commands are never relayed and work while muted.
- The server's coded lines (help, report, statistics) come from ``sender`` 0 to the sender only.
- Presence monitoring (RegisterPresenceRequest, which replaces the set), subscriptions (presence,
  statistics) and the game a player switched to belong to the connection: signing out ends them.
  Subscribing sends the current presence of every monitored player on the next batch.
- In-game presence (PlayerPresenceUpdateRequest) is relative to the game: IN_GAME when the player
  switched to that game, else ONLINE or OFFLINE (another game's id is not shown). Switching into a
  game tells its other players at once, as the text says; other changes (signing in or out,
  leaving the game) reach those of its players who switched to it.
- Buddy and ignore lists are one-way, at most MAX_LIST each. Adding a player already listed or
  removing one who is not is confirmed without change; unknown players and oneself are
  UNKNOWN_PLAYER.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final
from weakref import WeakKeyDictionary

import msgspec

from parlour.core.effects import Broadcast, Send
from parlour.protocols.async_ws.hub import Hub, Session
from parlour.protocols.async_ws.messages import (
    AskServerStatisticsRequest,
    AsyncBuddyAddedRequest,
    AsyncBuddyListContentRequest,
    AsyncBuddyListRequest,
    AsyncBuddyManagementRequest,
    AsyncBuddyPresencePartialUpdateRequest,
    AsyncBuddyRemovedRequest,
    AsyncIgnoreAddedRequest,
    AsyncIgnoreListContentRequest,
    AsyncIgnoreListRequest,
    AsyncIgnoreManagementRequest,
    AsyncIgnoreRemovedRequest,
    ChatEntry,
    ClientChatBlockedRequest,
    ClientChatHistoryRequest,
    ClientChatRequest,
    GetChatHistoryRequest,
    MulticastChatRequest,
    PlayerPresenceUpdateRequest,
    PresenceUpdate,
    RegisterPresenceRequest,
    ServerMessage,
    ServerStatisticsRequest,
    SmallPlayer,
    SubscribePresenceServiceRequest,
    SwitchedToGameRequest,
    encode,
)
from parlour.protocols.async_ws.model import LIVE, AsyncGame
from parlour.protocols.async_ws.profanity import ProfanityFilter, default_filter
from parlour.storage import ChatRow, MetaRow, RelationGone, RelationRow, ReportRow

__all__ = [
    "HANDLERS",
    "HISTORY",
    "LOBBY",
    "MAX_CHAT_CHARS",
    "Social",
    "is_buddy",
    "is_ignored",
    "presence",
    "restore",
    "set_profanity_words",
    "signed_in",
    "signed_out",
    "social_state",
    "tick",
]

Handler = Callable[[Hub, Session, Any, float], None]

#: The lobby's chat scope (a game's is its id).
LOBBY: Final = 0
#: S14: the chat history of a scope is its last 50 public lines.
HISTORY: Final = 50
#: S8's chat limit (the ``max_chat_chars`` setting). The hub's AsyncLimits has no field for it
#: yet: ``hub.limits.max_chat_chars`` is used once it has one, this default until then.
MAX_CHAT_CHARS: Final = 500
#: S14: three blocked lines within ten minutes mute the sender for five.
BLOCKS_TO_MUTE: Final = 3
BLOCK_WINDOW: Final = 600.0
MUTE_SECONDS: Final = 300.0
#: S14: one report a minute per reporter.
REPORT_COOLDOWN: Final = 60.0
#: The parlour_meta key of the mutes in force ({player id: end}, JSON; written as one starts,
#: the expired left out), and how many of the latest reports a restart reads back for the
#: cooldowns (far more than a minute's worth).
MUTES_KEY: Final = "async.chat.mutes"
REPORTS_RESTORED: Final = 1000
#: S15: presence updates are batched, at most one a second per subscriber.
PRESENCE_INTERVAL: Final = 1.0
#: Buddies (and ignored players) one player may list.
MAX_LIST: Final = 500
#: How often ``tick`` forgets expired mutes, old blocks and the history of finished games.
CLEANUP_INTERVAL: Final = 60.0

#: The text's chat codes ("Chat codes"): 1-255 are the server's, 0 is no code.
CODE_WELCOME_GAME: Final = 1
CODE_REPORT_THANKS: Final = 4
CODE_REPORT_COOLDOWN: Final = 5
CODE_HELP: Final = 6
CODE_LOBBY_STATISTICS: Final = 7
CODE_GAME_STATISTICS: Final = 8
CODE_WELCOME_LOBBY: Final = 9
SERVER_CODES: Final = range(1, 256)
#: ``sender`` of the server's own lines.
SERVER: Final = 0

HELP_TEXT: Final = (
    "Commands: /help (this list), /report NAME [reason] (report a player to the moderators), "
    "/statistics (players and games here)"
)

RELATIONS: Final = ("buddy", "ignore")


@dataclass(slots=True)
class Social:
    """Everything this module keeps about one hub."""

    # -- Buddy and ignore lists: owner -> other -> when added ----------------------------------
    buddies: dict[int, dict[int, float]] = field(default_factory=dict)
    ignored: dict[int, dict[int, float]] = field(default_factory=dict)
    #: The other way round: who ignores each player (a lobby line skips them without reading
    #: every lobby member's list).
    ignorers: dict[int, set[int]] = field(default_factory=dict)
    # -- Chat ----------------------------------------------------------------------------------
    #: The last HISTORY public lines of each scope, and the next line's number.
    history: dict[int, deque[ChatRow]] = field(default_factory=dict)
    next_seq: dict[int, int] = field(default_factory=dict)
    #: When each player's lines were last blocked (within BLOCK_WINDOW), and mutes' ends.
    blocks: dict[int, deque[float]] = field(default_factory=dict)
    muted_until: dict[int, float] = field(default_factory=dict)
    #: Each reporter's last report.
    reported: dict[int, float] = field(default_factory=dict)
    words: ProfanityFilter = field(default_factory=default_filter)
    cleaned: float = -math.inf
    # -- Presence ------------------------------------------------------------------------------
    #: The game each player's UI is in (SwitchedToGameRequest).
    switched: dict[int, int] = field(default_factory=dict)
    #: Who monitors whom (RegisterPresenceRequest), both ways.
    monitoring: dict[int, set[int]] = field(default_factory=dict)
    watchers: dict[int, set[int]] = field(default_factory=dict)
    #: Subscribers: the monitored players whose presence may have changed since their last
    #: batch, what each was last told about each player, and when.
    subscribed: set[int] = field(default_factory=set)
    pending: dict[int, set[int]] = field(default_factory=dict)
    told: dict[int, dict[int, PresenceUpdate]] = field(default_factory=dict)
    presence_pushed: dict[int, float] = field(default_factory=dict)
    # -- Statistics: subscribers, what each was last sent and when -----------------------------
    statistics: dict[int, tuple[tuple[int, int, int], float]] = field(default_factory=dict)


_states: WeakKeyDictionary[Hub, Social] = WeakKeyDictionary()


def social_state(hub: Hub) -> Social:
    """The hub's Social, made on first use."""
    found = _states.get(hub)
    if found is None:
        found = _states[hub] = Social()
    return found


def set_profanity_words(hub: Hub, words: Iterable[str]) -> None:
    """Replace the shipped word list (S14: "replaceable by a setting"; see profanity.load_words)."""
    social_state(hub).words = ProfanityFilter(words)


def _player_id(session: Session) -> int:
    assert session.player_id is not None  # handlers run only for authenticated sessions
    return session.player_id


def _fan_out(hub: Hub, player_ids: Iterable[int], message: ServerMessage) -> None:
    """One message, encoded once, to every connected player of ``player_ids`` (one effect)."""
    online = hub.online.get
    conns = [conn for conn in map(online, player_ids) if conn is not None]
    if conns:
        hub.send_many(conns, encode(message))


# -- Buddy and ignore lists -----------------------------------------------------------------------


def is_buddy(hub: Hub, owner: int, other: int) -> bool:
    """Whether ``owner`` lists ``other`` as a buddy (observers_buddies_only, S17)."""
    return other in social_state(hub).buddies.get(owner, ())


def is_ignored(hub: Hub, ignorer: int, other: int) -> bool:
    """Whether ``ignorer`` ignores ``other``: its chat and invitations never reach it (S14)."""
    return other in social_state(hub).ignored.get(ignorer, ())


def _table(social: Social, kind: str) -> dict[int, dict[int, float]]:
    return social.buddies if kind == "buddy" else social.ignored


def _relate(social: Social, kind: str, owner: int, other: int, added: float) -> None:
    _table(social, kind).setdefault(owner, {})[other] = added
    if kind == "ignore":
        social.ignorers.setdefault(other, set()).add(owner)


def _unrelate(social: Social, kind: str, owner: int, other: int) -> None:
    table = _table(social, kind)
    entries = table.get(owner, {})
    entries.pop(other, None)
    if not entries:
        table.pop(owner, None)
    if kind == "ignore":
        ignorers = social.ignorers.get(other, set())
        ignorers.discard(owner)
        if not ignorers:
            social.ignorers.pop(other, None)


def _listed(hub: Hub, entries: dict[int, float]) -> list[SmallPlayer]:
    return [
        SmallPlayer(player_id=other, name=hub.name(other), presence=presence(hub, other).presence)
        for other in sorted(entries, key=lambda other: (hub.name(other).casefold(), other))
    ]


def buddy_list(hub: Hub, session: Session, msg: AsyncBuddyListRequest, now: float) -> None:
    entries = social_state(hub).buddies.get(_player_id(session), {})
    hub.send(
        session.conn, AsyncBuddyListContentRequest(buddies=_listed(hub, entries), request_id=msg.request_id)
    )


def ignore_list(hub: Hub, session: Session, msg: AsyncIgnoreListRequest, now: float) -> None:
    entries = social_state(hub).ignored.get(_player_id(session), {})
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
    owner, other = _player_id(session), msg.player_id
    if other == owner or other not in hub.accounts:
        hub.error(session.conn, "UNKNOWN_PLAYER", f"no other player {other}", msg)
        return False
    social = social_state(hub)
    entries = _table(social, kind).get(owner, {})
    if msg.operation == "ADD" and other not in entries:
        if len(entries) >= MAX_LIST:
            hub.error(session.conn, "TOO_LARGE", f"a list holds at most {MAX_LIST} players", msg)
            return False
        _relate(social, kind, owner, other, now)
        hub.store(RelationRow(owner, other, kind, now))  # S10: stored before confirmed
    elif msg.operation == "REMOVE" and other in entries:
        _unrelate(social, kind, owner, other)
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


# -- Presence (S15) ---------------------------------------------------------------------------------


def presence(hub: Hub, player_id: int) -> PresenceUpdate:
    """A player's presence: OFFLINE, ONLINE, or IN_GAME with the game its UI switched to."""
    if player_id not in hub.online:
        return PresenceUpdate(player_id=player_id, presence="OFFLINE")
    game_id = social_state(hub).switched.get(player_id)
    if game_id is not None:
        return PresenceUpdate(player_id=player_id, presence="IN_GAME", game_id=game_id)
    return PresenceUpdate(player_id=player_id, presence="ONLINE")


def _presence_in(hub: Hub, player_id: int, game_id: int, online: bool) -> PresenceUpdate:
    """A player's presence as a game's other players see it: another game's id is not theirs."""
    if not online:
        return PresenceUpdate(player_id=player_id, presence="OFFLINE")
    if social_state(hub).switched.get(player_id) == game_id:
        return PresenceUpdate(player_id=player_id, presence="IN_GAME", game_id=game_id)
    return PresenceUpdate(player_id=player_id, presence="ONLINE")


def _changed(hub: Hub, player_id: int) -> None:
    """A player's presence may have changed: its subscribed watchers hear of it on their next batch."""
    social = social_state(hub)
    for watcher in social.watchers.get(player_id, ()):
        if watcher in social.subscribed:
            social.pending.setdefault(watcher, set()).add(player_id)


def _tell_switched(hub: Hub, game: AsyncGame, player_id: int, online: bool) -> None:
    """PlayerPresenceUpdateRequest about ``player_id`` to the other players of ``game`` whose UI
    is in it ("while in a game, the opponents presence is automatically monitored")."""
    switched = social_state(hub).switched
    others = [
        seat.player_id
        for seat in game.seats
        if seat.player_id is not None
        and seat.player_id != player_id
        and switched.get(seat.player_id) == game.id
    ]
    if others:
        update = _presence_in(hub, player_id, game.id, online)
        _fan_out(hub, others, PlayerPresenceUpdateRequest(game_id=game.id, updates=[update]))


def _forget_connection(social: Social, player_id: int) -> int | None:
    """End what belongs to a player's connection; the game it had switched to."""
    for monitored in social.monitoring.pop(player_id, ()):
        watchers = social.watchers.get(monitored)
        if watchers is not None:
            watchers.discard(player_id)
            if not watchers:
                del social.watchers[monitored]
    social.subscribed.discard(player_id)
    social.pending.pop(player_id, None)
    social.told.pop(player_id, None)
    social.presence_pushed.pop(player_id, None)
    social.statistics.pop(player_id, None)
    return social.switched.pop(player_id, None)


def signed_in(hub: Hub, player_id: int, now: float) -> None:
    """Hook: ``player_id`` signed in (its connection is ``hub.online[player_id]``). A connection
    replacing another starts afresh: monitoring, subscriptions and the switched game were the old
    one's."""
    _forget_connection(social_state(hub), player_id)
    _changed(hub, player_id)
    for game in hub.games.live_games(player_id):
        _tell_switched(hub, game, player_id, online=True)


def signed_out(hub: Hub, player_id: int, now: float) -> None:
    """Hook: the account's last connection is gone (OFFLINE from now, whatever ``hub.online``
    still says)."""
    _forget_connection(social_state(hub), player_id)
    _changed(hub, player_id)
    for game in hub.games.live_games(player_id):
        _tell_switched(hub, game, player_id, online=False)


def switched_to_game(hub: Hub, session: Session, msg: SwitchedToGameRequest, now: float) -> None:
    """The UI entered a game of this player (IN_GAME), or left games (``game_id`` absent: ONLINE).
    No reply (the text); switching into a game tells its other players at once."""
    player_id = _player_id(session)
    game = hub.games.get(msg.game_id) if msg.game_id is not None else None
    if msg.game_id is not None and (game is None or game.seat_of(player_id) is None):
        return hub.error(session.conn, "UNKNOWN_GAME", "you are not in a game with this id", msg)
    social = social_state(hub)
    previous = social.switched.get(player_id)
    if previous == msg.game_id:
        return
    if msg.game_id is None:
        del social.switched[player_id]
    else:
        social.switched[player_id] = msg.game_id
    _changed(hub, player_id)
    left = hub.games.get(previous) if previous is not None else None
    if left is not None:
        _tell_switched(hub, left, player_id, online=True)
    if game is not None:
        update = PresenceUpdate(player_id=player_id, presence="IN_GAME", game_id=game.id)
        others = [
            seat.player_id
            for seat in game.seats
            if seat.player_id is not None and seat.player_id != player_id
        ]
        _fan_out(hub, others, PlayerPresenceUpdateRequest(game_id=game.id, updates=[update]))


def register_presence(hub: Hub, session: Session, msg: RegisterPresenceRequest, now: float) -> None:
    """The players this connection monitors (replaces the set; no reply)."""
    player_id = _player_id(session)
    for other in msg.player_ids:
        if other not in hub.accounts:
            return hub.error(session.conn, "UNKNOWN_PLAYER", f"no player {other}", msg)
    social = social_state(hub)
    wanted = set(msg.player_ids)
    before = social.monitoring.get(player_id, set())
    for gone in before - wanted:
        watchers = social.watchers[gone]
        watchers.discard(player_id)
        if not watchers:
            del social.watchers[gone]
        social.told.get(player_id, {}).pop(gone, None)
        social.pending.get(player_id, set()).discard(gone)
    for new in wanted - before:
        social.watchers.setdefault(new, set()).add(player_id)
        if player_id in social.subscribed:
            social.pending.setdefault(player_id, set()).add(new)
    if wanted:
        social.monitoring[player_id] = wanted
    else:
        social.monitoring.pop(player_id, None)


def subscribe_presence(hub: Hub, session: Session, msg: SubscribePresenceServiceRequest, now: float) -> None:
    """Start (with the monitored players' presence in the next batch) or stop the stream."""
    player_id = _player_id(session)
    social = social_state(hub)
    if not msg.subscribe:
        social.subscribed.discard(player_id)
        social.pending.pop(player_id, None)
        social.told.pop(player_id, None)
        return
    if player_id in social.subscribed:
        return
    social.subscribed.add(player_id)
    social.told[player_id] = {}
    monitored = social.monitoring.get(player_id)
    if monitored:
        social.pending[player_id] = set(monitored)


def _push_presence(hub: Hub, now: float) -> None:
    """Each subscriber's batch: the monitored players whose presence differs from what it was
    last told, at most every PRESENCE_INTERVAL (S15)."""
    social = social_state(hub)
    for watcher in list(social.pending):
        if now - social.presence_pushed.get(watcher, -math.inf) < PRESENCE_INTERVAL:
            continue
        told = social.told.setdefault(watcher, {})
        updates = []
        for other in sorted(social.pending.pop(watcher)):
            update = presence(hub, other)
            if told.get(other) != update:
                told[other] = update
                updates.append(update)
        if updates:
            social.presence_pushed[watcher] = now
            hub.to_player(watcher, AsyncBuddyPresencePartialUpdateRequest(updates=updates))


# -- Server statistics ------------------------------------------------------------------------------


def _figures(hub: Hub) -> tuple[int, int, int]:
    """(live games, players with a live game or connected, connected players)."""
    hosted = sum(1 for game in hub.games.values() if game.status in LIVE)
    players = set(hub.online)
    players.update(hub.games.players())
    return hosted, len(players), len(hub.online)


def _statistics(figures: tuple[int, int, int], request_id: str | None = None) -> ServerStatisticsRequest:
    hosted, players, connected = figures
    return ServerStatisticsRequest(
        hosted_games=hosted, players=players, connected_players=connected, request_id=request_id
    )


def ask_statistics(hub: Hub, session: Session, msg: AskServerStatisticsRequest, now: float) -> None:
    """The figures once; with ``subscribe`` again whenever they change (at most every
    ``list_interval``, S8) until asked with ``subscribe`` false."""
    player_id = _player_id(session)
    figures = _figures(hub)
    hub.send(session.conn, _statistics(figures, msg.request_id))
    social = social_state(hub)
    if msg.subscribe:
        social.statistics[player_id] = (figures, now)
    else:
        social.statistics.pop(player_id, None)


def _push_statistics(hub: Hub, now: float) -> None:
    social = social_state(hub)
    interval = hub.limits.list_interval
    due = [player_id for player_id, (_, sent) in social.statistics.items() if now - sent >= interval]
    if not due:
        return
    figures = _figures(hub)
    for player_id in due:
        if social.statistics[player_id][0] != figures:
            social.statistics[player_id] = (figures, now)
            hub.to_player(player_id, _statistics(figures))


# -- Chat (S14) -------------------------------------------------------------------------------------


def _max_chars(hub: Hub) -> int:
    return int(getattr(hub.limits, "max_chat_chars", MAX_CHAT_CHARS))


def _scope(hub: Hub, session: Session, scope: int, msg: object) -> tuple[bool, AsyncGame | None]:
    """Whether this player may chat in (and read) ``scope``, and its game; refused if not."""
    player_id = _player_id(session)
    if scope == LOBBY:
        if not session.in_lobby:
            hub.error(session.conn, "BAD_REQUEST", "enter the lobby to chat there", msg)
            return False, None
        return True, None
    game = hub.games.get(scope)
    if (
        game is None
        or game.status not in LIVE
        or (game.seat_of(player_id) is None and player_id not in hub.observers.get(game.id, ()))
    ):
        hub.error(session.conn, "UNKNOWN_GAME", "you are not in nor watching a live game with this id", msg)
        return False, None
    return True, game


def _chat_id(game: AsyncGame | None, player_id: int) -> int:
    """How a chat line names its sender: a global id in the lobby, a local id in a game (an
    observer, who has none, by its global id)."""
    seat = game.seat_of(player_id) if game is not None else None
    return seat.local_id if seat is not None else player_id


def _audience(
    hub: Hub, session: Session, game: AsyncGame | None, msg: MulticastChatRequest
) -> list[int] | None:
    """Who a line is for, the sender aside and those ignoring the sender left out: the listed
    recipients, or everyone of the scope. None (refused) for a recipient not in the scope."""
    player_id = _player_id(session)
    wanted = list(dict.fromkeys(msg.recipient_ids))
    if game is None:
        for other in wanted:
            if other not in hub.lobby:
                hub.error(session.conn, "UNKNOWN_PLAYER", f"player {other} is not in the lobby", msg)
                return None
        audience = wanted  # none: the whole lobby, which _relay reaches another way
    elif wanted:
        audience = []
        for local_id in wanted:
            seat = game.seat(local_id)
            if seat is None:
                hub.error(session.conn, "UNKNOWN_PLAYER", f"game {game.id} has no local id {local_id}", msg)
                return None
            if seat.player_id is not None:
                audience.append(seat.player_id)
    else:
        audience = [seat.player_id for seat in game.seats if seat.player_id is not None]
        audience += sorted(hub.observers.get(game.id, ()))
    ignorers = social_state(hub).ignorers.get(player_id, ())
    return [other for other in dict.fromkeys(audience) if other != player_id and other not in ignorers]


def _relay(
    hub: Hub,
    session: Session,
    msg: MulticastChatRequest,
    audience: list[int],
    message: ClientChatRequest | ClientChatBlockedRequest,
) -> None:
    """``message`` to the sender (its copy echoes the request id, S2) and to ``audience``.

    A line to the whole lobby is one Broadcast to the lobby's shared list of connections, with
    the sender's copy and the ignorers' nothing named in ``instead``: no per-recipient work
    here, and the transport writes every line of a commit to each player in one pass (the
    lobby benchmark: 200 lines a second to 2,000 players)."""
    echo = encode(msgspec.structs.replace(message, request_id=msg.request_id))
    if msg.game_id == LOBBY and not msg.recipient_ids:
        instead = {session.conn: echo}
        online = hub.online.get
        for ignorer in social_state(hub).ignorers.get(_player_id(session), ()):
            conn = online(ignorer)
            if conn is not None and ignorer in hub.lobby:
                instead[conn] = b""
        hub.out.append(Broadcast(hub.lobby_conns(), encode(message), instead))
        return
    hub.out.append(Send(session.conn, echo))
    _fan_out(hub, audience, message)


def chat(hub: Hub, session: Session, msg: MulticastChatRequest, now: float) -> None:
    """MulticastChatRequest: checked, filtered, echoed to the sender, relayed to its audience and,
    when public, stored (before anything is shown, S10) and kept for the history."""
    player_id = _player_id(session)
    allowed, game = _scope(hub, session, msg.game_id, msg)
    if not allowed:
        return
    text = msg.text
    if not text.strip():
        return hub.error(session.conn, "BAD_REQUEST", "`text` is empty", msg)
    if len(text) > _max_chars(hub):
        return hub.error(
            session.conn, "TOO_LARGE", f"chat lines are limited to {_max_chars(hub)} characters", msg
        )
    if msg.code in SERVER_CODES:
        return hub.error(
            session.conn, "BAD_REQUEST", "chat codes 1 to 255 are the server's: use 0 or above 255", msg
        )
    if text.startswith("/"):
        return _command(hub, session, msg, game, now)
    audience = _audience(hub, session, game, msg)
    if audience is None:
        return
    social = social_state(hub)
    sender = _chat_id(game, player_id)
    until = social.muted_until.get(player_id)
    if until is not None and now < until:
        blocked = ClientChatBlockedRequest(
            game_id=msg.game_id, sender=sender, muted=True, request_id=msg.request_id
        )
        return hub.send(session.conn, blocked)
    if social.words.blocks(text):
        return _blocked(hub, session, msg, sender, audience, now)
    line = ClientChatRequest(
        game_id=msg.game_id,
        text=text,
        sender=sender,
        recipient_ids=list(dict.fromkeys(msg.recipient_ids)),
        code=msg.code,
    )
    _relay(hub, session, msg, audience, line)
    if not msg.recipient_ids:  # private lines are never stored nor kept (S14)
        seq = social.next_seq.get(msg.game_id, 1)
        social.next_seq[msg.game_id] = seq + 1
        row = ChatRow(msg.game_id, seq, player_id, hub.name(player_id), text, msg.code, now)
        hub.store(row)
        social.history.setdefault(msg.game_id, deque(maxlen=HISTORY)).append(row)


def _blocked(
    hub: Hub, session: Session, msg: MulticastChatRequest, sender: int, audience: list[int], now: float
) -> None:
    """The profanity filter blocked a line: nothing relayed nor stored; the sender and the
    line's audience are told (the text's diagram), and the third time the sender is muted."""
    player_id = _player_id(session)
    social = social_state(hub)
    times = social.blocks.setdefault(player_id, deque())
    times.append(now)
    while times and times[0] <= now - BLOCK_WINDOW:
        times.popleft()
    muted = len(times) >= BLOCKS_TO_MUTE
    if muted:
        social.muted_until[player_id] = now + MUTE_SECONDS
        del social.blocks[player_id]  # a mute served starts a clean slate
        # Stored, so that a restart does not lift it (the blocks counted towards the next one
        # are not: a restart starts them again).
        mutes = {str(player): until for player, until in social.muted_until.items() if until > now}
        hub.store(MetaRow(MUTES_KEY, msgspec.json.encode(mutes).decode()))
    _relay(
        hub, session, msg, audience, ClientChatBlockedRequest(game_id=msg.game_id, sender=sender, muted=muted)
    )


def chat_history(hub: Hub, session: Session, msg: GetChatHistoryRequest, now: float) -> None:
    """The scope's last public lines, oldest first, without those of players the reader ignores."""
    player_id = _player_id(session)
    allowed, game = _scope(hub, session, msg.game_id, msg)
    if not allowed:
        return
    rows = social_state(hub).history.get(msg.game_id, ())
    entries = [
        ChatEntry(sender=_chat_id(game, row.sender), text=row.text, code=row.code, sent_at=row.sent_at)
        for row in rows
        if not is_ignored(hub, player_id, row.sender)
    ]
    hub.send(
        session.conn,
        ClientChatHistoryRequest(game_id=msg.game_id, messages=entries, request_id=msg.request_id),
    )


# -- Chat commands ----------------------------------------------------------------------------------


def _server_line(
    hub: Hub, session: Session, scope: int, code: int, text: str, request_id: str | None = None
) -> None:
    """A coded line from the server to the sender alone: the reply to its command (S2)."""
    hub.send(
        session.conn,
        ClientChatRequest(game_id=scope, text=text, sender=SERVER, code=code, request_id=request_id),
    )


def _command(
    hub: Hub, session: Session, msg: MulticastChatRequest, game: AsyncGame | None, now: float
) -> None:
    """``/help``, ``/report NAME [reason]``, ``/statistics``: answered to the sender alone with
    the text's chat codes; an unknown command gets the help."""
    words = msg.text[1:].split(maxsplit=1)
    name = words[0].casefold() if words else ""
    rest = words[1] if len(words) > 1 else ""
    if name == "report":
        _report(hub, session, msg, rest, now)
    elif name == "statistics":
        _server_line(hub, session, msg.game_id, *_scope_statistics(hub, game), msg.request_id)
    else:
        prefix = "" if name == "help" else f"Unknown command /{name}. "
        _server_line(hub, session, msg.game_id, CODE_HELP, prefix + HELP_TEXT, msg.request_id)


def _report(hub: Hub, session: Session, msg: MulticastChatRequest, rest: str, now: float) -> None:
    """S14: stored as typed (the text: "no check is done server-side regarding the username"),
    one a minute per reporter."""
    player_id = _player_id(session)
    words = rest.split(maxsplit=1)
    if not words:
        return hub.error(session.conn, "BAD_REQUEST", "usage: /report NAME [reason]", msg)
    social = social_state(hub)
    last = social.reported.get(player_id)
    if last is not None and now - last < REPORT_COOLDOWN:
        wait = math.ceil(REPORT_COOLDOWN - (now - last))
        text = f"You reported a player less than a minute ago: try again in {wait} s."
        return _server_line(hub, session, msg.game_id, CODE_REPORT_COOLDOWN, text, msg.request_id)
    social.reported[player_id] = now
    reason = words[1] if len(words) > 1 else ""
    hub.store(ReportRow(reporter=player_id, reported=words[0], scope=msg.game_id, text=reason, at=now))
    _server_line(
        hub,
        session,
        msg.game_id,
        CODE_REPORT_THANKS,
        f"Thanks for your report about {words[0]}.",
        msg.request_id,
    )


def _scope_statistics(hub: Hub, game: AsyncGame | None) -> tuple[int, str]:
    """/statistics: the lobby's players and open games, or a game's seats by state."""
    if game is None:
        players = len(hub.lobby)
        games = sum(1 for game in hub.games.values() if game.open)
        return CODE_LOBBY_STATISTICS, f"Lobby: {_count(players, 'player')}, {_count(games, 'open game')}."
    humans = [seat for seat in game.seats if not seat.robot]
    states = {
        state: sum(1 for seat in humans if seat.state == state)
        for state in ("ACTIVE", "FORFEITED", "TIMED_OUT", "LEFT")
    }
    robots = len(game.seats) - len(humans)
    watching = len(hub.observers.get(game.id, ()))
    text = (
        f"Game {game.id}: {_count(states['ACTIVE'], 'active player')}, {_count(robots, 'robot')}, "
        f"{_count(states['FORFEITED'], 'forfeiter')}, {states['TIMED_OUT']} timed out, {states['LEFT']} left, "
        f"{_count(watching, 'observer')}."
    )
    return CODE_GAME_STATISTICS, text


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


# -- Hooks: ticker and restore ------------------------------------------------------------------------


def tick(hub: Hub, now: float) -> None:
    """Hook, on the service's ticker: presence batches, subscribed statistics, and now and then
    forgetting what no longer matters (expired mutes, old blocks, finished games' history)."""
    _push_presence(hub, now)
    _push_statistics(hub, now)
    social = social_state(hub)
    if now - social.cleaned >= CLEANUP_INTERVAL:
        social.cleaned = now
        _clean(hub, social, now)


def _clean(hub: Hub, social: Social, now: float) -> None:
    for player_id in [p for p, until in social.muted_until.items() if until <= now]:
        del social.muted_until[player_id]
    for player_id in [p for p, times in social.blocks.items() if times[-1] <= now - BLOCK_WINDOW]:
        del social.blocks[player_id]
    for player_id in [p for p, at in social.reported.items() if now - at >= REPORT_COOLDOWN]:
        del social.reported[player_id]
    # A finished game's chat is closed: its lines stay stored, its history need not stay in
    # memory. Its next line number does stay (small), so a number is never given twice.
    for scope in list(social.history):
        game = hub.games.get(scope)
        if scope != LOBBY and (game is None or game.status not in LIVE):
            del social.history[scope]


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
    social = social_state(hub)
    if mutes:
        try:
            stored = msgspec.json.decode(mutes, type=dict[int, float])
        except msgspec.DecodeError:
            stored = {}  # unreadable: nobody is kept muted (mutes last minutes)
        social.muted_until.update({player: until for player, until in stored.items() if until > now})
    for report in reports:
        if now - report.at < REPORT_COOLDOWN:
            social.reported[report.reporter] = max(report.at, social.reported.get(report.reporter, report.at))
    for scope, rows in chat.items():
        if not rows:
            continue
        social.history[scope] = deque(rows[-HISTORY:], maxlen=HISTORY)
        social.next_seq[scope] = max(social.next_seq.get(scope, 1), max(row.seq for row in rows) + 1)
    for row in relations:
        _relate(social, row.kind, row.owner, row.other, row.added)


def reloaded(
    hub: Hub,
    records: Iterable[object],
    relations: dict[tuple[int, int, str], RelationRow | None],
    chat: dict[int, list[ChatRow]],
) -> None:
    """Hook, after a failed commit: the relations and chat scopes it touched as the store holds
    them (none of its lines was shown), and the report cooldowns it started lifted."""
    social = social_state(hub)
    for (owner, other, kind), row in relations.items():
        if row is None:
            _unrelate(social, kind, owner, other)
        else:
            _relate(social, kind, owner, other, row.added)
    for scope, rows in chat.items():
        social.history[scope] = deque(rows[-HISTORY:], maxlen=HISTORY)
        social.next_seq[scope] = max((row.seq for row in rows), default=0) + 1
    for record in records:
        if isinstance(record, ReportRow) and social.reported.get(record.reporter) == record.at:
            del social.reported[record.reporter]


#: What this module answers, by message type (the service's table takes them in).
HANDLERS: Final[dict[str, Handler]] = {
    "MulticastChatRequest": chat,
    "GetChatHistoryRequest": chat_history,
    "RegisterPresenceRequest": register_presence,
    "SubscribePresenceServiceRequest": subscribe_presence,
    "SwitchedToGameRequest": switched_to_game,
    "AsyncBuddyListRequest": buddy_list,
    "AsyncBuddyManagementRequest": manage_buddies,
    "AsyncIgnoreListRequest": ignore_list,
    "AsyncIgnoreManagementRequest": manage_ignored,
    "AskServerStatisticsRequest": ask_statistics,
}
