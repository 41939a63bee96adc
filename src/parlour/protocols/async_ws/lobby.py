"""The lobby and invitations (scalable-server-protocol.rst "Lobby" and "Invitation";
scalable-server-notes.md S7, S8, S13, S19).

Open games fill their seats in join order (local ids 1..n, the creator first) and start when full
or when the creator says so; an invitation seats the inviter, the invitees and the robots at once
and starts when every invitee accepted. Both wait in NOT_STARTED, and both count towards the
creator's open offers (TOO_MANY_OFFERS).
"""

from __future__ import annotations

import msgspec

from parlour.protocols.async_ws import notify
from parlour.protocols.async_ws.chat import CODE_WELCOME_LOBBY, SERVER
from parlour.protocols.async_ws.hub import Hub, Session, deflated
from parlour.protocols.async_ws.messages import (
    AnswerInvitationRequest,
    AskPlayerInfoRequest,
    ClientChatRequest,
    EngageGameWithFriendsRequest,
    EnterLobbyRequest,
    ExitLobbyRequest,
    GameAbortedRequest,
    GameConfiguration,
    GameCreatedRequest,
    InvitationAnsweredRequest,
    LobbyCreateGameRequest,
    LobbyEnteredRequest,
    LobbyExitedRequest,
    LobbyGameCreatedRequest,
    LobbyGameListRequest,
    LobbyJoinDeniedRequest,
    LobbyJoinGameRequest,
    LobbyLeaveGameRequest,
    LobbyNewPlayerRequest,
    LobbyPlayerInfoRequest,
    LobbyPlayerLeftGameRequest,
    LobbyPlayerListRequest,
    LobbyStartGameDeniedRequest,
    LobbyStartGameRequest,
    ObservableGame,
    Player,
)
from parlour.protocols.async_ws.model import AsyncGame, SeatInfo
from parlour.protocols.async_ws.play import report, start_game
from parlour.protocols.async_ws.rules import seat_range

#: The server's welcome line in the lobby (chat code 9 of the text's table).
WELCOME_LOBBY = "Welcome to the lobby. Type /help for the chat commands."

__all__ = [
    "answer_invitation",
    "ask_player_info",
    "create_game",
    "engage_friends",
    "enter_lobby",
    "exit_lobby",
    "join_game",
    "leave_game",
    "leave_open_game",
    "push_lists",
    "start_early",
]


def _player_id(session: Session) -> int:
    assert session.player_id is not None  # handlers run only for authenticated sessions
    return session.player_id


# -- Entering, leaving, lists ------------------------------------------------------------------------


def enter_lobby(hub: Hub, session: Session, msg: EnterLobbyRequest, now: float) -> None:
    if not hub.lobby.move(session, True):
        return hub.error(session.conn, "PLAYER_ALREADY_IN_LOBBY", "you are in the lobby already", msg)
    hub.send(session.conn, LobbyEnteredRequest(request_id=msg.request_id))
    _push_to(hub, session)  # the lists at once, then only when they change (S13)
    hub.send(
        session.conn,
        ClientChatRequest(text=WELCOME_LOBBY, sender=SERVER, code=CODE_WELCOME_LOBBY),
    )


def exit_lobby(hub: Hub, session: Session, msg: ExitLobbyRequest, now: float) -> None:
    hub.lobby.move(session, False)
    hub.send(session.conn, LobbyExitedRequest(request_id=msg.request_id))


def _lists(hub: Hub) -> tuple[str, str]:
    players = [hub.small(player_id) for player_id in sorted(hub.lobby)]
    games = [
        ObservableGame(
            game_id=game.id,
            configuration=hub.public(game.config),
            players=[hub.small(seat.player_id) for seat in game.seats if seat.player_id is not None],
        )
        for game in sorted(hub.games.values(), key=lambda game: game.id)
        if game.open
    ]
    return deflated(players), deflated(games)


def _push_to(hub: Hub, session: Session, lists: tuple[str, str] | None = None) -> None:
    players, games = hub.lobby.unsent(session, *(lists or _lists(hub)))
    if players is not None:
        hub.send(session.conn, LobbyPlayerListRequest(player_list=players))
    if games is not None:
        hub.send(session.conn, LobbyGameListRequest(game_list=games))


def push_lists(hub: Hub, now: float) -> None:
    """On the ticker: the lists to everyone in the lobby, at most every ``list_interval`` and
    only what changed (S8, S13)."""
    if not hub.lobby.push_due(now, hub.limits.list_interval):
        return
    lists = _lists(hub)
    for session in hub.lobby.sessions():
        _push_to(hub, session, lists)


def ask_player_info(hub: Hub, session: Session, msg: AskPlayerInfoRequest, now: float) -> None:
    account = hub.accounts.get(msg.player_id)
    if account is None:
        return hub.error(session.conn, "UNKNOWN_PLAYER", f"no player {msg.player_id}", msg)
    player = Player(
        player_id=account.id,
        name=account.name,
        presence=hub.presence(account.id),  # type: ignore[arg-type]
        ratings={
            game_type: round(mu - 3 * sigma, 3) for game_type, (mu, sigma, _) in account.ratings.items()
        },
        games_played=sum(games for _, _, games in account.ratings.values()),
    )
    hub.send(session.conn, LobbyPlayerInfoRequest(player=player, request_id=msg.request_id))


# -- Open games -------------------------------------------------------------------------------------


def _check_configuration(hub: Hub, session: Session, config: GameConfiguration, msg: object) -> bool:
    """S7/S9: a private game has a password; the rules plugin exists and takes the seat counts."""
    if config.private and config.password is None:
        hub.error(session.conn, "BAD_REQUEST", "`password` is required for a private game", msg)
        return False
    if config.rules != "client":
        try:
            low, high = seat_range(config.rules)
        except ValueError as error:
            hub.error(session.conn, "BAD_REQUEST", str(error), msg)
            return False
        if config.min_players < low or config.max_players > high:
            hub.error(
                session.conn,
                "BAD_REQUEST",
                f"`{config.rules}` is played by {low} to {high} players: check min_players and max_players",
                msg,
            )
            return False
    return True


def _too_many(hub: Hub, session: Session, msg: object) -> bool:
    player_id = _player_id(session)
    if hub.offers(player_id) >= hub.limits.max_offers:
        hub.error(
            session.conn, "TOO_MANY_OFFERS", f"you have {hub.limits.max_offers} games waiting to start", msg
        )
        return True
    if len(hub.player_games.get(player_id, ())) >= hub.limits.max_games:
        hub.error(session.conn, "TOO_MANY_OFFERS", f"you are in {hub.limits.max_games} games already", msg)
        return True
    return False


def create_game(hub: Hub, session: Session, msg: LobbyCreateGameRequest, now: float) -> None:
    config = msg.configuration
    if config.password is not None and not config.private:
        # A password makes the game private (S7): the lobby shows it locked, as the text means.
        config = msgspec.structs.replace(config, private=True)
    if not _check_configuration(hub, session, config, msg) or _too_many(hub, session, msg):
        return
    for payload in (msg.initial_state, msg.initial_summary):
        if payload is not None and len(payload) > hub.limits.max_state_bytes:
            return hub.error(
                session.conn, "TOO_LARGE", f"states are limited to {hub.limits.max_state_bytes} bytes", msg
            )
    player_id = _player_id(session)
    game = AsyncGame(
        id=hub.new_game_id(),
        config=config,
        status="NOT_STARTED",
        creator=player_id,
        seats=[SeatInfo(local_id=1, player_id=player_id, name=hub.name(player_id), accepted=True)],
        created=now,
        updated=now,
        state=msg.initial_state or "",
        summary=msg.initial_summary,
    )
    hub.games[game.id] = game
    hub.track(game)
    hub.lobby.lists_changed()
    hub.send(
        session.conn,
        LobbyGameCreatedRequest(game_id=game.id, configuration=hub.public(config), request_id=msg.request_id),
    )
    hub.save(game, now)


def join_game(hub: Hub, session: Session, msg: LobbyJoinGameRequest, now: float) -> None:
    player_id = _player_id(session)
    game = hub.games.get(msg.game_id)

    def deny(cause: str) -> None:
        hub.send(
            session.conn,
            LobbyJoinDeniedRequest(game_id=msg.game_id, cause=cause, request_id=msg.request_id),  # type: ignore[arg-type]
        )

    if game is None or game.invited_by is not None or game.status in ("OVER", "ABORTED", "ABORTING"):
        return deny("UNKNOWN_GAME")
    if game.seat_of(player_id) is not None:
        return deny("ALREADY_JOINED")
    if game.status != "NOT_STARTED":
        return deny("ALREADY_STARTED")
    if len(game.seats) >= game.config.max_players:
        return deny("GAME_FULL")
    if game.config.password is not None and msg.password != game.config.password:
        return deny("WRONG_PASSWORD")
    if len(hub.player_games.get(player_id, ())) >= hub.limits.max_games:
        return deny("TOO_MANY_GAMES")
    seat = SeatInfo(
        local_id=len(game.seats) + 1, player_id=player_id, name=hub.name(player_id), accepted=True
    )
    game.seats.append(seat)
    hub.track(game)
    hub.lobby.lists_changed()
    joined = LobbyNewPlayerRequest(game_id=game.id, player=hub.small(player_id), local_id=seat.local_id)
    hub.send(session.conn, msgspec.structs.replace(joined, request_id=msg.request_id))
    hub.to_game(game, joined, skip=[player_id])
    if len(game.seats) == game.config.max_players:
        start_game(hub, game, now)
    hub.save(game, now)


def leave_game(hub: Hub, session: Session, msg: LobbyLeaveGameRequest, now: float) -> None:
    game = hub.games.get(msg.game_id)
    if game is None or game.seat_of(_player_id(session)) is None or game.status != "NOT_STARTED":
        return hub.error(session.conn, "UNKNOWN_GAME", "you are in no open game with this id", msg)
    leave_open_game(hub, session, game, msg, now)


def leave_open_game(hub: Hub, session: Session, game: AsyncGame, msg: object, now: float) -> None:
    """A player leaves a game that has not started; the creator leaving aborts it."""
    player_id = _player_id(session)
    request_id = getattr(msg, "request_id", None)
    if player_id == game.creator:
        left = LobbyPlayerLeftGameRequest(game_id=game.id, player_id=player_id, aborted=True)
        hub.send(session.conn, msgspec.structs.replace(left, request_id=request_id))
        hub.to_game(game, left, skip=[player_id])
        if game.invited_by is not None:
            hub.to_game(game, GameAbortedRequest(game_id=game.id), skip=[player_id])
        _abort_unstarted(hub, game, now)
        return
    left = LobbyPlayerLeftGameRequest(game_id=game.id, player_id=player_id)
    hub.send(session.conn, msgspec.structs.replace(left, request_id=request_id))
    hub.to_game(game, left, skip=[player_id])
    if game.invited_by is not None:  # an invitee leaving is a decline
        notify.invitation_answered(hub, game, player_id, False, now)
        _abort_unstarted(hub, game, now)
        return
    hub.untrack(game, player_id)
    game.seats = [seat for seat in game.seats if seat.player_id != player_id]
    for index, seat in enumerate(game.seats, 1):
        seat.local_id = index  # seats are join order among those still there (S6)
    hub.lobby.lists_changed()
    hub.save(game, now)


def _abort_unstarted(hub: Hub, game: AsyncGame, now: float) -> None:
    """A game that never started ends ABORTED at once: nobody has anything to confirm."""
    game.status = "ABORTED"
    game.finished = now
    hub.track(game)
    hub.lobby.lists_changed()
    hub.save(game, now)


def start_early(hub: Hub, session: Session, msg: LobbyStartGameRequest, now: float) -> None:
    game = hub.games.get(msg.game_id)

    def deny(cause: str) -> None:
        hub.send(
            session.conn,
            LobbyStartGameDeniedRequest(game_id=msg.game_id, cause=cause, request_id=msg.request_id),  # type: ignore[arg-type]
        )

    if game is None or game.invited_by is not None or game.status in ("OVER", "ABORTED", "ABORTING"):
        return deny("UNKNOWN_GAME")
    if game.creator != session.player_id:
        return deny("NOT_CREATOR")
    if game.status != "NOT_STARTED":
        return deny("ALREADY_STARTED")
    if len(game.seats) < game.config.min_players:
        return deny("NOT_ENOUGH_PLAYERS")
    start_game(hub, game, now, session.player_id, msg.request_id)


# -- Invitations ------------------------------------------------------------------------------------


def engage_friends(hub: Hub, session: Session, msg: EngageGameWithFriendsRequest, now: float) -> None:
    player_id = _player_id(session)
    friends = [friend for friend in msg.friend_ids if friend != 0]
    for friend in friends:
        if friend not in hub.accounts or friend == player_id:
            return hub.error(session.conn, "UNKNOWN_PLAYER", f"cannot invite player {friend}", msg)
    if len(set(friends)) != len(friends):
        return hub.error(session.conn, "BAD_REQUEST", "`friend_ids` names a player twice", msg)
    seats = len(msg.friend_ids) + 1
    config = msg.configuration or GameConfiguration(game_type="generic", min_players=seats, max_players=seats)
    if config.max_players != seats or config.min_players > seats:
        config = msgspec.structs.replace(config, min_players=seats, max_players=seats)
    if not _check_configuration(hub, session, config, msg) or _too_many(hub, session, msg):
        return
    game = AsyncGame(
        id=hub.new_game_id(),
        config=config,
        status="NOT_STARTED",
        creator=player_id,
        invited_by=player_id,
        seats=[SeatInfo(local_id=1, player_id=player_id, name=hub.name(player_id), accepted=True)],
        created=now,
        updated=now,
    )
    robots = 0
    for index, friend in enumerate(msg.friend_ids, 2):
        if friend == 0:
            robots += 1
            game.seats.append(SeatInfo(local_id=index, name=f"Robot {robots}", robot=True, accepted=True))
        else:
            game.seats.append(SeatInfo(local_id=index, player_id=friend, name=hub.name(friend)))
    hub.games[game.id] = game
    hub.track(game)
    if any(hub.relations.is_ignored(friend, player_id) for friend in friends):
        # An ignored player's invitation never reaches the ignorer (S14): to the inviter it is
        # declined like any other, and nobody else is bothered with it.
        hub.send(
            session.conn,
            GameCreatedRequest(
                game_id=game.id,
                invited_by=player_id,
                status_report=report(hub, game, now, player_id),
                request_id=msg.request_id,
            ),
        )
        hub.send(session.conn, GameAbortedRequest(game_id=game.id))
        _abort_unstarted(hub, game, now)
        return
    for seat in game.seats:
        if seat.player_id is None:
            continue
        created = GameCreatedRequest(
            game_id=game.id, invited_by=player_id, status_report=report(hub, game, now, seat.player_id)
        )
        if seat.player_id == player_id:
            hub.send(session.conn, msgspec.structs.replace(created, request_id=msg.request_id))
        else:
            hub.to_player(seat.player_id, created)
            notify.invited(hub, game, seat.player_id, now)
    hub.save(game, now)


def answer_invitation(hub: Hub, session: Session, msg: AnswerInvitationRequest, now: float) -> None:
    player_id = _player_id(session)
    game = hub.games.get(msg.game_id)
    seat = game.seat_of(player_id) if game is not None else None
    if (
        game is None
        or seat is None
        or game.invited_by is None
        or game.status != "NOT_STARTED"
        or player_id == game.invited_by
    ):
        return hub.error(session.conn, "UNKNOWN_GAME", "you have no invitation to answer for this game", msg)
    seat.accepted = msg.accept
    hub.send(
        session.conn, InvitationAnsweredRequest(game_id=game.id, accept=msg.accept, request_id=msg.request_id)
    )
    notify.invitation_answered(hub, game, player_id, msg.accept, now)
    if not msg.accept:
        hub.to_game(game, GameAbortedRequest(game_id=game.id), skip=[player_id])
        _abort_unstarted(hub, game, now)  # one decline aborts the invitation
        return
    if all(other.accepted for other in game.seats):
        start_game(hub, game, now)
    hub.save(game, now)
