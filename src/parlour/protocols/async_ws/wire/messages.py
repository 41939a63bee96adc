"""The 87 messages of the Scalable Server workflows, and Parlour's extensions, declared once
(docs/async-decisions.md S1, S2).

Every message is a ``msgspec.Struct`` tagged on ``type`` with the exact name the text uses
(``ActionCommitedRequest`` keeps its one m), so one JSON object per websocket text frame reads
``{"type": "<MessageName>", ...fields}`` (S1). The field names are the text's where it gives one
(``finalScores`` and ``sessionToken`` included, S1), S19/S20 where the text is open or contradicts
itself, and a plain snake_case name otherwise: each such choice says so and cites the row of the
text's messages it fills (docs/async-decisions.md). The JSON Schema and docs/async-protocol.md are
generated from these declarations (reference/schema.py), so docstrings here are the protocol
reference: keep them accurate.

Ids (S6): global ids are positive account ids, local ids are seats 1..max_players, game ids are
positive. Opaque payloads (states, summaries, user data, multicast data) are JSON strings (S1).
Size limits that are settings (S8) are enforced by the server, not here: a schema cannot follow a
setting.

Parlour extensions (``EXTENSIONS``, and fields whose description starts with ``EXTENSION``) are
what Parlour adds to the text: a client of the seed protocol never sends them, so it is never sent
anything it does not know (docs/async.md "Parlour extensions").
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, TypeAlias

import msgspec
from msgspec import Meta

__all__ = [
    "EXTENSION",
    "EXTENSIONS",
    "MESSAGES",
    "AnswerInvitationRequest",
    "AskPlayerInfoRequest",
    "AskServerStatisticsRequest",
    "AsyncAuthRequest",
    "AsyncBuddyAddedRequest",
    "AsyncBuddyListContentRequest",
    "AsyncBuddyListRequest",
    "AsyncBuddyManagementRequest",
    "AsyncBuddyPresencePartialUpdateRequest",
    "AsyncBuddyRemovedRequest",
    "AsyncConnectedRequest",
    "AsyncConnectionErrorRequest",
    "AsyncDeviceUnlinkedRequest",
    "AsyncDisconnectRequest",
    "AsyncIgnoreAddedRequest",
    "AsyncIgnoreListContentRequest",
    "AsyncIgnoreListRequest",
    "AsyncIgnoreManagementRequest",
    "AsyncIgnoreRemovedRequest",
    "AsyncUnlinkDeviceRequest",
    "ChatEntry",
    "ClientChatBlockedRequest",
    "ClientChatHistoryRequest",
    "ClientChatRequest",
    "ClientDataRequest",
    "ClientMessage",
    "ClockPausedRequest",
    "ClockResumedRequest",
    "ClocksStatusRequest",
    "CommitActionRequest",
    "Device",
    "EngageGameWithFriendsRequest",
    "EnterLobbyRequest",
    "ErrorCode",
    "ErrorRequest",
    "ExitLobbyRequest",
    "GameAbortedConfirmationRequest",
    "GameAbortedRequest",
    "GameConfiguration",
    "GameCreatedRequest",
    "GameForfeitRequest",
    "GameForfeitedRequest",
    "GameObservedRequest",
    "GameOutcomeConfirmationRequest",
    "GameOutcomeRequest",
    "GameOverRequest",
    "GameStateUpdatedRequest",
    "GameStatus",
    "GameStatusReportRequest",
    "GameUserDataUpdatedRequest",
    "GetChatHistoryRequest",
    "GetClocksRequest",
    "GetLobbyListsRequest",
    "InterruptActionErrorRequest",
    "InterruptActionRequest",
    "InterruptionOverRequest",
    "InvitationAnsweredRequest",
    "LobbyCreateGameRequest",
    "LobbyEnteredRequest",
    "LobbyExitedRequest",
    "LobbyGameCreatedRequest",
    "LobbyGameListRequest",
    "LobbyJoinDeniedRequest",
    "LobbyJoinGameRequest",
    "LobbyLeaveGameRequest",
    "LobbyListDeltaRequest",
    "LobbyNewPlayerRequest",
    "LobbyPlayerInfoRequest",
    "LobbyPlayerLeftGameRequest",
    "LobbyPlayerListRequest",
    "LobbyStartGameDeniedRequest",
    "LobbyStartGameRequest",
    "MulticastChatRequest",
    "MulticastDataRequest",
    "ObservableGame",
    "ObservableGameListRequest",
    "OutcomeEntry",
    "Penalty",
    "PingRequest",
    "Player",
    "PlayerClock",
    "PlayerData",
    "PlayerIdleProgressRequest",
    "PlayerPresenceUpdateRequest",
    "PlayerReplacedRequest",
    "PlayerTimeoutRequest",
    "PresenceUpdate",
    "QueueEntry",
    "QuickPlayJoinRequest",
    "QuickPlayLeaveRequest",
    "QuickPlayMatchedRequest",
    "QuickPlayStatusRequest",
    "RegisterPresenceRequest",
    "ServerMessage",
    "ServerStatisticsRequest",
    "ShownRating",
    "SmallPlayer",
    "StartObserveGameRequest",
    "StatusReport",
    "StatusReportPlayer",
    "StopObserveGameRequest",
    "SubscribePresenceServiceRequest",
    "SubscribeToObservableGameListRequest",
    "SubscribedToObservableGameListRequest",
    "SwitchedToGameRequest",
    "UpdateUserDataRequest",
    "UserDataUpdateRequiredRequest",
    "UserDataUpdatedRequest",
    "WhatsNewPussycatRequest",
    "decode_client",
    "encode",
]

#: How the declarations below mark what Parlour adds to the text (docs/async.md "Parlour
#: extensions"): a client of the seed protocol never sends it and is never sent it.
EXTENSION: Final = "Parlour extension"

# --- Scalars ---------------------------------------------------------------------------------------

GlobalId = Annotated[int, Meta(ge=1, description="A global player id: a positive account id (S6).")]
LocalId = Annotated[
    int, Meta(ge=1, le=8, description="A local id: a seat, 1..max_players in join order (S6).")
]
GameId = Annotated[int, Meta(ge=1, description="A game id: positive, unique for the life of the store (S6).")]
#: Chat and chat history address the lobby with 0 (rows 31, 34): a game id or 0.
ChatScope = Annotated[int, Meta(ge=0, description="0 (or absent) = the lobby, else a game id (row 31).")]
#: Turn indexes start at 1 (row 59; S20 for the commit/acknowledgement off-by-one).
TurnIndex = Annotated[int, Meta(ge=1, description="The turn index; the first turn is 1 (S20).")]
Seconds = Annotated[int, Meta(ge=0, description="Whole seconds; 0 = none.")]
Milliseconds = Annotated[int, Meta(ge=0, description="Milliseconds; 0 = no interruption window (row 60).")]
#: Opaque payloads are JSON strings; clients put base64 there if they carry bytes (S1).
Opaque = Annotated[str, Meta(description="Opaque to the server; base64 if it carries bytes (S1).")]
RequestId = Annotated[
    str,
    Meta(min_length=1, max_length=64, description="Chosen by the client; echoed by the direct reply (S2)."),
]
Name = Annotated[str, Meta(min_length=1, max_length=40)]

#: S3: the text's codes (their commit errors among them) plus Parlour's four, INTERNAL_ERROR when the
#: server could not save a change (nothing changed; S10's "stored before shown"), and TRY_AGAIN
#: when nothing changed and the request may be sent again in a moment: the game's node is
#: changing in a cluster, or the store failed while the request's answer waited behind a commit.
ErrorCode: TypeAlias = Literal[
    "PLAYER_ALREADY_IN_LOBBY",
    "TOO_MANY_OFFERS",
    "NOT_YOUR_TURN",
    "UNKNOWN_PLAYER",
    "UNKNOWN_GAME",
    "YOU_FORFEITED",
    "YOU_RAN_OUT_OF_TIME",
    "YOU_LEFT",
    "INDEX_CONFLICT",
    "BAD_REQUEST",
    "UNAUTHENTICATED",
    "RATE_LIMITED",
    "TOO_LARGE",
    "INTERNAL_ERROR",
    "TRY_AGAIN",
    # Parlour extensions (quick play, QuickPlayJoinRequest): already in that queue; in no such queue.
    "ALREADY_QUEUED",
    "NOT_QUEUED",
]
#: The text names all but the running status, which it implies: Parlour calls it RUNNING.
GameStatus: TypeAlias = Literal["NOT_STARTED", "RUNNING", "OUTCOME", "OVER", "ABORTING", "ABORTED"]
#: S15.
Presence: TypeAlias = Literal["OFFLINE", "ONLINE", "IN_GAME"]
#: The text's device types (Devices.Type); GCM is kept so old clients get a clear refusal from the server.
DeviceType: TypeAlias = Literal["IOS", "IOS_SANDBOX", "OSX", "OSX_SANDBOX", "GCM", "FCM", "STEAM"]
#: The text's values.
Operation: TypeAlias = Literal["ADD", "REMOVE"]
#: S9: "client" is the text's model; a plugin name makes Parlour authoritative.
Rules: TypeAlias = Literal["client", "apologies", "fish", "tsuro"]
#: Robot levels (parlour.robots.levels), a Parlour extension of server-rules games.
RobotLevel: TypeAlias = Literal["easy", "normal", "hard"]


# --- Shared structures -----------------------------------------------------------------------------


class _Structure(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """Nested structures: strict like messages, but untagged."""


class GameConfiguration(_Structure, kw_only=True):
    """The configuration of a game (S7; the text's GameConfiguration).

    Sent by the creator and read back by every client (the `rules_engine_version` check before a join
    is the client's job). The server never sends `password` back: it is omitted on output.
    """

    game_type: Annotated[str, Meta(pattern=r"^[a-z0-9_-]{1,32}$", description="What is played (S7, S18).")]
    rules_engine_version: Annotated[str, Meta(max_length=64)] = ""
    min_players: Annotated[int, Meta(ge=2, le=8)] = 2
    max_players: Annotated[int, Meta(ge=2, le=8)]
    private: bool = False
    password: Annotated[str, Meta(min_length=1, max_length=128)] | None = None
    observable: bool = True
    observers_buddies_only: bool = False
    clock_seconds: Annotated[Seconds, Meta(description="Each seat's clock; 0 = no clock (S7).")] = 0
    clock_increment_seconds: Seconds = 0
    idle_time: Annotated[Seconds, Meta(description="Idle timer in seconds; 0 = off (S7).")] = 0
    ranked: bool = False
    rules: Rules = "client"
    #: Parlour extensions (S9): the options of the `rules` plugin, and the level robot seats play at.
    options: Annotated[
        dict[str, str | int],
        Meta(max_length=8, description='Options of the `rules` plugin, e.g. `{"mode": "ADULT"}` (S9).'),
    ] = {}
    robot_level: (
        Annotated[RobotLevel, Meta(description="How well robot seats (id 0) play; absent: the default.")]
        | None
    ) = None

    def __post_init__(self) -> None:
        # Cross-field checks msgspec Meta cannot express; ValueError becomes a ValidationError
        # naming the field (S7: "out-of-range fields: BAD_REQUEST naming the field").
        if self.min_players > self.max_players:
            raise ValueError("`min_players` must not exceed `max_players`")
        # A private game needs a password (row 44): the server checks that on
        # creation, since the configuration it sends back never carries the password.


class Device(_Structure, kw_only=True):
    """A push device (the text's DeviceType; its field names chosen here)."""

    device_type: DeviceType
    token: Annotated[str, Meta(min_length=1, max_length=4096, description="The opaque token from the OS.")]


class SmallPlayer(_Structure, kw_only=True):
    """A player as listed in the lobby and buddy lists (the text's SmallPlayer; fields chosen here)."""

    player_id: GlobalId
    name: Name
    presence: Presence = "OFFLINE"


class ShownRating(_Structure, kw_only=True):
    """A rating as players see it (Parlour extension; docs/ratings.md): the OpenSkill
    rating on the Elo-like scale of parlour.core.rating_scale (a new player is 1500), provisional
    until 5 games of the type are rated, and what the game just played changed of it."""

    rating: int
    provisional: bool = False
    change: int | None = None


#: A seat's new rating as people read it, beside the OpenSkill change (a Parlour extension).
ShownChange = Annotated[
    ShownRating,
    Meta(description=f"{EXTENSION}: the new rating as shown to people, and its change (docs/ratings.md)."),
]


class Player(_Structure, kw_only=True):
    """The full player (the text's Player; fields chosen here: ratings per `game_type`, S11)."""

    player_id: GlobalId
    name: Name
    presence: Presence = "OFFLINE"
    ratings: Annotated[
        dict[str, float], Meta(description="The OpenSkill ordinal (mu - 3 sigma) per `game_type` (S11).")
    ] = {}
    games_played: Annotated[int, Meta(ge=0)] = 0
    shown_ratings: Annotated[
        dict[str, ShownRating],
        Meta(description=f"{EXTENSION}: the ratings as shown to people, per `game_type` (docs/ratings.md)."),
    ] = {}


class PlayerClock(_Structure, kw_only=True):
    """One seat's clock (the text's player clock: `paused`, `armed`; remaining time chosen here).

    `armed` means the clock runs while it is this seat's turn; `paused` that a commit pause holds it.
    """

    player_id: LocalId
    remaining_seconds: Annotated[float, Meta(ge=0)] | None = None
    paused: bool = False
    armed: bool = False


class PlayerData(_Structure, kw_only=True):
    """One (player, data) pair of `user_data` or `interruption_data` (rows 59, 66)."""

    player_id: LocalId
    data: Opaque


class StatusReportPlayer(_Structure, kw_only=True):
    """A seat in a StatusReport (S12). `player_id` is absent for a robot seat (S6)."""

    local_id: LocalId
    player_id: GlobalId | None = None
    name: Name
    kind: Literal["HUMAN", "ROBOT"]
    state: Literal["ACTIVE", "FORFEITED", "TIMED_OUT", "LEFT"] = "ACTIVE"
    presence: Presence = "OFFLINE"


class OutcomeEntry(_Structure, kw_only=True):
    """One seat's result (S11: score and rank; rating change when ranked)."""

    player_id: LocalId
    score: float
    rank: Annotated[int, Meta(ge=1)]
    rating_change: float | None = None
    shown: ShownChange | None = None


class Penalty(_Structure, kw_only=True):
    """A ranking penalty applied on abort (S11; row 84, field names not given)."""

    player_id: LocalId
    rating_change: float
    shown: ShownChange | None = None


class StatusReport(_Structure, kw_only=True):
    """Everything about one game (S12; the text's StatusReport)."""

    game_id: GameId
    configuration: GameConfiguration
    status: GameStatus
    #: Chosen here: set for a game created by invitation (EngageGameWithFriendsRequest), so a
    #: client that comes back can tell an invitation from an open game.
    invited_by: GlobalId | None = None
    players: list[StatusReportPlayer] = []
    turn: Annotated[LocalId, Meta(description="Whose turn it is (S12).")] | None = None
    active_player: (
        Annotated[LocalId, Meta(description="Who must act; differs for a robot seat (S12).")] | None
    ) = None
    turn_index: Annotated[int, Meta(ge=0)] = 0
    state: Opaque | None = None
    summary_data: Opaque | None = None
    clocks: list[PlayerClock] = []
    outcome: list[OutcomeEntry] | None = None
    outcome_not_seen: list[LocalId] = []


class PresenceUpdate(_Structure, kw_only=True):
    """One player's presence (S15; rows 17, 18 give no field names)."""

    player_id: GlobalId
    presence: Presence
    game_id: Annotated[GameId, Meta(description="Set when `presence` is IN_GAME (S15).")] | None = None


class ChatEntry(_Structure, kw_only=True):
    """A line of chat history (S14; row 35, field names not given)."""

    sender: Annotated[
        int, Meta(ge=0, description="Global id in the lobby, local id in a game; 0 = the server.")
    ]
    text: str
    code: Annotated[int, Meta(ge=0)] = 0
    sent_at: Annotated[float, Meta(description="Unix time in seconds.")]


class ObservableGame(_Structure, kw_only=True):
    """A started game one may observe (row 55: "no live data"; fields chosen here)."""

    game_id: GameId
    configuration: GameConfiguration
    players: list[SmallPlayer] = []


# --- Message bases ---------------------------------------------------------------------------------


class _Message(
    msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True, tag_field="type"
):
    """A message: one JSON object per text frame, tagged on `type` (S1)."""


class _Request(_Message):
    """Client to server; `request_id` is echoed by the direct reply (S2)."""

    request_id: RequestId | None = None


class _Reply(_Message):
    """A direct reply to a request: it echoes the request's `request_id` (S2)."""

    request_id: RequestId | None = None


class _Push(_Message):
    """Sent by the server on its own (lists, game events): no `request_id`."""


# --- General: authentication, heartbeat (rows 1-9) ----------------------------------------


class AsyncAuthRequest(_Request, tag="AsyncAuthRequest", kw_only=True):
    """Authenticate with a session token (S4; row 1).

    `name` and `sessionToken` are the text's names, flattened out of PartnerToken (S4).
    """

    name: Name
    sessionToken: Annotated[str, Meta(min_length=1, max_length=4096)]
    device: Device | None = None


class AsyncConnectedRequest(_Reply, tag="AsyncConnectedRequest", kw_only=True):
    """Authentication succeeded (row 2): the session and the full player."""

    session: Annotated[str, Meta(description="Opaque session id; compare it to tell a reconnect (row 2).")]
    player: Player


class AsyncConnectionErrorRequest(_Reply, tag="AsyncConnectionErrorRequest", kw_only=True):
    """Authentication failed, or this connection was replaced by a newer one (S4, S5; row 3).

    The text names no field; `reason` and `message` are chosen here (REPLACED is S5's).
    """

    reason: Literal["BAD_CREDENTIALS", "EXPIRED_TOKEN", "RATE_LIMITED", "REPLACED"]
    message: str = ""


class AsyncDisconnectRequest(_Request, tag="AsyncDisconnectRequest", kw_only=True):
    """Log out; later requests get UNAUTHENTICATED until the next AsyncAuthRequest (row 4, S3)."""


class AsyncUnlinkDeviceRequest(_Request, tag="AsyncUnlinkDeviceRequest", kw_only=True):
    """Stop push notifications to a device (S16; row 5, field name chosen: `device`)."""

    device: Device


class AsyncDeviceUnlinkedRequest(_Reply, tag="AsyncDeviceUnlinkedRequest", kw_only=True):
    """The device is unlinked (row 6, field name chosen: `device`)."""

    device: Device


class PingRequest(_Request, tag="PingRequest", kw_only=True):
    """Heartbeat, echoed exactly as sent (S5; row 7). Goes both ways."""

    timestamp: Annotated[int | float, Meta(description="The client's clock; any unit, echoed as sent.")]


class WhatsNewPussycatRequest(_Request, tag="WhatsNewPussycatRequest", kw_only=True):
    """Ask for the StatusReport of one's games (row 8).

    `game_id` (chosen here) asks about that one game; absent = every game.
    """

    game_id: GameId | None = None


class GameStatusReportRequest(_Reply, tag="GameStatusReportRequest", kw_only=True):
    """The reply to WhatsNewPussycatRequest (row 9; field name chosen: `status_reports`)."""

    status_reports: list[StatusReport] = []


# --- General: invitations, presence, buddies, ignore (rows 10-28) -------------------------


class EngageGameWithFriendsRequest(_Request, tag="EngageGameWithFriendsRequest", kw_only=True):
    """Create an invitation game (row 10).

    `friend_ids` (chosen here) are global ids, `0` = a robot (S6); not empty and not only robots.
    `configuration` (chosen here) lets an invitation carry clocks, idle time, ranking.
    """

    friend_ids: Annotated[list[Annotated[int, Meta(ge=0)]], Meta(min_length=1, max_length=7)]
    configuration: GameConfiguration | None = None

    def __post_init__(self) -> None:
        if not any(self.friend_ids):
            raise ValueError("`friend_ids` must name at least one human (row 10)")


class GameCreatedRequest(_Reply, tag="GameCreatedRequest", kw_only=True):
    """A game started or an invitation was created (S19; row 11).

    A direct reply for the inviter or the creator who starts early, a push for everybody else.
    """

    game_id: GameId
    invited_by: Annotated[GlobalId, Meta(description="The inviter's global id (S19).")] | None = None
    status_report: StatusReport


class AnswerInvitationRequest(_Request, tag="AnswerInvitationRequest", kw_only=True):
    """Accept or decline an invitation; one decline aborts it (S19, S20; row 12)."""

    game_id: GameId
    accept: bool


class InvitationAnsweredRequest(_Reply, tag="InvitationAnsweredRequest", kw_only=True):
    """The server's confirmation of an AnswerInvitationRequest, never a client request (S20; row 13)."""

    game_id: GameId
    accept: bool


class SwitchedToGameRequest(_Request, tag="SwitchedToGameRequest", kw_only=True):
    """The UI entered a game, or left games (absent `game_id`) (S15; row 14)."""

    game_id: GameId | None = None


class RegisterPresenceRequest(_Request, tag="RegisterPresenceRequest", kw_only=True):
    """Players whose presence to monitor; replaces the set (row 15; field name chosen)."""

    player_ids: Annotated[list[GlobalId], Meta(max_length=500)]


class SubscribePresenceServiceRequest(_Request, tag="SubscribePresenceServiceRequest", kw_only=True):
    """Subscribe to presence updates (row 16).

    `subscribe` (chosen here) mirrors AskServerStatisticsRequest: false unsubscribes.
    """

    subscribe: bool = True


class AsyncBuddyPresencePartialUpdateRequest(
    _Push, tag="AsyncBuddyPresencePartialUpdateRequest", kw_only=True
):
    """Batched presence changes of monitored players (S15; row 17; field name chosen)."""

    updates: list[PresenceUpdate]


class PlayerPresenceUpdateRequest(_Push, tag="PlayerPresenceUpdateRequest", kw_only=True):
    """Opponents' presence in a game (S15, S19; row 18; field name chosen: `updates`)."""

    game_id: GameId
    updates: list[PresenceUpdate]


class AsyncBuddyListRequest(_Request, tag="AsyncBuddyListRequest", kw_only=True):
    """Ask for one's buddy list (row 19)."""


class AsyncBuddyListContentRequest(_Reply, tag="AsyncBuddyListContentRequest", kw_only=True):
    """The buddy list (row 20; field name chosen: `buddies`)."""

    buddies: list[SmallPlayer] = []


class AsyncBuddyManagementRequest(_Request, tag="AsyncBuddyManagementRequest", kw_only=True):
    """ADD or REMOVE a buddy (row 21; field names chosen: `operation`, `player_id`)."""

    operation: Operation
    player_id: GlobalId


class AsyncBuddyAddedRequest(_Reply, tag="AsyncBuddyAddedRequest", kw_only=True):
    """A buddy was added (row 22; `player_id` chosen here)."""

    player_id: GlobalId


class AsyncBuddyRemovedRequest(_Reply, tag="AsyncBuddyRemovedRequest", kw_only=True):
    """A buddy was removed (row 23; `player_id` chosen here)."""

    player_id: GlobalId


class AsyncIgnoreListRequest(_Request, tag="AsyncIgnoreListRequest", kw_only=True):
    """Ask for one's ignore list (row 24)."""


class AsyncIgnoreListContentRequest(_Reply, tag="AsyncIgnoreListContentRequest", kw_only=True):
    """The ignore list (row 25; field name chosen: `ignored`)."""

    ignored: list[SmallPlayer] = []


class AsyncIgnoreManagementRequest(_Request, tag="AsyncIgnoreManagementRequest", kw_only=True):
    """ADD or REMOVE an ignored player (S14; row 26; field names as for buddies)."""

    operation: Operation
    player_id: GlobalId


class AsyncIgnoreAddedRequest(_Reply, tag="AsyncIgnoreAddedRequest", kw_only=True):
    """A player is now ignored (row 27; `player_id` chosen here)."""

    player_id: GlobalId


class AsyncIgnoreRemovedRequest(_Reply, tag="AsyncIgnoreRemovedRequest", kw_only=True):
    """A player is no longer ignored (row 28; `player_id` chosen here)."""

    player_id: GlobalId


# --- General: statistics and chat (rows 29-35) -------------------------------------------


class AskServerStatisticsRequest(_Request, tag="AskServerStatisticsRequest", kw_only=True):
    """Server statistics once (`subscribe` false) or regularly (true) (row 29)."""

    subscribe: bool = False


class ServerStatisticsRequest(_Reply, tag="ServerStatisticsRequest", kw_only=True):
    """Server statistics (row 30).

    `players` counts live players, connected or not; `connected_players` the connected ones.
    Pushed copies while subscribed carry no `request_id`.
    """

    hosted_games: Annotated[int, Meta(ge=0)]
    players: Annotated[int, Meta(ge=0)]
    connected_players: Annotated[int, Meta(ge=0)]


class MulticastChatRequest(_Request, tag="MulticastChatRequest", kw_only=True):
    """Chat in the lobby (`game_id` 0) or a game (S14, S20; row 31).

    `recipient_ids`: global ids in the lobby, local ids in a game, empty = everyone; the input
    alias `recipients_ids` is accepted by decode_client (S20). Codes 1-255 are the server's.
    """

    game_id: ChatScope = 0
    text: str
    recipient_ids: list[Annotated[int, Meta(ge=1)]] = []
    code: Annotated[int, Meta(ge=0)] = 0


class ClientChatRequest(_Reply, tag="ClientChatRequest", kw_only=True):
    """A chat line delivered to its recipients and echoed to the sender (S14; row 32).

    `sender` is 0 for the server's coded messages (chosen here).
    """

    game_id: ChatScope = 0
    text: str
    sender: Annotated[int, Meta(ge=0)]
    recipient_ids: list[Annotated[int, Meta(ge=1)]] = []
    code: Annotated[int, Meta(ge=0)] = 0


class ClientChatBlockedRequest(_Reply, tag="ClientChatBlockedRequest", kw_only=True):
    """The profanity filter blocked a line; `muted` after repeats (S14; row 33)."""

    game_id: ChatScope = 0
    text: str = ""
    sender: Annotated[int, Meta(ge=1)]
    muted: bool = False


class GetChatHistoryRequest(_Request, tag="GetChatHistoryRequest", kw_only=True):
    """Ask for the chat history of the lobby (0) or a game (S14; row 34)."""

    game_id: ChatScope = 0


class ClientChatHistoryRequest(_Reply, tag="ClientChatHistoryRequest", kw_only=True):
    """The last lines of a scope, never private ones (S14; row 35; `messages` chosen here)."""

    game_id: ChatScope = 0
    messages: list[ChatEntry] = []


# --- Lobby (rows 36-58) ------------------------------------------------------------------


class EnterLobbyRequest(_Request, tag="EnterLobbyRequest", kw_only=True):
    """Enter the lobby; PLAYER_ALREADY_IN_LOBBY if already there (row 36).

    `deltas` is a Parlour extension: true asks for the whole lists once, then LobbyListDeltaRequest.
    """

    deltas: Annotated[
        bool,
        Meta(
            description=f"{EXTENSION}: true = the whole lists now, then only what changes "
            "(LobbyListDeltaRequest); false = the seed's lists, capped in a large lobby."
        ),
    ] = False


class LobbyEnteredRequest(_Reply, tag="LobbyEnteredRequest", kw_only=True):
    """The lobby was entered (row 37)."""


class ExitLobbyRequest(_Request, tag="ExitLobbyRequest", kw_only=True):
    """Leave the lobby (row 38)."""


class LobbyExitedRequest(_Reply, tag="LobbyExitedRequest", kw_only=True):
    """The lobby was left, on request or because one's game started (row 39)."""


class LobbyPlayerListRequest(_Reply, tag="LobbyPlayerListRequest", kw_only=True):
    """The lobby's players by id (S13; row 40): base64 of the zlib-deflated JSON SmallPlayer array.

    Pushed when the lobby changes, at most every `async_list_interval`. In a lobby of more than
    `async_lobby_list_cap` players, a client that takes no deltas gets that many, those who have
    waited longest, then its buddies in the lobby who are not among them (at most as many again),
    each part by id. Whole on entering with `deltas` and in
    answer to GetLobbyListsRequest (both Parlour extensions), then carrying its `request_id`.
    A player's `presence` is IN_GAME while its UI is switched to a game (S15), else ONLINE.
    """

    player_list: Annotated[str, Meta(description="base64(zlib(JSON array of SmallPlayer)) (S13).")]


class LobbyGameListRequest(_Reply, tag="LobbyGameListRequest", kw_only=True):
    """The open games by id (S13; row 41): base64 of the zlib-deflated JSON ObservableGame array.

    Pushed and capped (the oldest open games) as LobbyPlayerListRequest is, whole as it is.
    """

    game_list: Annotated[str, Meta(description="base64(zlib(JSON array of ObservableGame)) (S13).")]


class GetLobbyListsRequest(_Request, tag="GetLobbyListsRequest", kw_only=True):
    """Parlour extension (not in the text): the whole lobby lists now, and how they come from then on.

    Answered by LobbyPlayerListRequest then LobbyGameListRequest, whole (never capped), both
    echoing `request_id`, whether or not one is in the lobby. `deltas` true: from now on this
    connection gets LobbyListDeltaRequest while in the lobby instead of the seed's lists; false:
    the seed's lists again; absent: as before.
    """

    deltas: bool | None = None


class LobbyListDeltaRequest(_Push, tag="LobbyListDeltaRequest", kw_only=True):
    """Parlour extension (not in the text): what changed in the lobby lists since the last push.

    Sent to those who asked for deltas (EnterLobbyRequest `deltas`, GetLobbyListsRequest), at most
    every `async_list_interval`, one message for them all. Apply it to the whole lists received
    last: put each of `players` and `games` in place of the entry with its id (or add it), drop the
    ids in `left` and `closed`. An id may be named that the client never had (a player who came and
    went between two pushes): skip it. `player_count` and `game_count` are the sizes of the lists
    after it; a client that finds others asks again with GetLobbyListsRequest.
    """

    players: Annotated[list[SmallPlayer], Meta(description="Entered, or changed presence.")] = []
    left: Annotated[list[GlobalId], Meta(description="Left the lobby.")] = []
    games: Annotated[list[ObservableGame], Meta(description="Opened, or a seat taken or freed.")] = []
    closed: Annotated[list[GameId], Meta(description="No longer open: started or aborted.")] = []
    player_count: Annotated[int, Meta(ge=0)]
    game_count: Annotated[int, Meta(ge=0)]


class AskPlayerInfoRequest(_Request, tag="AskPlayerInfoRequest", kw_only=True):
    """Ask for a player's details (row 42; `player_id` chosen here)."""

    player_id: GlobalId


class LobbyPlayerInfoRequest(_Reply, tag="LobbyPlayerInfoRequest", kw_only=True):
    """A player's details (row 43)."""

    player: Player


class LobbyJoinGameRequest(_Request, tag="LobbyJoinGameRequest", kw_only=True):
    """Join an open game; `password` for a private one (S19; row 44)."""

    game_id: GameId
    password: Annotated[str, Meta(max_length=128)] | None = None


class LobbyNewPlayerRequest(_Reply, tag="LobbyNewPlayerRequest", kw_only=True):
    """A player joined an open game: the joiner's reply, a push to the others (row 45).

    Fields chosen here: who joined and the seat they got (S6).
    """

    game_id: GameId
    player: SmallPlayer
    local_id: LocalId


class LobbyJoinDeniedRequest(_Reply, tag="LobbyJoinDeniedRequest", kw_only=True):
    """A join was refused (row 46): `cause` as in LobbyStartGameDeniedRequest.

    The text lists no JoinError values; these are Parlour's.
    """

    game_id: GameId
    cause: Literal[
        "UNKNOWN_GAME", "GAME_FULL", "ALREADY_STARTED", "ALREADY_JOINED", "WRONG_PASSWORD", "TOO_MANY_GAMES"
    ]


class LobbyCreateGameRequest(_Request, tag="LobbyCreateGameRequest", kw_only=True):
    """Create an open game; the creator takes seat 1 (S7, S19; row 47)."""

    configuration: GameConfiguration
    initial_state: Opaque | None = None
    initial_summary: Opaque | None = None


class LobbyGameCreatedRequest(_Reply, tag="LobbyGameCreatedRequest", kw_only=True):
    """The open game was created (S19; row 48)."""

    game_id: GameId
    configuration: GameConfiguration


class LobbyLeaveGameRequest(_Request, tag="LobbyLeaveGameRequest", kw_only=True):
    """Leave an open game before it starts; the creator leaving aborts it (S19; row 49)."""

    game_id: GameId


class LobbyPlayerLeftGameRequest(_Reply, tag="LobbyPlayerLeftGameRequest", kw_only=True):
    """A player left an open game (row 50).

    Fields chosen here: `player_id` (global), and `aborted` when the creator left.
    """

    game_id: GameId
    player_id: GlobalId
    aborted: bool = False


class LobbyStartGameRequest(_Request, tag="LobbyStartGameRequest", kw_only=True):
    """The creator starts early, once `min_players` joined (S19; row 51)."""

    game_id: GameId


class LobbyStartGameDeniedRequest(_Reply, tag="LobbyStartGameDeniedRequest", kw_only=True):
    """An early start was refused (row 52; StartError values are Parlour's)."""

    game_id: GameId
    cause: Literal["UNKNOWN_GAME", "NOT_CREATOR", "NOT_ENOUGH_PLAYERS", "ALREADY_STARTED"]


class SubscribeToObservableGameListRequest(
    _Request, tag="SubscribeToObservableGameListRequest", kw_only=True
):
    """Subscribe (true) or unsubscribe (false) to the observable games (row 53)."""

    subscribe: bool


class SubscribedToObservableGameListRequest(
    _Reply, tag="SubscribedToObservableGameListRequest", kw_only=True
):
    """Mirrors the subscription (row 54)."""

    subscribed: bool


class ObservableGameListRequest(_Push, tag="ObservableGameListRequest", kw_only=True):
    """The games one may observe, without live data (S17; row 55; `games` chosen here)."""

    games: list[ObservableGame] = []


class StartObserveGameRequest(_Request, tag="StartObserveGameRequest", kw_only=True):
    """Start observing a game (S17; row 56)."""

    game_id: GameId


class StopObserveGameRequest(_Request, tag="StopObserveGameRequest", kw_only=True):
    """Stop observing a game (row 57)."""

    game_id: GameId


class GameObservedRequest(_Reply, tag="GameObservedRequest", kw_only=True):
    """The reply to Start/StopObserveGameRequest (S17; row 58).

    The text names the seven refusals but not their statuses; these names are Parlour's.
    `observing` (chosen here) tells a start from a stop; the StatusReport comes with OK.
    """

    game_id: GameId
    status: Literal[
        "OK",
        "PLAYING_IN_GAME",
        "PRIVATE_GAME",
        "NOT_OBSERVABLE",
        "BUDDIES_ONLY",
        "NOT_IN_LOBBY",
        "GAME_NOT_RUNNING",
        "UNKNOWN_GAME",
    ]
    observing: bool = False
    status_report: StatusReport | None = None


# --- In game: turns (rows 59-67) ---------------------------------------------------------


class ActionRequiredRequest(_Push, tag="ActionRequiredRequest", kw_only=True):
    """It is this seat's turn: also sent to observers, the merger and the interruption resolver (row 59).

    `player_id` (chosen here) is the seat that must act. With `rules` a plugin (S9), `state` is the
    seat's view (hidden parts removed, also for observers) and `legal_actions` lists what it may commit.
    """

    game_id: GameId
    player_id: LocalId
    state: Opaque
    turn_index: TurnIndex
    player_clock: PlayerClock
    pause_time: Seconds = 0
    user_data: list[PlayerData] | None = None
    interruption_data: list[PlayerData] | None = None
    legal_actions: list[str] | None = None


class CommitActionRequest(_Request, tag="CommitActionRequest", kw_only=True):
    """Commit a turn (row 60; S9, S19, S20).

    `next_state` with `rules: client`; `action` (one of `legal_actions`) with a plugin (S9).
    `turn_index` is the index of the turn being committed; absent = not checked.
    `player_id` when playing a robot seat. Simultaneous turns and interruptions do not combine.
    """

    game_id: GameId
    turn_index: TurnIndex | None = None
    next_state: Opaque | None = None
    action: str | None = None
    next_players: list[LocalId] = []
    next_summary_data: Opaque | None = None
    player_id: LocalId | None = None
    broadcast: bool = False
    pause_time: Seconds = 0
    idle_time: Annotated[Seconds, Meta(description="Overrides the idle timer for the next turn.")] | None = (
        None
    )
    next_simultaneous: bool = False
    simultaneous_players: list[LocalId] = []
    interruption_window_duration: Milliseconds = 0
    interruption_players: list[LocalId] = []

    def __post_init__(self) -> None:
        if self.next_state is not None and self.action is not None:
            raise ValueError("`action` and `next_state` exclude each other (S9)")
        if self.next_simultaneous and self.interruption_window_duration:
            raise ValueError(
                "`interruption_window_duration` cannot be combined with `next_simultaneous` (row 60)"
            )


class ActionCommitedRequest(_Reply, tag="ActionCommitedRequest", kw_only=True):
    """A commit was stored (S10); `turn_index` is the committed index + 1 (S20; row 61)."""

    game_id: GameId
    turn_index: TurnIndex
    pause_time: Seconds = 0


class GameStateUpdatedRequest(_Push, tag="GameStateUpdatedRequest", kw_only=True):
    """A broadcast commit's new state, or the start of an interruption window (row 62).

    `player_id` (chosen here) is the seat that committed.
    """

    game_id: GameId
    state: Opaque
    turn_index: TurnIndex
    player_id: LocalId | None = None
    interruption_window_duration: Milliseconds = 0


class ClockPausedRequest(_Push, tag="ClockPausedRequest", kw_only=True):
    """The next seat's clock is paused after a commit (S8; row 63; fields chosen here)."""

    game_id: GameId
    pause_time: Seconds
    player_ids: list[LocalId] = []


class ClockResumedRequest(_Push, tag="ClockResumedRequest", kw_only=True):
    """The pause is over; every seat's clock (row 64; `clocks` chosen here)."""

    game_id: GameId
    clocks: list[PlayerClock]


class PlayerIdleProgressRequest(_Push, tag="PlayerIdleProgressRequest", kw_only=True):
    """Idle timer progress at 50, 75 and 100 % (row 65)."""

    game_id: GameId
    progress: Literal[50, 75, 100]
    player_ids: list[LocalId]


class PlayerTimeoutRequest(_Push, tag="PlayerTimeoutRequest", kw_only=True):
    """Play as a robot for `offender_id` (row 66).

    `offender_id` is one seat (one message per seat). `status` is why: IDLE is the
    text's, the others name row 66's causes. `expected` (chosen here) says whether a commit or a
    user-data update is wanted (an absent simultaneous player).
    """

    game_id: GameId
    offender_id: LocalId
    status: Literal["IDLE", "FORFEITED", "TIMED_OUT", "LEFT", "ROBOT", "ABSENT"]
    state: Opaque
    turn_index: TurnIndex
    expected: Literal["CommitActionRequest", "UpdateUserDataRequest"] = "CommitActionRequest"
    user_data: list[PlayerData] | None = None
    interruption_data: list[PlayerData] | None = None


class ErrorRequest(_Reply, tag="ErrorRequest", kw_only=True):
    """Any refused request (S3; row 67).

    `request_type` is the refused message's `type` when it could be read. A bad request never
    closes the connection (S3).
    """

    code: ErrorCode
    message: str
    request_type: str | None = None
    game_id: GameId | None = None


# --- In game: simultaneous turns, interruptions, multicast (rows 68-77) ------------------


class UserDataUpdateRequiredRequest(_Push, tag="UserDataUpdateRequiredRequest", kw_only=True):
    """A simultaneous turn asks this seat for its user data (row 68)."""

    game_id: GameId
    state: Opaque
    turn_index: TurnIndex
    pause_time: Seconds = 0


class UpdateUserDataRequest(_Request, tag="UpdateUserDataRequest", kw_only=True):
    """This seat's contribution to a simultaneous turn (row 69).

    The text writes `data` and `user_data`; S20 settles on `user_data`.
    """

    game_id: GameId
    user_data: Opaque
    turn_index: TurnIndex | None = None
    player_id: LocalId | None = None
    broadcast: bool = False


class UserDataUpdatedRequest(_Reply, tag="UserDataUpdatedRequest", kw_only=True):
    """Confirms an UpdateUserDataRequest (S20; row 70)."""

    game_id: GameId
    turn_index: TurnIndex | None = None


class GameUserDataUpdatedRequest(_Push, tag="GameUserDataUpdatedRequest", kw_only=True):
    """A broadcast user-data update, to the other players and observers (row 71)."""

    game_id: GameId
    player: LocalId
    user_data: Opaque


class InterruptActionRequest(_Request, tag="InterruptActionRequest", kw_only=True):
    """Interrupt a turn inside its window (row 72; S20 spelling `interruption_data`).

    `turn` is the interrupted seat; `no_more_interruption` (placed here) declines to interrupt.
    """

    game_id: GameId
    turn_index: TurnIndex
    turn: LocalId
    interruption_data: Opaque = ""
    no_more_interruption: bool = False


class ActionInterruptedRequest(_Reply, tag="ActionInterruptedRequest", kw_only=True):
    """An accepted interruption, to all players (row 73; `player_id` = the interrupter, chosen)."""

    game_id: GameId
    turn_index: TurnIndex
    turn: LocalId
    player_id: LocalId
    interruption_data: Opaque


class InterruptionOverRequest(_Push, tag="InterruptionOverRequest", kw_only=True):
    """The interruption window is over (row 74)."""

    game_id: GameId
    turn_index: TurnIndex


class InterruptActionErrorRequest(_Reply, tag="InterruptActionErrorRequest", kw_only=True):
    """An interruption was refused (row 75; `reason` chosen here)."""

    game_id: GameId
    turn_index: TurnIndex
    reason: Literal["WINDOW_CLOSED", "NOT_ALLOWED", "ALREADY_INTERRUPTED"]


class MulticastDataRequest(_Request, tag="MulticastDataRequest", kw_only=True):
    """Transient data to present players, without touching the state (row 76; S20).

    `recipient_ids` are local ids, empty = all present players; alias `recipients_ids` accepted.
    `notification` (text's name) is a short text pushed to non-present recipients.
    """

    game_id: GameId
    data: Opaque
    recipient_ids: list[LocalId] = []
    notification: Annotated[str, Meta(max_length=200)] | None = None


class ClientDataRequest(_Push, tag="ClientDataRequest", kw_only=True):
    """Multicast data delivered (row 77; `sender` chosen here)."""

    game_id: GameId
    sender: LocalId
    data: Opaque


# --- In game: forfeit, game over, abort, clocks (rows 78-87) -----------------------------


class GameForfeitRequest(_Request, tag="GameForfeitRequest", kw_only=True):
    """Forfeit a game (or an invitation) (S19; row 78)."""

    game_id: GameId


class GameForfeitedRequest(_Reply, tag="GameForfeitedRequest", kw_only=True):
    """A seat forfeited (row 79; `player_id` chosen here)."""

    game_id: GameId
    player_id: LocalId


class PlayerReplacedRequest(_Push, tag="PlayerReplacedRequest", kw_only=True):
    """A robot plays this seat from now on (row 80; fields chosen here)."""

    game_id: GameId
    player_id: LocalId
    reason: Literal["FORFEITED", "TIMED_OUT"]


class GameOverRequest(_Request, tag="GameOverRequest", kw_only=True):
    """End the game with its scores (S11, S19; row 81).

    `finalScores` maps every seat (as a JSON string key) to `[score, rank]`. `is_ranked` absent =
    the configuration's `ranked`. `final_state` (chosen here) is the state with bonuses.
    """

    game_id: GameId
    finalScores: dict[
        Annotated[str, Meta(pattern=r"^[1-8]$")],
        tuple[int | float, Annotated[int, Meta(ge=1, le=8)]],
    ]
    is_ranked: bool | None = None
    final_state: Opaque | None = None
    turn_index: TurnIndex | None = None


class GameOutcomeRequest(_Push, tag="GameOutcomeRequest", kw_only=True):
    """The outcome, to all players and observers (S11; row 82; fields chosen here)."""

    game_id: GameId
    outcome: list[OutcomeEntry]
    is_ranked: bool = False


class GameOutcomeConfirmationRequest(_Request, tag="GameOutcomeConfirmationRequest", kw_only=True):
    """This player saw the outcome (S11; row 83)."""

    game_id: GameId


class GameAbortedRequest(_Push, tag="GameAbortedRequest", kw_only=True):
    """The game aborted; `penalties` for a ranked one (S11; row 84; field name chosen)."""

    game_id: GameId
    penalties: list[Penalty] = []


class GameAbortedConfirmationRequest(_Request, tag="GameAbortedConfirmationRequest", kw_only=True):
    """This player saw the abort (row 85)."""

    game_id: GameId


class GetClocksRequest(_Request, tag="GetClocksRequest", kw_only=True):
    """Ask for a game's clocks (S19; row 86)."""

    game_id: GameId


class ClocksStatusRequest(_Reply, tag="ClocksStatusRequest", kw_only=True):
    """Every seat's clock (row 87; `clocks` chosen here)."""

    game_id: GameId
    clocks: list[PlayerClock]


# --- Quick play: matchmaking queues (Parlour extensions; docs/async.md "Quick play") ---------------

#: The rating scale of the queues: OpenSkill's mu, what the ratings of Player hold before the
#: ordinal is taken (docs/async.md "Quick play").
QueueRating = Annotated[
    float, Meta(description="OpenSkill mu for this game type (25 before any rated game).")
]


class QueueEntry(_Structure, kw_only=True):
    """Parlour extension: one queue a player waits in, as QuickPlayStatusRequest shows it."""

    game_type: Annotated[str, Meta(description="The game (a server-rules plugin, as `rules`).")]
    seats: Annotated[int, Meta(ge=2, le=8)]
    ranked: bool = False
    waited_seconds: Annotated[float, Meta(ge=0, description="Since the player joined this queue.")]
    rating: QueueRating
    window_low: Annotated[float, Meta(description="The lowest rating a partner may have now.")]
    window_high: Annotated[float, Meta(description="The highest rating a partner may have now.")]
    robots_in_seconds: (
        Annotated[
            float,
            Meta(ge=0, description="When robots may fill the empty seats (0: now); absent: never."),
        ]
        | None
    ) = None
    shown_low: (
        Annotated[
            int, Meta(description="`window_low` on the scale people read (docs/ratings.md: 1500 = mu 25).")
        ]
        | None
    ) = None
    shown_high: Annotated[int, Meta(description="`window_high` on the scale people read.")] | None = None


class QuickPlayJoinRequest(_Request, tag="QuickPlayJoinRequest", kw_only=True):
    """Parlour extension (not in the text): wait in a queue for a game of `game_type` with `seats` seats.

    Answered by QuickPlayStatusRequest (every queue one is in). Players are paired by their rating
    for `game_type` within a window that widens as they wait; a player may wait in several queues
    at once, and the first match ends all of them (QuickPlayMatchedRequest). With `robots_after`,
    robots take the seats no partner took once the player has waited that many seconds; absent:
    only people. Refused: an unknown `game_type` or a seat count it is not played by
    (BAD_REQUEST), a queue one is in already (ALREADY_QUEUED), too many games or queues
    (TOO_MANY_OFFERS). A queue lives as long as the player stays signed in: signing out, or a
    server restart, ends it, and the client queues again.
    """

    game_type: Annotated[
        str, Meta(pattern=r"^[a-z0-9_-]{1,32}$", description="A server-rules game (`rules`): fish, tsuro...")
    ]
    seats: Annotated[int, Meta(ge=2, le=8)]
    ranked: bool = False
    robots_after: Annotated[Seconds, Meta(description="Robots may fill seats after this wait.")] | None = None


class QuickPlayLeaveRequest(_Request, tag="QuickPlayLeaveRequest", kw_only=True):
    """Parlour extension (not in the text): leave the queues that match the fields given (none: every queue).

    Answered by QuickPlayStatusRequest (the queues one is still in); NOT_QUEUED if one was in none
    of them.
    """

    game_type: Annotated[str, Meta(pattern=r"^[a-z0-9_-]{1,32}$")] | None = None
    seats: Annotated[int, Meta(ge=2, le=8)] | None = None
    ranked: bool | None = None


class QuickPlayStatusRequest(_Reply, tag="QuickPlayStatusRequest", kw_only=True):
    """Parlour extension (not in the text): the queues a player waits in.

    The answer to QuickPlayJoinRequest and QuickPlayLeaveRequest (with their `request_id`), and
    pushed every few seconds while one waits (the time waited, the rating window as it widens).
    `ended` says why the server took a player out of every queue without being asked:
    SERVER_STOPPING (a restart: queue again once connected), TOO_MANY_GAMES (the player's
    games reached the limit while waiting).
    """

    queues: list[QueueEntry] = []
    ended: Literal["SERVER_STOPPING", "TOO_MANY_GAMES"] | None = None


class QuickPlayMatchedRequest(_Push, tag="QuickPlayMatchedRequest", kw_only=True):
    """Parlour extension (not in the text): a queue found a game; every other queue of the player ended.

    Follows the game's GameCreatedRequest (the game has started, every seat taken: partners from
    the queue, then robots for the rest).
    """

    game_id: GameId
    game_type: str
    seats: Annotated[int, Meta(ge=2, le=8)]
    ranked: bool = False
    waited_seconds: Annotated[float, Meta(ge=0)]
    robots: Annotated[int, Meta(ge=0, description="How many seats robots took.")] = 0


# --- Unions, decoding, encoding --------------------------------------------------------------------

#: Client to server, in catalogue order; PingRequest goes both ways (row 7).
ClientMessage: TypeAlias = (
    AsyncAuthRequest
    | AsyncDisconnectRequest
    | AsyncUnlinkDeviceRequest
    | PingRequest
    | WhatsNewPussycatRequest
    | EngageGameWithFriendsRequest
    | AnswerInvitationRequest
    | SwitchedToGameRequest
    | RegisterPresenceRequest
    | SubscribePresenceServiceRequest
    | AsyncBuddyListRequest
    | AsyncBuddyManagementRequest
    | AsyncIgnoreListRequest
    | AsyncIgnoreManagementRequest
    | AskServerStatisticsRequest
    | MulticastChatRequest
    | GetChatHistoryRequest
    | EnterLobbyRequest
    | ExitLobbyRequest
    | AskPlayerInfoRequest
    | LobbyJoinGameRequest
    | LobbyCreateGameRequest
    | LobbyLeaveGameRequest
    | LobbyStartGameRequest
    | SubscribeToObservableGameListRequest
    | StartObserveGameRequest
    | StopObserveGameRequest
    | GetLobbyListsRequest
    | CommitActionRequest
    | UpdateUserDataRequest
    | InterruptActionRequest
    | MulticastDataRequest
    | GameForfeitRequest
    | GameOverRequest
    | GameOutcomeConfirmationRequest
    | GameAbortedConfirmationRequest
    | GetClocksRequest
    | QuickPlayJoinRequest
    | QuickPlayLeaveRequest
)

#: Server to client, in catalogue order; PingRequest goes both ways (row 7).
ServerMessage: TypeAlias = (
    AsyncConnectedRequest
    | AsyncConnectionErrorRequest
    | AsyncDeviceUnlinkedRequest
    | PingRequest
    | GameStatusReportRequest
    | GameCreatedRequest
    | InvitationAnsweredRequest
    | AsyncBuddyPresencePartialUpdateRequest
    | PlayerPresenceUpdateRequest
    | AsyncBuddyListContentRequest
    | AsyncBuddyAddedRequest
    | AsyncBuddyRemovedRequest
    | AsyncIgnoreListContentRequest
    | AsyncIgnoreAddedRequest
    | AsyncIgnoreRemovedRequest
    | ServerStatisticsRequest
    | ClientChatRequest
    | ClientChatBlockedRequest
    | ClientChatHistoryRequest
    | LobbyEnteredRequest
    | LobbyExitedRequest
    | LobbyPlayerListRequest
    | LobbyGameListRequest
    | LobbyPlayerInfoRequest
    | LobbyNewPlayerRequest
    | LobbyJoinDeniedRequest
    | LobbyGameCreatedRequest
    | LobbyPlayerLeftGameRequest
    | LobbyStartGameDeniedRequest
    | SubscribedToObservableGameListRequest
    | ObservableGameListRequest
    | GameObservedRequest
    | LobbyListDeltaRequest
    | ActionRequiredRequest
    | ActionCommitedRequest
    | GameStateUpdatedRequest
    | ClockPausedRequest
    | ClockResumedRequest
    | PlayerIdleProgressRequest
    | PlayerTimeoutRequest
    | ErrorRequest
    | UserDataUpdateRequiredRequest
    | UserDataUpdatedRequest
    | GameUserDataUpdatedRequest
    | ActionInterruptedRequest
    | InterruptionOverRequest
    | InterruptActionErrorRequest
    | ClientDataRequest
    | GameForfeitedRequest
    | PlayerReplacedRequest
    | GameOutcomeRequest
    | GameAbortedRequest
    | ClocksStatusRequest
    | QuickPlayStatusRequest
    | QuickPlayMatchedRequest
)


def _members(union: Any) -> tuple[type[msgspec.Struct], ...]:
    return tuple(union.__args__)


#: The messages Parlour adds to the text's 87 (each says so in its first line).
EXTENSIONS: Final[tuple[type[msgspec.Struct], ...]] = (
    GetLobbyListsRequest,
    LobbyListDeltaRequest,
    QuickPlayJoinRequest,
    QuickPlayLeaveRequest,
    QuickPlayStatusRequest,
    QuickPlayMatchedRequest,
)

#: Every message class, each once: the client ones, then the server-only ones.
MESSAGES: Final[tuple[type[msgspec.Struct], ...]] = tuple(
    dict.fromkeys(_members(ClientMessage) + _members(ServerMessage))
)

_decoder: Final[msgspec.json.Decoder[ClientMessage]] = msgspec.json.Decoder(ClientMessage)
_encoder: Final = msgspec.json.Encoder()

# S20: `recipients_ids` is accepted on input for `recipient_ids`. A msgspec field has one name on
# the wire, so decode_client renames the key before validation, and only when the bytes mention the
# alias at all: the common path stays a single typed decode.
_ALIAS: Final = "recipients_ids"
_CANONICAL: Final = "recipient_ids"
_ALIAS_BYTES: Final = _ALIAS.encode()
_ALIASED_TYPES: Final = frozenset(
    str(cls.__struct_config__.tag) for cls in _members(ClientMessage) if _CANONICAL in cls.__struct_fields__
)


def decode_client(data: bytes | str) -> ClientMessage:
    """One client frame as its message.

    Raises msgspec.DecodeError (not JSON) or msgspec.ValidationError (unknown `type`, unknown or
    ill-typed field, out-of-range value; the message names the field): the caller answers both with
    ErrorRequest BAD_REQUEST (S3).
    """
    if (_ALIAS not in data) if isinstance(data, str) else (_ALIAS_BYTES not in data):
        return _decoder.decode(data)
    obj = msgspec.json.decode(data)
    if isinstance(obj, dict) and _ALIAS in obj and obj.get("type") in _ALIASED_TYPES:
        if _CANONICAL in obj:
            raise msgspec.ValidationError(f"Object has both `{_CANONICAL}` and its alias `{_ALIAS}`")
        obj[_CANONICAL] = obj.pop(_ALIAS)
    message: ClientMessage = msgspec.convert(obj, ClientMessage)
    return message


def encode(message: ClientMessage | ServerMessage) -> bytes:
    """A message as the JSON text of one websocket frame (S1)."""
    return _encoder.encode(message)
