"""Chat and its commands (the Scalable Server text "Chat", "Chat codes", "Chat commands";
docs/async-decisions.md S8, S10, S14). What is kept between lines (history, numbers, mutes,
report cooldowns, the profanity filter) is the hub's ``ChatLog`` (state/social_state.py).

Decisions where the text is silent, beside S14:

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
"""

from __future__ import annotations

import math
from typing import Final

import msgspec

from parlour.protocols.async_ws.game.lifecycle import LIVE
from parlour.protocols.async_ws.game.model import AsyncGame
from parlour.protocols.async_ws.state.hub import Hub, Session
from parlour.protocols.async_ws.wire.messages import (
    ChatEntry,
    ClientChatBlockedRequest,
    ClientChatHistoryRequest,
    ClientChatRequest,
    GetChatHistoryRequest,
    MulticastChatRequest,
    encode,
)
from parlour.storage import ChatRow, MetaRow, ReportRow

__all__ = ["CODE_WELCOME_LOBBY", "LOBBY", "MAX_CHAT_CHARS", "MUTES_KEY", "SERVER", "chat", "chat_history"]

#: The lobby's chat scope (a game's is its id).
LOBBY: Final = 0
#: S8's chat limit (the ``max_chat_chars`` setting). The hub's AsyncLimits has no field for it
#: yet: ``hub.limits.max_chat_chars`` is used once it has one, this default until then.
MAX_CHAT_CHARS: Final = 500
#: The parlour_meta key of the mutes in force ({player id: end}, JSON; written as one starts,
#: the expired left out).
MUTES_KEY: Final = "async.chat.mutes"

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


def _max_chars(hub: Hub) -> int:
    return int(getattr(hub.limits, "max_chat_chars", MAX_CHAT_CHARS))


def scope_of(hub: Hub, session: Session, scope: int, msg: object) -> tuple[bool, AsyncGame | None]:
    """Whether this player may chat in (and read) ``scope``, and its game; refused if not."""
    player_id = session.player()
    if scope == LOBBY:
        if not session.in_lobby:
            hub.error(session.conn, "BAD_REQUEST", "enter the lobby to chat there", msg)
            return False, None
        return True, None
    game = hub.games.get(scope)
    if (
        game is None
        or game.status not in LIVE
        or (game.seat_of(player_id) is None and player_id not in hub.observers.get(game.id))
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
    player_id = session.player()
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
        audience += sorted(hub.observers.get(game.id))
    ignorers = hub.relations.ignorers(player_id)
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
    echo = msgspec.structs.replace(message, request_id=msg.request_id)
    if msg.game_id == LOBBY and not msg.recipient_ids:
        instead = {session.conn: encode(echo)}
        online = hub.online.get
        for ignorer in hub.relations.ignorers(session.player()):
            conn = online(ignorer)
            if conn is not None and ignorer in hub.lobby:
                instead[conn] = b""
        hub.output.broadcast(hub.lobby.conns(), encode(message), instead)
        return
    hub.send(session.conn, echo)
    hub.to_players(audience, message)


def chat(hub: Hub, session: Session, msg: MulticastChatRequest, now: float) -> None:
    """MulticastChatRequest: checked, filtered, echoed to the sender, relayed to its audience and,
    when public, stored (before anything is shown, S10) and kept for the history."""
    player_id = session.player()
    allowed, game = scope_of(hub, session, msg.game_id, msg)
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
    log = hub.chat_log
    sender = _chat_id(game, player_id)
    if log.muted(player_id, now):
        blocked = ClientChatBlockedRequest(
            game_id=msg.game_id, sender=sender, muted=True, request_id=msg.request_id
        )
        return hub.send(session.conn, blocked)
    if log.words.blocks(text):
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
        seq = log.next_seq(msg.game_id)
        row = ChatRow(msg.game_id, seq, player_id, hub.name(player_id), text, msg.code, now)
        hub.store(row)
        log.keep(row)


def _blocked(
    hub: Hub, session: Session, msg: MulticastChatRequest, sender: int, audience: list[int], now: float
) -> None:
    """The profanity filter blocked a line: nothing relayed nor stored; the sender and the
    line's audience are told (the text's diagram), and the third time the sender is muted."""
    mutes = hub.chat_log.blocked(session.player(), now)
    if mutes is not None:
        # Stored, so that a restart does not lift it (the blocks counted towards the next one
        # are not: a restart starts them again).
        hub.store(MetaRow(MUTES_KEY, mutes))
    notice = ClientChatBlockedRequest(game_id=msg.game_id, sender=sender, muted=mutes is not None)
    _relay(hub, session, msg, audience, notice)


def chat_history(hub: Hub, session: Session, msg: GetChatHistoryRequest, now: float) -> None:
    """The scope's last public lines, oldest first, without those of players the reader ignores."""
    player_id = session.player()
    allowed, game = scope_of(hub, session, msg.game_id, msg)
    if not allowed:
        return
    entries = [
        ChatEntry(sender=_chat_id(game, row.sender), text=row.text, code=row.code, sent_at=row.sent_at)
        for row in hub.chat_log.history(msg.game_id)
        if not hub.relations.is_ignored(player_id, row.sender)
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
    player_id = session.player()
    words = rest.split(maxsplit=1)
    if not words:
        return hub.error(session.conn, "BAD_REQUEST", "usage: /report NAME [reason]", msg)
    wait = hub.chat_log.report_wait(player_id, now)
    if wait is not None:
        text = f"You reported a player less than a minute ago: try again in {math.ceil(wait)} s."
        return _server_line(hub, session, msg.game_id, CODE_REPORT_COOLDOWN, text, msg.request_id)
    hub.chat_log.reported(player_id, now)
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
    watching = len(hub.observers.get(game.id))
    text = (
        f"Game {game.id}: {_count(states['ACTIVE'], 'active player')}, {_count(robots, 'robot')}, "
        f"{_count(states['FORFEITED'], 'forfeiter')}, {states['TIMED_OUT']} timed out, {states['LEFT']} left, "
        f"{_count(watching, 'observer')}."
    )
    return CODE_GAME_STATISTICS, text


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
