"""The lobby and invitations (the Scalable Server text "Lobby" and "Invitation";
docs/async-decisions.md S7, S8, S13, S19).

Open games fill their seats in join order (local ids 1..n, the creator first) and start when full
or when the creator says so; an invitation seats the inviter, the invitees and the robots at once
and starts when every invitee accepted. Both wait in NOT_STARTED, and both count towards the
creator's open offers (TOO_MANY_OFFERS).
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Iterable
from typing import Final

import msgspec

from parlour.core.effects import ConnId
from parlour.protocols.async_ws.game.plans import Refusal
from parlour.protocols.async_ws.ingame.game_requests import handlers, refuse
from parlour.protocols.async_ws.players import ratings
from parlour.protocols.async_ws.players.chat import CODE_WELCOME_LOBBY, SERVER
from parlour.protocols.async_ws.state.hub import Handler, Hub, Session, deflated
from parlour.protocols.async_ws.wire.messages import (
    AskPlayerInfoRequest,
    ClientChatRequest,
    EngageGameWithFriendsRequest,
    EnterLobbyRequest,
    ExitLobbyRequest,
    GetLobbyListsRequest,
    LobbyCreateGameRequest,
    LobbyEnteredRequest,
    LobbyExitedRequest,
    LobbyGameListRequest,
    LobbyListDeltaRequest,
    LobbyPlayerInfoRequest,
    LobbyPlayerListRequest,
    ObservableGame,
    SmallPlayer,
    encode,
)

#: Encodes a member's entry in the lists (the fragments lists are joined from).
encode_value = msgspec.json.Encoder().encode

#: The server's welcome line in the lobby (chat code 9 of the text's table).
WELCOME_LOBBY = "Welcome to the lobby. Type /help for the chat commands."

__all__ = [
    "GAME_HANDLERS",
    "ask_player_info",
    "create_game",
    "engage_friends",
    "enter_lobby",
    "exit_lobby",
    "get_lobby_lists",
    "push_lists",
]


def _player_id(session: Session) -> int:
    assert session.player_id is not None  # handlers run only for authenticated sessions
    return session.player_id


# -- Entering, leaving, lists ------------------------------------------------------------------------
#
# Two forms of the lists (docs/async.md "Lobby lists"). The seed's: LobbyPlayerListRequest and
# LobbyGameListRequest, whole while the lobby holds at most ``list_cap`` entries, else capped to
# that many (those who have waited longest, plus a member's buddies; the oldest open games),
# so that a push costs each member a bounded size and most members the same bytes. The extension's:
# the whole lists once, then LobbyListDeltaRequest, one message for every member who asked, as
# large as the change. A list built since the last push serves until the next one: whoever gets it
# then gets what changed since the last push, which covers what it missed.


def enter_lobby(hub: Hub, session: Session, msg: EnterLobbyRequest, now: float) -> None:
    if session.in_lobby:
        return hub.error(session.conn, "PLAYER_ALREADY_IN_LOBBY", "you are in the lobby already", msg)
    hub.lobby.take_deltas(session, msg.deltas or session.lobby_deltas)
    hub.lobby.move(session, True)
    hub.send(session.conn, LobbyEnteredRequest(request_id=msg.request_id))
    _push_to(hub, session)  # the lists at once, then only when they change (S13)
    hub.send(
        session.conn,
        ClientChatRequest(text=WELCOME_LOBBY, sender=SERVER, code=CODE_WELCOME_LOBBY),
    )


def exit_lobby(hub: Hub, session: Session, msg: ExitLobbyRequest, now: float) -> None:
    hub.lobby.move(session, False)
    hub.send(session.conn, LobbyExitedRequest(request_id=msg.request_id))


def get_lobby_lists(hub: Hub, session: Session, msg: GetLobbyListsRequest, now: float) -> None:
    """The whole lists now, and the form of the next ones (a Parlour extension)."""
    if msg.deltas is not None:
        hub.lobby.take_deltas(session, msg.deltas)
    players, games = _whole_players(hub), _whole_games(hub)
    session.sent_players, session.sent_games = players, games
    hub.send(session.conn, LobbyPlayerListRequest(player_list=players, request_id=msg.request_id))
    hub.send(session.conn, LobbyGameListRequest(game_list=games, request_id=msg.request_id))


def _listed(hub: Hub, player_id: int) -> SmallPlayer:
    """A member as the lobby lists it: IN_GAME while its UI is switched to a game (S15)."""
    switched = hub.presence_state.switched(player_id) is not None
    return SmallPlayer(
        player_id=player_id, name=hub.name(player_id), presence="IN_GAME" if switched else "ONLINE"
    )


def _entries(hub: Hub, player_ids: Iterable[int]) -> bytes:
    """These members' SmallPlayer as JSON array items, comma-separated: each member's entry is
    encoded once, not once per list it is in."""
    fragments = hub.lobby.fragments
    parts = []
    for player_id in player_ids:
        fragment = fragments.get(player_id)
        if fragment is None:
            fragment = fragments[player_id] = encode_value(_listed(hub, player_id))
        parts.append(fragment)
    return b",".join(parts)


def _deflated_players(hub: Hub, player_ids: Iterable[int]) -> str:
    """hub.deflated of these members' SmallPlayer."""
    return _b64(zlib.compress(b"[" + _entries(hub, player_ids) + b"]"))


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _read_games(hub: Hub) -> None:
    """The games said to have changed, read into the lobby's open games (and the ids whose entry
    changed into ``moved_games``, for the next delta); every game when none could be named."""
    lobby = hub.lobby
    rescan, dirty = lobby.games_to_read()
    if rescan:
        dirty.update(lobby.open_games)
        dirty.update(game.id for game in hub.games.values() if game.open)
    if not dirty:
        return
    listed = lobby.open_games
    for game_id in dirty:
        game = hub.games.get(game_id)
        if game is not None and game.open:
            entry = ObservableGame(
                game_id=game.id,
                configuration=hub.public(game.config),
                players=[hub.small(seat.player_id) for seat in game.seats if seat.player_id is not None],
            )
            if listed.get(game_id) == entry:
                continue
            listed[game_id] = entry
        elif listed.pop(game_id, None) is None:
            continue
        lobby.moved_games.add(game_id)
        lobby.cache.pop("games", None)
        lobby.cache.pop("first_games", None)


def _whole_players(hub: Hub) -> str:
    cache = hub.lobby.cache
    text = cache.get("players")
    if text is None:
        text = cache["players"] = _deflated_players(hub, sorted(hub.lobby))
    return text


def _whole_games(hub: Hub) -> str:
    _read_games(hub)
    cache = hub.lobby.cache
    text = cache.get("games")
    if text is None:
        listed = hub.lobby.open_games
        text = cache["games"] = deflated([listed[game_id] for game_id in sorted(listed)])
    return text


def _seed_games(hub: Hub) -> str:
    """The open games as a client without deltas gets them: the oldest ``list_cap``."""
    cap = hub.limits.list_cap
    listed = hub.lobby.open_games
    text = _whole_games(hub)
    if not cap or len(listed) <= cap:
        return text
    cache = hub.lobby.cache
    first = cache.get("first_games")
    if first is None:
        first = cache["first_games"] = deflated([listed[game_id] for game_id in sorted(listed)[:cap]])
    return first


def _window(hub: Hub, cap: int) -> str:
    """The capped player list most members get: the ``cap`` who have waited longest, by id.

    Its deflate stream is kept open before the closing bracket (``lobby.window_stream``): a
    member's own list is the same with its buddies after them, so it is made from a copy of
    that stream, without compressing the window again."""
    lobby = hub.lobby
    text = lobby.cache.get("window")
    if text is None:
        first = lobby.first(cap)
        lobby.window = frozenset(first)
        stream = zlib.compressobj()
        # A sync flush writes out all of the window now: a copy only compresses what follows.
        prefix = stream.compress(b"[" + _entries(hub, sorted(first))) + stream.flush(zlib.Z_SYNC_FLUSH)
        lobby.window_stream = (stream, prefix)
        text = lobby.cache["window"] = _closed(stream, prefix, b"]")
    return text


def _closed(stream: zlib._Compress, prefix: bytes, tail: bytes) -> str:
    """``prefix`` (what ``stream`` gave so far) and ``tail`` compressed by a copy of ``stream``."""
    rest = stream.copy()
    return _b64(prefix + rest.compress(tail) + rest.flush())


def _seed_players(hub: Hub, session: Session, changed: set[int] | None = None) -> str:
    """The player list as ``session`` gets it without deltas: whole in a lobby of at most
    ``list_cap``, else the window (those who have waited longest), then its buddies in the
    lobby who are not in it (at most ``list_cap`` of them).
    ``changed``: the players who changed since the last push, when pushing (a list of its own
    is then built again only if the window, its buddies in the lobby or one of them changed)."""
    lobby = hub.lobby
    cap = hub.limits.list_cap
    if not cap or len(lobby) <= cap:
        return _whole_players(hub)
    shared = _window(hub, cap)
    buddies = hub.relations.listed("buddy", session.player())
    if not buddies:
        return shared
    window = lobby.window
    present = sorted(buddy for buddy in buddies if buddy in lobby and buddy not in window)[:cap]
    if not present:
        return shared  # the shared window shows them all already: the same bytes as the others
    buddies_shown = tuple(present)
    own = session.lobby_own
    if (
        changed is not None
        and own is not None
        and own[0] == shared
        and own[1] == buddies_shown
        and changed.isdisjoint(present)
    ):
        return own[2]  # nothing of it changed: not built again (and not sent again)
    stream, prefix = lobby.window_stream
    text = _closed(stream, prefix, b"," + _entries(hub, present) + b"]")
    session.lobby_own = (shared, buddies_shown, text)
    return text


def _push_to(hub: Hub, session: Session) -> None:
    """The lists to one member who just entered: whole if it takes deltas, else as pushed."""
    if session.lobby_deltas:
        hub.send(session.conn, LobbyPlayerListRequest(player_list=_whole_players(hub)))
        hub.send(session.conn, LobbyGameListRequest(game_list=_whole_games(hub)))
        return
    players, games = hub.lobby.unsent(session, _seed_players(hub, session), _seed_games(hub))
    if players is not None:
        hub.send(session.conn, LobbyPlayerListRequest(player_list=players))
    if games is not None:
        hub.send(session.conn, LobbyGameListRequest(game_list=games))


def push_lists(hub: Hub, now: float) -> None:
    """On the ticker: what changed to everyone in the lobby, at most every ``list_interval`` and
    only when something did (S8, S13): one delta for all who take deltas, and the seed's lists to
    the others who were not sent them yet, each distinct list encoded once."""
    lobby = hub.lobby
    if not lobby.push_due(now, hub.limits.list_interval):
        return
    _read_games(hub)
    players, games = lobby.take_changes()
    listed = lobby.open_games
    audience = lobby.delta_conns()
    if audience and (players or games):
        delta = LobbyListDeltaRequest(
            players=[_listed(hub, player_id) for player_id in sorted(players) if player_id in lobby],
            left=sorted(player_id for player_id in players if player_id not in lobby),
            games=[listed[game_id] for game_id in sorted(games) if game_id in listed],
            closed=sorted(game_id for game_id in games if game_id not in listed),
            player_count=len(lobby),
            game_count=len(listed),
        )
        hub.output.send_many(audience, encode(delta))
    if len(audience) == len(lobby):
        return
    # The seed's lists, grouped by the list each member is due (most share the same one).
    player_lists: dict[int, tuple[str, list[ConnId]]] = {}
    game_lists: dict[int, tuple[str, list[ConnId]]] = {}
    seed_games = _seed_games(hub)
    for session in lobby.sessions():
        if session.lobby_deltas:
            continue
        new_players, new_games = lobby.unsent(session, _seed_players(hub, session, players), seed_games)
        if new_players is not None:
            player_lists.setdefault(id(new_players), (new_players, []))[1].append(session.conn)
        if new_games is not None:
            game_lists.setdefault(id(new_games), (new_games, []))[1].append(session.conn)
    for text, conns in player_lists.values():
        hub.output.send_many(conns, encode(LobbyPlayerListRequest(player_list=text)))
    for text, conns in game_lists.values():
        hub.output.send_many(conns, encode(LobbyGameListRequest(game_list=text)))


def ask_player_info(hub: Hub, session: Session, msg: AskPlayerInfoRequest, now: float) -> None:
    account = hub.accounts.get(msg.player_id)
    if account is None:
        return hub.error(session.conn, "UNKNOWN_PLAYER", f"no player {msg.player_id}", msg)
    player = ratings.player(account, hub.presence(account.id))  # type: ignore[arg-type]
    hub.send(session.conn, LobbyPlayerInfoRequest(player=player, request_id=msg.request_id))


# -- Games before they start ----------------------------------------------------------------------
#
# A new game has no game to find: its owner (game/game_registry.py) plans and makes it, so these two
# stay plain handlers. Joining, leaving, starting early and answering an invitation go to the game
# the request names: rows of ingame/game_requests.py's table (GAME_HANDLERS).


def create_game(hub: Hub, session: Session, msg: LobbyCreateGameRequest, now: float) -> None:
    plan = hub.games.plan_create(_player_id(session), msg)
    if isinstance(plan, Refusal):
        refuse(hub, session, plan, msg)
    else:
        hub.games.create(plan, now)


def engage_friends(hub: Hub, session: Session, msg: EngageGameWithFriendsRequest, now: float) -> None:
    plan = hub.games.plan_invite(_player_id(session), msg)
    if isinstance(plan, Refusal):
        refuse(hub, session, plan, msg)
    else:
        hub.games.invite(plan, now)


#: The lobby's requests to one of its games, by message type, for the service's table.
GAME_HANDLERS: Final[dict[str, Handler]] = handlers(
    "LobbyJoinGameRequest", "LobbyLeaveGameRequest", "LobbyStartGameRequest", "AnswerInvitationRequest"
)
