"""Games placed on shards (docs/cluster.md "Placement"): what the /async hub and the owners of
its game shards say to each other in a cluster, each node's copy of the accounts they need, and
how a node routes a player's in-game request straight to the game's owner.

The hub (one owner: sessions, the lobby, the social side, games until they start) places each
game on its shard (``game_id % shards``) when it starts. From then on the shard's owner runs the
game: its turns, clocks, idle timer, robots, server rules and observers. A turn touches only
that owner, the store, and the nodes holding its players' connections: the node that received
the request routes it (``Router``), the owner answers through the runtime (sends to other
nodes' connections go over the bus), and the hub hears of the game again only when its status
or seats change, or when the shard finds the store holds something else of it (``Changed``) or
nothing (``Gone``): the hub's copy follows the store.

Notes travel as ``Relay`` effects (released after the same commit as the sends), encoded here
with msgspec's MessagePack. Nothing in this module does I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Final

import msgspec

from parlour.core.effects import Close, ConnId, Effect, Relay, Send
from parlour.core.ratelimit import TokenBucket
from parlour.protocols.async_ws.game.host import Notice
from parlour.protocols.async_ws.state.known_accounts import Accounts
from parlour.protocols.async_ws.wire.messages import ErrorRequest, StatusReport, encode
from parlour.storage import AccountRow, RatingRow

__all__ = [
    "EVERYONE",
    "HUB",
    "IN_GAME",
    "MOVING",
    "NOT_SAVED",
    "AbortDone",
    "AbortGame",
    "Changed",
    "Directory",
    "Gather",
    "Gone",
    "Named",
    "Noticed",
    "Online",
    "OnlineAll",
    "Placed",
    "Rated",
    "Routed",
    "Router",
    "WantOnline",
    "Watch",
    "answer_keys",
    "apply_everyone",
    "awaited",
    "decode_note",
    "encode_note",
    "head",
    "shard_name",
    "shard_of",
    "try_again",
    "unanswered",
    "unheard",
]

#: The lease of the hub, and where notes for it go.
HUB: Final = "async"
#: Notes for every node (the directory's changes).
EVERYONE: Final = "*"
#: After this many hops between the hub and a shard a request is answered TRY_AGAIN: the two
#: disagree for a moment about where the game is (a placement on its way).
MAX_HOPS: Final = 2
#: Close code of a flood past the rate limit (S3), as the hub closes it.
POLICY_VIOLATION: Final = 1008

#: The requests a started game answers, routed by their ``game_id`` to its shard's owner.
IN_GAME: Final = frozenset(
    {
        "CommitActionRequest",
        "GetClocksRequest",
        "GameForfeitRequest",
        "GameOverRequest",
        "GameOutcomeConfirmationRequest",
        "GameAbortedConfirmationRequest",
        "UpdateUserDataRequest",
        "InterruptActionRequest",
        "MulticastDataRequest",
        "WhatsNewPussycatRequest",
    }
)


def shard_name(shard: int) -> str:
    return f"{HUB}/{shard}"


def shard_of(game_id: int, shards: int) -> int:
    return game_id % shards


# -- Notes --------------------------------------------------------------------------------------


class Routed(msgspec.Struct, tag="routed", array_like=True):
    """A signed-in player's request for a game (the frame as sent), from connection ``conn``."""

    conn: int
    player: int
    text: str
    hops: int = 0


class Placed(msgspec.Struct, tag="placed", array_like=True):
    """Hub -> shard: a game that started, as stored, with its observers."""

    doc: bytes
    observers: list[int]


class Changed(msgspec.Struct, tag="changed", array_like=True):
    """Shard -> hub: a game's status or seats changed (a forfeit, a clock run out, its end), as
    stored: the hub's copy follows (once over, it is no longer anyone's live game). Turns that
    change neither are not told."""

    doc: bytes


class Gone(msgspec.Struct, tag="gone", array_like=True):
    """Shard -> hub: the store holds no game ``game_id`` (read back after a failed commit, or
    read because the hub sent a request for a game the shard did not hold): the hub forgets its
    copy, and requests for the game are answered UNKNOWN_GAME."""

    game_id: int


class Noticed(msgspec.Struct, tag="noticed", array_like=True):
    """Shard -> hub: a push notification for a player who is not connected (S16)."""

    player: int
    kind: Notice
    game_id: int
    turn_index: int
    about: int | None = None
    text: str | None = None


class Gather(msgspec.Struct, tag="gather", array_like=True):
    """A WhatsNewPussycatRequest without a game id, on its way from the hub through each shard
    that holds games of the player: each adds its reports, the last one answers. ``games`` are
    the player's started games as the hub knows them: a shard that should run one of them and
    does not hold it (its owner still reading it back) answers TRY_AGAIN rather than leave the
    game out, which a client would read as a game that ended."""

    conn: int
    player: int
    request_id: str | None
    reports: list[StatusReport]
    shards: list[int]
    games: list[int] = []


class Watch(msgspec.Struct, tag="watch", array_like=True):
    """Hub -> shard: ``player`` (on ``conn``) starts or stops watching a started game; the hub
    checked what it knows (the lobby, buddies, S17), the shard answers GameObservedRequest."""

    game_id: int
    conn: int
    player: int
    on: bool
    request_id: str | None = None


class Online(msgspec.Struct, tag="online", array_like=True):
    """Hub -> everyone: ``player`` signed in on ``conn`` (``on``), or signed out of it."""

    player: int
    conn: int
    on: bool


class OnlineAll(msgspec.Struct, tag="online_all", array_like=True):
    """Hub -> everyone: every signed-in player and their connection (a new hub, or a new node)."""

    pairs: list[tuple[int, int]]


class WantOnline(msgspec.Struct, tag="want_online", array_like=True):
    """A node that starts -> hub: send OnlineAll."""


class Named(msgspec.Struct, tag="named", array_like=True):
    """Hub -> everyone: a new account (its name: never its password hash), or an account's new
    name (a deleted account's: the shards rename its seats in their live games)."""

    account: int
    name: str


class Rated(msgspec.Struct, tag="rated", array_like=True):
    """Shard -> everyone: ratings changed by a game's end."""

    rows: list[RatingRow]


class AbortGame(msgspec.Struct, tag="abort", array_like=True):
    """Hub -> shard: an admin aborts a started game (its players are told ``reason``); the
    shard answers AbortDone with ``call`` once the abort is stored."""

    call: int
    game_id: int
    reason: str


class AbortDone(msgspec.Struct, tag="abort_done", array_like=True):
    """Shard -> hub: the abort of ``call`` is stored (``problem`` None), or why it was not."""

    call: int
    game_id: int
    problem: str | None = None


#: Why an abort is answered from a node that found no owner for the game's shard.
MOVING: Final = "the game is moving to another node; try again"
#: Why an abort is answered when its owner could not store it.
NOT_SAVED: Final = "the abort could not be saved; nothing was changed: try again"

Note = (
    Routed
    | Placed
    | Changed
    | Gone
    | Noticed
    | Gather
    | Watch
    | Online
    | OnlineAll
    | WantOnline
    | Named
    | Rated
    | AbortGame
    | AbortDone
)

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(Note)


def encode_note(note: Note) -> bytes:
    return _encoder.encode(note)


def decode_note(data: bytes) -> Note:
    """msgspec.DecodeError/ValidationError if ``data`` is not a note."""
    note: Note = _decoder.decode(data)
    return note


# -- Routing on the node that holds the connection ------------------------------------------------


def try_again(conn: ConnId, text: str, message: str) -> Send:
    """The answer to a request whose game is moving between nodes: nothing changed."""
    kind, request_id, game_id = head(text)
    return Send(
        conn,
        encode(
            ErrorRequest(
                code="TRY_AGAIN", message=message, request_type=kind, request_id=request_id, game_id=game_id
            )
        ),
    )


# -- Each node's copy of the accounts -----------------------------------------------------------


class Directory:
    """What every owner of a shard needs to know of accounts, one copy per node, changed only by
    the hub's notes (and Rated from the shards): who is signed in on which connection, and the
    accounts' names and ratings."""

    __slots__ = ("accounts", "bound", "node_of", "online")

    def __init__(self, node_of: Callable[[ConnId], int] | None = None) -> None:
        self.accounts = Accounts()
        #: account id -> its live connection (S5), across the cluster.
        self.online: dict[int, ConnId] = {}
        #: connection -> its signed-in account (the reverse of ``online``).
        self.bound: dict[ConnId, int] = {}
        self.node_of = node_of

    def load(self, accounts: list[AccountRow], ratings: list[RatingRow]) -> None:
        for account in accounts:
            self.accounts.add(account)
        for rating in ratings:
            self.accounts.rate(rating)

    def apply(self, note: Note) -> None:
        if type(note) is Online:
            if note.on:
                self._unbind(note.player)
                self.online[note.player] = note.conn
                self.bound[note.conn] = note.player
            elif self.online.get(note.player) == note.conn:
                self._unbind(note.player)
            elif self.bound.get(note.conn) == note.player:
                # A connection the player has left for a newer one, told late (a node's
                # messages held up on their way): the newer connection stands.
                del self.bound[note.conn]
        elif type(note) is OnlineAll:
            self.online.clear()
            self.bound.clear()
            for player, conn in note.pairs:
                self.online[player] = conn
                self.bound[conn] = player
        elif type(note) is Named:
            known = self.accounts.get(note.account)
            if known is None:
                self.accounts.add(AccountRow(id=note.account, name=note.name, password_hash="", created=0.0))
            elif known.name != note.name:  # a deleted account's new name
                self.accounts.rename(known, note.name)
        elif type(note) is Rated:
            for row in note.rows:
                self.accounts.rate(row)

    def _unbind(self, player: int) -> None:
        conn = self.online.pop(player, None)
        if conn is not None:
            self.bound.pop(conn, None)


def unheard(data: bytes) -> list[Effect]:
    """The answer to a note that reached no owner (its shard had none at that moment, or lost
    it as the note arrived): a request in it is refused TRY_AGAIN, nothing changed. A game
    placed on a shard without owner waits in the store for the next one."""
    try:
        note = decode_note(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return []
    message = "the game is moving to another node; send it again"
    if type(note) is Routed:
        return [try_again(note.conn, note.text, message)]
    if type(note) is Gather:
        error = ErrorRequest(
            code="TRY_AGAIN",
            message=message,
            request_type="WhatsNewPussycatRequest",
            request_id=note.request_id,
        )
        return [Send(note.conn, encode(error))]
    if type(note) is AbortGame:  # the admin's route, on the hub, is told to try again
        return [Relay(HUB, encode_note(AbortDone(note.call, note.game_id, MOVING)))]
    if type(note) is Watch:
        error = ErrorRequest(
            code="TRY_AGAIN",
            message=message,
            request_type="StartObserveGameRequest" if note.on else "StopObserveGameRequest",
            request_id=note.request_id,
            game_id=note.game_id,
        )
        return [Send(note.conn, encode(error))]
    return []


#: The requests to start and stop watching a game: the hub checks them, the game's shard
#: answers those it passes on (a Watch note).
WATCHING: Final = frozenset({"StartObserveGameRequest", "StopObserveGameRequest"})
#: Requests routed to a shard that change nothing: asked again, they are answered anew.
READS: Final = frozenset({"WhatsNewPussycatRequest", "GetClocksRequest"})
#: The requests routed to a game's owner that always get an answer of their own, echoing their
#: ``request_id`` (a commit: acknowledged or refused): one whose answer does not come in time
#: was lost on the way, and the node of its connection answers it (cluster/awaiting.py).
#: Confirmations, multicast data and declined interruptions have none.
REPLIED: Final = frozenset(
    {"CommitActionRequest", "GetClocksRequest", "UpdateUserDataRequest", "WhatsNewPussycatRequest"}
)
#: What a request is told when the owner it reached stopped (frozen, killed, cut off) before
#: answering: it may have stored it, nobody can say now.
UNKNOWN_OUTCOME: Final = (
    "the game's node stopped before answering: this may have been saved; check before retrying"
)


def unanswered(data: bytes) -> list[Effect]:
    """The answer to a note its owner received but whose tenure ended before it answered: a
    read, a Gather or a watch is refused TRY_AGAIN (nothing changed); any other request may
    have been stored just before the owner stopped, so it is told the outcome is unknown."""
    try:
        note = decode_note(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return []
    if type(note) is Routed:
        kind, request_id, game_id = head(note.text)
        if kind not in READS:
            error = ErrorRequest(
                code="INTERNAL_ERROR",
                message=UNKNOWN_OUTCOME,
                request_type=kind,
                request_id=request_id,
                game_id=game_id,
            )
            return [Send(note.conn, encode(error))]
    return unheard(data)


def awaited(data: bytes) -> tuple[ConnId, Hashable, bool, bool] | None:
    """Whose answer a note is, how that answer is recognised, whether the request passes
    through several owners, and whether it always has an answer of its own: a request routed
    for a connection (Routed, Gather, Watch) and the ``request_id`` its reply echoes (S2), or
    its game when it has none; True for a Gather and a watch with a ``request_id`` (both pass
    through the hub first: their connection's node waits for them whole, cluster/awaiting.py);
    True for a request of REPLIED, a watch and a Gather. None for a note that answers nobody,
    or whose answer cannot be told."""
    try:
        note = decode_note(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    key: Hashable = None
    replies = True
    if type(note) is Routed:
        kind, request_id, game_id = head(note.text)
        conn, key = note.conn, request_id if request_id is not None else _game_key(game_id)
        replies = kind in REPLIED
    elif type(note) is Watch:
        if note.request_id is not None:
            return note.conn, note.request_id, True, True
        conn, key = note.conn, _game_key(note.game_id)
    elif type(note) is Gather:
        return None if note.request_id is None else (note.conn, note.request_id, True, True)
    return None if key is None else (conn, key, False, replies)


def answer_keys(data: bytes) -> tuple[Hashable, ...]:
    """What a frame sent to a connection answers (see ``awaited``): its ``request_id``, and its
    game (any message of the game shows that its owner serves the connection)."""
    try:
        sent = _head_decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return ()
    return tuple(key for key in (sent.request_id, _game_key(sent.game_id)) if key is not None)


def _game_key(game_id: int | None) -> tuple[str, int] | None:
    return None if game_id is None else ("game", game_id)


def apply_everyone(directory: Directory, data: bytes) -> None:
    """A note for every node: this node's directory takes what it says of accounts."""
    try:
        note = decode_note(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return
    directory.apply(note)


class _Head(msgspec.Struct):
    type: str = ""
    game_id: int | None = None
    request_id: str | None = None


_head_decoder = msgspec.json.Decoder(_Head)


def head(text: str) -> tuple[str | None, str | None, int | None]:
    """A frame's ``type``, ``request_id`` and ``game_id``, where they can be read."""
    try:
        head = _head_decoder.decode(text)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None, None, None
    request_id = head.request_id if head.request_id and len(head.request_id) <= 64 else None
    game_id = head.game_id if head.game_id is not None and head.game_id >= 0 else None
    return head.type or None, request_id, game_id


class Router:
    """On every node: a signed-in connection's in-game request for a game id goes to that game's
    shard (as a Routed note), without the hub. Everything else, and every frame of a connection
    the directory does not know as signed in yet, goes to the hub as before (which relays an
    in-game request for a started game itself)."""

    __slots__ = ("buckets", "directory", "max_bytes", "owned", "rate", "shards", "waits")

    def __init__(
        self,
        directory: Directory,
        shards: int,
        owned: Callable[[str], bool],
        rate: float,
        max_bytes: int,
    ) -> None:
        self.directory = directory
        self.shards = shards
        #: Whether a shard has an owner now (its lease is held by a live node).
        self.owned = owned
        self.rate = rate
        self.max_bytes = max_bytes
        #: The rate limit (S8) of the requests routed past the hub, per connection.
        self.buckets: dict[ConnId, TokenBucket] = {}
        #: Told of a request that goes to the hub but is answered by a shard's owner (a
        #: WhatsNewPussycatRequest without a game: the hub starts a Gather), with its
        #: ``request_id`` and the note that says how to refuse it: this node waits for its
        #: answer (cluster/awaiting.py), as the nodes its hops pass through keep nothing.
        self.waits: Callable[[ConnId, Hashable, bytes], None] | None = None

    def route(self, conn: ConnId, data: str | bytes, now: float) -> tuple[str, bytes] | list[Effect] | None:
        """Where the frame goes: ``(shard, note)``; effects to carry out here instead (a
        TRY_AGAIN while the shard has no owner, a flood's close); None: to the hub."""
        if not isinstance(data, str) or len(data) > self.max_bytes:
            return None
        player = self.directory.bound.get(conn)
        if player is None and self.waits is None:
            return None
        kind, request_id, game_id = head(data)
        if kind in WATCHING:
            # To the hub, which answers it or sends it on to the game's shard: waited for whole
            # here, like a Gather (its hop to the shard is sent by the hub's node).
            if (
                player is not None
                and request_id is not None
                and game_id is not None
                and self.waits is not None
            ):
                watch = Watch(game_id, conn, player, kind == "StartObserveGameRequest", request_id)
                self.waits(conn, request_id, encode_note(watch))
            return None
        if kind not in IN_GAME:
            return None
        if game_id is None:
            if kind == "WhatsNewPussycatRequest" and request_id is not None and self.waits is not None:
                gather = Gather(conn, player or 0, request_id, [], [])
                self.waits(conn, request_id, encode_note(gather))
            return None
        if player is None:
            return None
        bucket = self.buckets.get(conn)
        if bucket is None:
            bucket = self.buckets[conn] = TokenBucket.full(self.rate, now)
        if not bucket.allow(now):
            error = ErrorRequest(
                code="RATE_LIMITED", message=f"more than {self.rate:.0f} requests per second"
            )
            return [Send(conn, encode(error)), Close(conn, POLICY_VIOLATION, "rate limit exceeded")]
        shard = shard_name(shard_of(game_id, self.shards))
        if not self.owned(shard):
            return [try_again(conn, data, "the game is moving to another node; send it again")]
        return shard, encode_note(Routed(conn, player, data))

    def forget(self, conn: ConnId) -> None:
        self.buckets.pop(conn, None)


def online_pairs(online: Mapping[int, ConnId]) -> list[tuple[int, int]]:
    return sorted(online.items())
