"""What the store keeps: plain rows, the same for every backend (no SQL here).

The core builds these rows from its live records and gives them to the transport in a
``Store`` effect; the transport commits every row of one loop iteration in one transaction
before it releases the messages that reveal them (DESIGN.md, "stored before shown").
A game is kept as its configuration, its seed and its moves: replaying the moves from the seed
rebuilds every state the players saw. A live game also keeps a snapshot of its state every few
moves (GameSnapshotRow), so that a restart replays only the moves after it, however long the game.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec

__all__ = [
    "ADMIN_ROLE",
    "ASYNC_FINISHED_STATUSES",
    "EXPORT_KINDS",
    "KINDS",
    "RELATION_KINDS",
    "SNAPSHOT_VERSION",
    "STORE_META_KEYS",
    "AccountErased",
    "AccountRow",
    "AccountSeen",
    "AsyncGameRow",
    "AsyncTurnRow",
    "AuditRow",
    "ChatRow",
    "DeviceGone",
    "DeviceRow",
    "Fence",
    "GameResultRow",
    "GameRow",
    "GameSnapshotRow",
    "Heartbeat",
    "Kind",
    "MetaRow",
    "MoveRow",
    "NotificationRow",
    "Opponent",
    "PlayerGone",
    "PlayerRow",
    "RatingRow",
    "Record",
    "RelationGone",
    "RelationRow",
    "ReportRow",
    "SeatRow",
    "Snapshot",
]

#: Game states as stored. ADVERTISED and PLAYING are "live": loaded again after a restart.
LIVE_STATES = ("ADVERTISED", "PLAYING")
#: Kinds of move rows: a move chosen from the legal moves, or a seat taken out of play.
MOVE, REMOVE_SEAT = "move", "remove"


class PlayerRow(msgspec.Struct, frozen=True):
    """A registered Apologies player (its id is a secret: never logged)."""

    id: str
    handle: str
    registered: float
    last_active: float


class PlayerGone(msgspec.Struct, frozen=True):
    """A player unregistered: its row is deleted."""

    id: str


class SeatRow(msgspec.Struct, frozen=True, omit_defaults=True):
    handle: str
    robot: bool
    #: JOINED, PLAYING, QUIT or FINISHED (Fish and Tsuro: PLAYING or QUIT).
    state: str
    #: The human's player id while it sits here (Apologies only).
    player_id: str | None = None
    #: Per-seat facts a protocol needs again, e.g. a Fish player's age.
    extra: dict[str, Any] = {}


class GameRow(msgspec.Struct, frozen=True, omit_defaults=True):
    """One game of any protocol, whole: saved again whenever it changes."""

    id: str
    #: The protocol it was played over (apologies, fish, tsuro) and the rules plugin's name.
    protocol: str
    game: str
    name: str
    #: ADVERTISED, PLAYING, COMPLETED, CANCELLED or ABORTED.
    state: str
    created: float
    last_active: float
    #: The seed of the game's own random source: new_game and every apply draw from it alone.
    seed: int
    #: How many moves the game had when this row was written. Rows are written when a game's
    #: configuration, seats or state change, not on every move (a move is one moves row): for
    #: a finished game this is every move, for a live one the moves rows are the count.
    moves: int = 0
    started: float | None = None
    finished: float | None = None
    #: Everything the protocol needs to rebuild the game: options, seat count, visibility...
    config: dict[str, Any] = {}
    seats: list[SeatRow] = []
    #: How it ended: winners (seat numbers), reason, comment.
    result: dict[str, Any] | None = None


class MoveRow(msgspec.Struct, frozen=True):
    """One accepted move: ``choice`` indexes the legal moves of ``seat`` at that point."""

    game_id: str
    seq: int
    seat: int
    kind: str
    choice: int
    at: float


#: The encoding of game snapshots this build writes and reads. A build that changes it (the core's
#: or a rules plugin's layout of a state) numbers it anew: snapshots of another encoding are not
#: loaded, and their games are rebuilt from every move, as before snapshots existed.
SNAPSHOT_VERSION = 1


class GameSnapshotRow(msgspec.Struct, frozen=True):
    """A live game's state after its first ``moves`` moves, in ``doc`` (the core's encoding,
    opaque to the store, of encoding ``version``). Upserted: a game keeps its latest snapshot
    while it is live, and the store deletes it when the game's row says it ended. The moves stay
    rows of their own all the same: they are the game's replay."""

    game_id: str
    moves: int
    version: int
    doc: bytes


# ---------------------------------------------------------------------------------------------
# The /async protocol (docs/async-decisions.md): accounts, games, turns, ratings (schema v3)

#: Statuses of an /async game that are over: the rest are "live", loaded again after a restart.
ASYNC_FINISHED_STATUSES = ("OVER", "ABORTED")
#: ``parlour_meta`` keys the store itself owns: a MetaRow may not write them.
STORE_META_KEYS = frozenset({"application", "version", "schema_version", "heartbeat"})
#: The longest key ``parlour_meta`` holds (its column is a VARCHAR(64)).
META_KEY_CHARS = 64


class AccountRow(msgspec.Struct, frozen=True):
    """An /async account (S4), upserted whole. The id is allocated by the server core.

    ``password_hash`` is an Argon2id hash, or "" for an account of an external OAuth2/OIDC
    provider (it never logs in with a password). The store keeps names unique case-insensitively.
    """

    id: int
    name: str
    password_hash: str
    created: float
    #: ``"admin"`` for an operator (``parlour admin grant``), else "". The store keeps it as
    #: first written: only ``Store.set_role`` changes it, so the server's own upserts of an
    #: account (a ban, a new password) never undo a grant made on its store meanwhile.
    role: str = ""
    #: The account's revocation counter: a session token carries the value it was issued under
    #: and is refused once the counter has moved on (sign out everywhere, a ban, a new password).
    revision: int = 0
    #: Why the account is banned ("" when it is not), and until when (None: for good).
    ban_reason: str = ""
    ban_until: float | None = None
    #: When the account last signed in or out (None: not since this column was added).
    last_seen: float | None = None


#: The role of an operator's account (``AccountRow.role``).
ADMIN_ROLE = "admin"


class AuditRow(msgspec.Struct, frozen=True):
    """One thing an admin did: who (``actor``, an account's name, or ``cli`` for
    ``parlour admin``), what (``action``, e.g. ``ban``), to whom or what (``target``: a name, a
    game, a report), when, why (``reason``, as given) and the rest as JSON text (``detail``).
    ``id`` is unique and sorts as ``at`` does. Only ever inserted."""

    id: str
    at: float
    actor: str
    action: str
    target: str
    reason: str
    detail: str


class AsyncGameRow(msgspec.Struct, frozen=True):
    """One /async game, whole, saved again whenever it changes.

    ``doc`` is opaque to the store: the core's own encoding of the game. ``status`` is the
    text's (NOT_STARTED, running, OUTCOME, OVER, ABORTING, ABORTED); OVER and ABORTED are over.
    """

    id: int
    game_type: str
    status: str
    created: float
    updated: float
    doc: bytes


class AsyncTurnRow(msgspec.Struct, frozen=True):
    """One committed turn of an /async game (S10: every turn is kept, the game's replay)."""

    game_id: int
    turn_index: int
    at: float
    doc: bytes


class RatingRow(msgspec.Struct, frozen=True):
    """An account's rating at one game type (S11). ``ordinal`` is the conservative estimate
    leaderboards sort by (with OpenSkill, ``mu - 3 * sigma``), computed by whoever rates."""

    account_id: int
    game_type: str
    mu: float
    sigma: float
    games: int
    updated: float
    ordinal: float


class GameResultRow(msgspec.Struct, frozen=True):
    """One seat of an /async game that ended (players' profiles), written with the
    game's end: its rank and score, and the seat's rating at the game type after the game when
    the game changed it (a ranked game, an abort's penalty). Written again (replaced) if the
    game ends again.

    An aborted game has no ranks: ``rank`` and ``score`` are None. ``account_id`` is None for a
    robot's seat; ``name`` is the seat's name (kept for robots; an account's current name is
    its row's, and anonymising an account rewrites it here too). ``change`` is the ordinal's
    change (OutcomeEntry.rating_change); the rating shown is computed from ``mu`` and ``games``
    (parlour.core.rating_scale), so that the history follows the scale if it is ever retuned.
    """

    game_id: int
    seat: int
    game_type: str
    at: float
    account_id: int | None
    name: str
    rank: int | None = None
    score: float | None = None
    mu: float | None = None
    sigma: float | None = None
    games: int | None = None
    change: float | None = None


class Opponent(msgspec.Struct, frozen=True):
    """Not a row: an account's record against one opponent over the games that ended with ranks
    (``Store.opponents``). ``account_id`` is None for a robot, known by its seat's name."""

    account_id: int | None
    name: str
    wins: int
    losses: int
    draws: int


class MetaRow(msgspec.Struct, frozen=True):
    """A value kept in ``parlour_meta`` (upserted). The store's own keys are refused."""

    key: str
    value: str

    def __post_init__(self) -> None:
        if self.key in STORE_META_KEYS:
            raise ValueError(f"parlour_meta key {self.key!r} belongs to the store")
        if not 0 < len(self.key) <= META_KEY_CHARS:
            raise ValueError(f"a parlour_meta key has 1 to {META_KEY_CHARS} characters")


class Heartbeat(msgspec.Struct, frozen=True):
    """Not a row: the server was alive at ``at`` (the store's own ``heartbeat`` meta value).
    Committed with the records of its loop iteration, by whoever commits them: a transaction of
    its own on another connection would take SQLite's write lock from the writer process, whose
    commits would then wait out SQLite's busy back-off (tens of milliseconds)."""

    at: float


class Fence(msgspec.Struct, frozen=True):
    """Not a row: a condition on the transaction it is committed in, which is refused whole
    (StoreFailure ``Fenced``) unless ``parlour_meta[key]`` holds ``value``. A cluster node's
    commits carry the fencing token of each service it owns, so that once another node has
    claimed a service (written its own token) nothing the old owner still sends is stored."""

    key: str
    value: str


# ---------------------------------------------------------------------------------------------
# The /async protocol's social side and push notifications (schema v4; S14, S15, S16)

#: The kinds of a RelationRow: a buddy (S15) or an ignored player (S14).
RELATION_KINDS = ("buddy", "ignore")


class ChatRow(msgspec.Struct, frozen=True):
    """One public chat line (S14; private lines are never stored). ``scope`` is 0 for the lobby,
    else a game id; ``seq`` numbers a scope's lines from 1, allocated by the server core.
    ``sender`` is the global id (0: the server) and ``sender_name`` its name when it was sent."""

    scope: int
    seq: int
    sender: int
    sender_name: str
    text: str
    code: int
    sent_at: float


class RelationRow(msgspec.Struct, frozen=True):
    """``owner`` lists ``other`` as a buddy or ignores it (``kind``, one of RELATION_KINDS);
    upserted, a row's first ``added`` is kept."""

    owner: int
    other: int
    kind: str
    added: float

    def __post_init__(self) -> None:
        if self.kind not in RELATION_KINDS:
            raise ValueError(f"a relation is one of {', '.join(RELATION_KINDS)}, not {self.kind!r}")


class RelationGone(msgspec.Struct, frozen=True):
    """A relation removed: its row is deleted."""

    owner: int
    other: int
    kind: str


class ReportRow(msgspec.Struct, frozen=True):
    """A ``/report NAME`` (S14): who reported, the name as typed (nothing checks it), the chat
    scope it was typed in, the rest of the line, and when. Only ever inserted."""

    reporter: int
    reported: str
    scope: int
    text: str
    at: float


class DeviceRow(msgspec.Struct, frozen=True):
    """A device linked to an account by ``AsyncAuthRequest.device`` (S16), upserted: ``linked``
    is when it was last linked (every sign-in with the device links it again)."""

    account_id: int
    device_type: str
    token: str
    linked: float


class DeviceGone(msgspec.Struct, frozen=True):
    """A device unlinked (``AsyncUnlinkDeviceRequest``): its row is deleted."""

    account_id: int
    device_type: str
    token: str


class AccountSeen(msgspec.Struct, frozen=True):
    """When an account last signed in or out: its ``last_seen`` updated alone (an account
    that is not stored is not written)."""

    account_id: int
    last_seen: float


class AccountErased(msgspec.Struct, frozen=True):
    """What a deleted account leaves behind outside its own row, erased in the commit that
    deletes it: its public chat lines signed ``alias``, its undelivered push
    notifications gone, and the finished /async games only the store holds saved with its
    seat renamed (``games``: id and new document, computed by the server, which reads
    documents; a game no longer stored is not written again)."""

    account_id: int
    alias: str
    games: list[tuple[int, bytes]] = msgspec.field(default_factory=list)


class NotificationRow(msgspec.Struct, frozen=True):
    """One push notification of the outbox (S16), upserted whole by ``id`` (the id a receiver
    drops duplicates by) as its delivery is attempted; ``delivered`` is None until it is.
    ``payload`` is opaque to the store. A row's first ``created`` is kept."""

    id: str
    account_id: int
    device_type: str
    token: str
    payload: bytes
    created: float
    attempts: int
    next_attempt: float
    delivered: float | None


Record = (
    PlayerRow
    | PlayerGone
    | GameRow
    | MoveRow
    | GameSnapshotRow
    | AccountRow
    | AsyncGameRow
    | AsyncTurnRow
    | RatingRow
    | GameResultRow
    | MetaRow
    | ChatRow
    | RelationRow
    | RelationGone
    | ReportRow
    | DeviceRow
    | DeviceGone
    | NotificationRow
    | AuditRow
    | Fence
    | Heartbeat
    | AccountErased
    | AccountSeen
)


class Kind(NamedTuple):
    """A kind of record, declared once: its type, its name in a batch (the store writer's frames
    and the redo log), and its name in an export (``parlour db export``; None: never exported).
    Both names are written to disk: never renamed."""

    record: type[Record]
    name: str
    export: str | None


#: Every kind of record the store takes, in the order an export gives those it exports.
KINDS: tuple[Kind, ...] = (
    Kind(PlayerRow, "player", "player"),
    Kind(PlayerGone, "gone", None),
    Kind(GameRow, "game", "game"),
    Kind(MoveRow, "move", "move"),
    Kind(GameSnapshotRow, "snapshot", "game_snapshot"),
    Kind(AccountRow, "account", "account"),
    Kind(AsyncGameRow, "async_game", "async_game"),
    Kind(AsyncTurnRow, "turn", "async_turn"),
    Kind(RatingRow, "rating", "rating"),
    Kind(ChatRow, "chat", "chat"),
    Kind(RelationRow, "relation", "relation"),
    Kind(RelationGone, "relation_gone", None),
    Kind(ReportRow, "report", "report"),
    Kind(DeviceRow, "device", "device"),
    Kind(DeviceGone, "device_gone", None),
    Kind(NotificationRow, "notification", "notification"),
    Kind(AuditRow, "audit", "audit"),
    Kind(GameResultRow, "result", "game_result"),
    Kind(MetaRow, "meta", "meta"),
    Kind(Fence, "fence", None),
    Kind(Heartbeat, "heartbeat", None),
    Kind(AccountErased, "erased", None),
    Kind(AccountSeen, "seen", None),
)

#: The kinds of rows of an export, in the order it gives them, and their records.
EXPORT_KINDS: dict[str, type[Record]] = {
    kind.export: kind.record for kind in KINDS if kind.export is not None
}


class Snapshot(msgspec.Struct):
    """What a restarting server loads: the registered players and every live game with its moves
    (those after its snapshot, for a game that has one)."""

    players: list[PlayerRow]
    games: list[GameRow]
    #: By game id: the moves to play after the game's snapshot (every move, without one).
    moves: dict[str, list[MoveRow]]
    #: When the previous run was last known alive (None for a new store).
    heartbeat: float | None
    #: By game id: the latest snapshot of each live game that has one (of SNAPSHOT_VERSION).
    states: dict[str, GameSnapshotRow] = {}
