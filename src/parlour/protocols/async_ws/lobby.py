"""The lobby and invitations (scalable-server-protocol.rst "Lobby" and "Invitation";
scalable-server-notes.md S7, S8, S13, S19).

Open games fill their seats in join order (local ids 1..n, the creator first) and start when full
or when the creator says so; an invitation seats the inviter, the invitees and the robots at once
and starts when every invitee accepted. Both wait in NOT_STARTED, and both count towards the
creator's open offers (TOO_MANY_OFFERS).
"""

from __future__ import annotations

from parlour.protocols.async_ws.chat import CODE_WELCOME_LOBBY, SERVER
from parlour.protocols.async_ws.game.plans import Refusal
from parlour.protocols.async_ws.hub import Hub, Session, deflated
from parlour.protocols.async_ws.messages import (
    AnswerInvitationRequest,
    AskPlayerInfoRequest,
    ClientChatRequest,
    EngageGameWithFriendsRequest,
    EnterLobbyRequest,
    ExitLobbyRequest,
    LobbyCreateGameRequest,
    LobbyEnteredRequest,
    LobbyExitedRequest,
    LobbyGameListRequest,
    LobbyJoinDeniedRequest,
    LobbyJoinGameRequest,
    LobbyLeaveGameRequest,
    LobbyPlayerInfoRequest,
    LobbyPlayerListRequest,
    LobbyStartGameDeniedRequest,
    LobbyStartGameRequest,
    ObservableGame,
    Player,
)
from parlour.protocols.async_ws.play import refuse

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


# -- Games before they start: routed to the registry (games.py) and the game ------------------------


def create_game(hub: Hub, session: Session, msg: LobbyCreateGameRequest, now: float) -> None:
    plan = hub.games.plan_create(_player_id(session), msg)
    if isinstance(plan, Refusal):
        refuse(hub, session, plan, msg)
    else:
        hub.games.create(plan, now)


def join_game(hub: Hub, session: Session, msg: LobbyJoinGameRequest, now: float) -> None:
    player_id = _player_id(session)
    game = hub.games.game(msg.game_id)
    plan = (
        Refusal("UNKNOWN_GAME")
        if game is None
        else game.plan_join(player_id, hub.games.playing(player_id), msg)
    )
    if isinstance(plan, Refusal):
        hub.send(
            session.conn,
            LobbyJoinDeniedRequest(game_id=msg.game_id, cause=plan.code, request_id=msg.request_id),  # type: ignore[arg-type]
        )
    elif game is not None:
        game.join(plan, now)


def leave_game(hub: Hub, session: Session, msg: LobbyLeaveGameRequest, now: float) -> None:
    game = hub.games.game(msg.game_id)
    if game is None:
        return hub.error(session.conn, "UNKNOWN_GAME", "you are in no open game with this id", msg)
    plan = game.plan_leave(_player_id(session), msg.request_id)
    if isinstance(plan, Refusal):
        refuse(hub, session, plan, msg)
    else:
        game.leave(plan, now)


def start_early(hub: Hub, session: Session, msg: LobbyStartGameRequest, now: float) -> None:
    game = hub.games.game(msg.game_id)
    plan = Refusal("UNKNOWN_GAME") if game is None else game.plan_start(_player_id(session), msg.request_id)
    if isinstance(plan, Refusal):
        hub.send(
            session.conn,
            LobbyStartGameDeniedRequest(game_id=msg.game_id, cause=plan.code, request_id=msg.request_id),  # type: ignore[arg-type]
        )
    elif game is not None:
        game.start(plan, now)


# -- Invitations ------------------------------------------------------------------------------------


def engage_friends(hub: Hub, session: Session, msg: EngageGameWithFriendsRequest, now: float) -> None:
    plan = hub.games.plan_invite(_player_id(session), msg)
    if isinstance(plan, Refusal):
        refuse(hub, session, plan, msg)
    else:
        hub.games.invite(plan, now)


def answer_invitation(hub: Hub, session: Session, msg: AnswerInvitationRequest, now: float) -> None:
    game = hub.games.game(msg.game_id)
    if game is None:
        return hub.error(session.conn, "UNKNOWN_GAME", "you have no invitation to answer for this game", msg)
    plan = game.plan_answer(_player_id(session), msg)
    if isinstance(plan, Refusal):
        refuse(hub, session, plan, msg)
    else:
        game.answer(plan, now)
