"""Every setting of the server, with its default, and how they are loaded.

Precedence, lowest first: the defaults below, a TOML file (``--config FILE``, table
``[parlour]``), environment variables ``PARLOUR_<NAME>``, command-line flags ``--<name>``.
Thresholds are in seconds. The idle and inactive defaults are the reference server's.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import Any

from parlour.storage import is_url

__all__ = ["ROBOT_CHOICES", "SettingError", "Settings", "load_settings"]

#: Each game's robots by name, then its levels (parlour.robots.levels maps a level to a robot).
ROBOT_CHOICES = ("random", "greedy", "search", "rollout", "easy", "normal", "hard")
FISH_ROBOTS = ("random", "greedy", "search", "shallow", "alphabeta", "easy", "normal", "hard")
TSURO_ROBOTS = ("random", "greedy", "careful", "lookahead", "easy", "normal", "hard")
#: What the URL-valued settings accept (checked in Settings, stated in docs/settings.md).
STORE_FORMS = "a file path, a postgresql:// URL or none"
CLUSTER_SCHEMES = ("redis://", "rediss://", "unix://")
WEBHOOK_SCHEMES = ("http://", "https://")
MINUTE = 60.0
#: The most worker processes ``workers`` may ask for (parlour.workers).
MAX_WORKERS = 256
DAY = 24 * 60 * MINUTE
#: JWT algorithms an external provider may sign with: HMAC ones (a shared secret, at least as
#: many bytes as the hash, RFC 7518 3.2) and public-key ones (a PEM public key).
JWT_HMAC_KEY_BYTES = {"HS256": 32, "HS384": 48, "HS512": 64}
JWT_PUBLIC_KEY_ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES256K",
    "ES384",
    "ES512",
    "EdDSA",
)


@dataclass(frozen=True, slots=True)
class Bound:
    """The values a number setting may take: from ``low`` (or above it, when ``above``) up to
    ``high``. ``Settings`` checks them and the settings reference (parlour.settings_doc)
    states them, from this one declaration."""

    low: float
    high: float | None = None
    above: bool = False

    def allows(self, value: float) -> bool:
        # Written as "not above" so that NaN is refused too.
        if not (value > self.low if self.above else value >= self.low):
            return False
        return self.high is None or value <= self.high

    def describe(self) -> str:
        """What the value must do, after "must": "be at least 1024", "not be negative"..."""
        if self.high is not None:
            if self.high - self.low <= 2 and float(self.low).is_integer():
                *first, last = (str(n) for n in range(int(self.low), int(self.high) + 1))
                return f"be {', '.join(first)} or {last}"
            return f"be between {self.low:g} and {self.high:g}"
        if self.above:
            return "be positive" if self.low == 0 else f"be more than {self.low:g}"
        return "not be negative" if self.low == 0 else f"be at least {self.low:g}"


def _either(values: Sequence[str]) -> str:
    """``a or b`` for two values, ``one of a, b, c`` for more."""
    if len(values) == 2:
        return f"{values[0]} or {values[1]}"
    return f"one of {', '.join(values)}"


#: Every number setting not named here must not be negative.
NOT_NEGATIVE = Bound(0)
_POSITIVE = Bound(0, above=True)
_PORT = Bound(0, 65535)
BOUNDS: dict[str, Bound] = {
    "port": _PORT,
    "fish_port": _PORT,
    "tsuro_port": _PORT,
    "max_message_bytes": Bound(1024),
    "history_length": Bound(1),
    "max_outbox_bytes": Bound(65_536),
    "broadcast_slice": Bound(1),
    "handshake_timeout": _POSITIVE,
    "requests_per_second": _POSITIVE,
    "address_requests_per_second": _POSITIVE,
    "max_connections_per_address": Bound(1),
    "fish_players": Bound(2, 4),
    "tsuro_players": Bound(3, 5),
    "session_ttl": _POSITIVE,
    "login_window": _POSITIVE,
    "async_ping_timeout": _POSITIVE,
    "async_max_offers": Bound(1),
    "async_max_games": Bound(1),
    "async_max_state_bytes": Bound(1024),
    "async_requests_per_second": _POSITIVE,
    "async_lobby_list_cap": Bound(0),
    "notify_backoff": _POSITIVE,
    "notify_batch": Bound(1),
    "notify_poll": _POSITIVE,
    "cluster_lease": Bound(0.3),
    "cluster_shards": Bound(1, 4096),
    "workers": Bound(0, MAX_WORKERS),
}


#: The values a text setting may take, where there is a fixed list (the flags offer them as
#: choices; ``log_level`` is also accepted in lower case).
CHOICES: dict[str, tuple[str, ...]] = {
    "robot": ROBOT_CHOICES,
    "log_level": ("DEBUG", "INFO", "WARNING", "ERROR"),
    "log_format": ("text", "json"),
    "fish_robot": FISH_ROBOTS,
    "tsuro_robot": TSURO_ROBOTS,
    "tsuro_deal": ("cyclic", "random"),
    "store_sync": ("normal", "full"),
    "store_writer": ("log", "process", "thread"),
}


class SettingError(ValueError):
    """A setting has an unknown name or a value of the wrong type or range."""


@dataclass(frozen=True, slots=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8080
    #: The robot that plays programmatic seats and OPTIMAL_MOVE ("greedy" is the reference's).
    robot: str = "search"
    log_level: str = "INFO"
    #: "text": one readable line per record; "json": one JSON object per line (parlour.jsonlog).
    log_format: str = "text"

    max_connections: int = 10_000
    max_players: int = 10_000
    #: Games tracked at once, finished ones included until they are forgotten.
    max_games: int = 20_000
    #: Games advertised or being played at once.
    max_in_progress_games: int = 5_000
    max_message_bytes: int = 65_536
    max_chat_chars: int = 500
    #: Entries of game history sent with every game state.
    history_length: int = 10

    #: What one client may cost (parlour.transport.limits). Bytes of messages waiting for a
    #: client that does not read, past which its connection is closed; seconds for an HTTP
    #: request or a websocket upgrade to arrive whole; requests a second per connection on the
    #: Apologies, Fish and Tsuro protocols (/async has its own, below) and per client address
    #: on every port (bursts of twice each); connections open at once per address; addresses
    #: exempt from the per-address limits, comma-separated (loopback by default).
    max_outbox_bytes: int = 1 << 20
    #: Recipients written per loop iteration for a broadcast to more than that many
    #: connections (parlour.transport.fanout: a busy lobby's chat).
    broadcast_slice: int = 256
    handshake_timeout: float = 10.0
    requests_per_second: float = 200.0
    address_requests_per_second: float = 500.0
    max_connections_per_address: int = 100
    exempt_addresses: str = "127.0.0.1,::1"

    websocket_idle: float = 2 * MINUTE
    websocket_inactive: float = 5 * MINUTE
    player_idle: float = 15 * MINUTE
    player_inactive: float = 30 * MINUTE
    game_idle: float = 10 * MINUTE
    game_inactive: float = 20 * MINUTE
    game_retention: float = 2880 * MINUTE
    #: Periodic checks: the first run after ``check_delay``, then every period.
    check_delay: float = 300.0
    check_period: float = 120.0
    obsolete_check_period: float = 300.0
    #: How often the transport asks the services for due checks and timers.
    tick_seconds: float = 1.0

    #: Fish tables over TCP (0 disables the listener): players per table, how long a table
    #: waits before robots fill its empty seats, and how long a player may take to act.
    fish_port: int = 8001
    fish_players: int = 2
    fish_wait: float = 30.0
    fish_timeout: float = 30.0
    fish_robot: str = "search"

    #: Tsuro tables over TCP (0 disables the listener), as for Fish; ``tsuro_deal`` is
    #: "cyclic" (the reference's deal) or "random".
    tsuro_port: int = 8000
    tsuro_players: int = 3
    tsuro_wait: float = 30.0
    tsuro_timeout: float = 30.0
    tsuro_robot: str = "lookahead"
    tsuro_deal: str = "cyclic"

    #: Where durable state lives: an SQLite file (created on first run), a PostgreSQL database
    #: (``postgresql://user:password@host:port/database``; its tables are created on first
    #: run), or "none" to keep everything in memory. ``store_sync`` is "normal" (commits
    #: survive the process dying, and on PostgreSQL the database server too) or "full" (they
    #: survive a power cut too); see parlour.storage.sqlite and parlour.storage.postgres.
    store: str = "var/parlour.db"
    store_sync: str = "normal"
    #: What commits: the "log" (the default: each batch is acknowledged once appended to a redo
    #: log beside an SQLite file with store_sync normal, which a writer process applies behind
    #: the event loop; elsewhere, and on the nodes of a cluster, as "process"), a writer "process" (it does not compete with the
    #: event loop for the interpreter lock, but every move waits for its transaction) or a
    #: "thread" of the server's process.
    store_writer: str = "log"
    #: After a restart, how long a player keeps its seat before a robot takes it.
    restart_grace: float = 2 * MINUTE
    #: How long finished game records are kept (0: forever).
    record_retention: float = 0.0

    #: Accounts of /async (docs/async-decisions.md S4). How long a session token lasts.
    session_ttl: float = 30 * DAY
    #: A deployment's own OAuth2/OIDC provider: the key its JWTs are checked with (a PEM public
    #: key, or a shared secret for HS* algorithms); empty: Parlour's own accounts only. A secret
    #: is better set in the environment (PARLOUR_AUTH_JWT_KEY) than on the command line, which
    #: other users of the machine can read. Never shown in a repr or a log.
    auth_jwt_key: str = dataclass_field(default="", repr=False)
    #: The algorithms accepted, comma-separated: all HS* (shared secret) or none (public key).
    auth_jwt_algorithms: str = "RS256"
    #: When set, a token's ``iss`` and ``aud`` must be these. A token naming an audience is
    #: refused unless ``auth_jwt_audience`` is set to it.
    auth_jwt_issuer: str = ""
    auth_jwt_audience: str = ""
    #: The claim that holds the account name.
    auth_jwt_name_claim: str = "preferred_username"
    #: Failed logins allowed per account name and per address within ``login_window``
    #: seconds, before further tries must wait (0: no limit of that kind).
    login_failures_per_name: int = 5
    login_failures_per_address: int = 20
    login_window: float = 15 * MINUTE

    #: The /async protocol (docs/async-decisions.md S5, S8, S11): a connection silent this
    #: long is closed; open offers and live games per player; the size of a state or summary;
    #: the longest pause after a commit; requests per second per connection (a flood past it is
    #: closed); how often the lobby lists may be pushed; how long an outcome (or an abort) waits
    #: for confirmations before the game is OVER (ABORTED).
    async_ping_timeout: float = 60.0
    async_max_offers: int = 3
    async_max_games: int = 50
    async_max_state_bytes: int = 256 * 1024
    async_max_pause: int = 10
    async_requests_per_second: float = 50.0
    async_list_interval: float = 2.0
    #: The entries of each /async lobby list pushed to a client that takes no deltas, past which
    #: it is capped (docs/async.md "Lobby lists"): bounds what a push costs in a large lobby.
    async_lobby_list_cap: int = 100
    async_outcome_retention: float = 7 * DAY

    #: Push notifications of /async (docs/async-decisions.md S16): stored always (with a
    #: store), and POSTed as JSON to this http(s) URL when it is set (empty: not sent). A
    #: notification not delivered is tried again ``notify_retries`` times, after
    #: ``notify_backoff`` seconds doubling at each failure (up to an hour); the outbox is read
    #: ``notify_batch`` rows at a time, every ``notify_poll`` seconds when it runs dry. The URL
    #: may carry a secret: only its scheme and host are logged.
    notify_webhook_url: str = dataclass_field(default="", repr=False)
    notify_retries: int = 8
    notify_backoff: float = 2.0
    notify_batch: int = 100
    notify_poll: float = 1.0

    #: Several nodes (docs/cluster.md): the Redis URL the nodes share
    #: (``redis://host:port/0``); empty: one node, as ever. ``cluster_lease`` is the time to
    #: live of a service's ownership lease: how long a dead owner's services wait for a new one.
    cluster: str = ""
    cluster_lease: float = 3.0
    #: How many shards the started /async games are spread over (a game's is its id modulo
    #: this); every node of a cluster must use the same number.
    cluster_shards: int = 24
    #: Worker processes on this machine (parlour.workers; docs/deploy.md, "One machine, all its
    #: cores"): 1 is one process, as ever; more (or 0: one per CPU core) makes ``parlour serve``
    #: a supervisor of that many cluster nodes sharing the port, so it needs ``cluster``.
    workers: int = 1

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, int | float) and not isinstance(value, bool):
                bound = BOUNDS.get(field.name, NOT_NEGATIVE)
                if not bound.allows(value):
                    raise SettingError(f"{field.name} must {bound.describe()}, not {value}")
            elif field.name in CHOICES and field.name != "log_level":  # log_level: any case
                choices = CHOICES[field.name]
                if value not in choices:
                    raise SettingError(f"{field.name} must be {_either(choices)}, not {value!r}")
        if not self.store:
            raise SettingError(f"store must be {STORE_FORMS}")
        if "://" in self.store and not is_url(self.store):
            # A URL of another database (or a typo of the scheme) would become a file of that name.
            scheme = self.store.split("://", 1)[0]
            raise SettingError(f"store: {scheme}:// is not a store; use {STORE_FORMS}")
        self._check_accounts()
        self._check_notify()
        self._check_cluster()

    def exempt_addresses_list(self) -> list[str]:
        """``exempt_addresses`` as a list."""
        return [address.strip() for address in self.exempt_addresses.split(",") if address.strip()]

    def jwt_algorithms(self) -> list[str]:
        """``auth_jwt_algorithms`` as a list."""
        return [name.strip() for name in self.auth_jwt_algorithms.split(",") if name.strip()]

    def _check_cluster(self) -> None:
        if self.cluster and not self.cluster.startswith(CLUSTER_SCHEMES):
            raise SettingError("cluster must be a redis://, rediss:// or unix:// URL (or empty)")
        if self.cluster and self.store == "none":
            raise SettingError("a cluster needs a store the nodes share (store cannot be none)")
        if self.workers != 1 and not self.cluster:
            # Each worker is a cluster node: without Redis they would not know of each other.
            raise SettingError(
                "workers other than 1 need cluster (a Redis URL the workers share) and a store, "
                "e.g. --workers 4 --cluster redis://127.0.0.1:6379/0 --store var/parlour.db"
            )

    def _check_notify(self) -> None:
        url = self.notify_webhook_url
        if url and (not url.startswith(WEBHOOK_SCHEMES) or len(url) <= len("https://")):
            # Never the URL itself in a message: it may carry a secret.
            raise SettingError("notify_webhook_url must be an http:// or https:// URL")

    def _check_accounts(self) -> None:
        if not self.auth_jwt_name_claim:
            raise SettingError("auth_jwt_name_claim must name a claim")
        algorithms = self.jwt_algorithms()
        if not algorithms:
            raise SettingError("auth_jwt_algorithms must name at least one algorithm")
        known = (*JWT_HMAC_KEY_BYTES, *JWT_PUBLIC_KEY_ALGORITHMS)
        for name in algorithms:
            if name not in known:
                raise SettingError(
                    f"auth_jwt_algorithms: unknown algorithm {name!r} (one of {', '.join(known)})"
                )
        hmac = [name for name in algorithms if name in JWT_HMAC_KEY_BYTES]
        if hmac and len(hmac) != len(algorithms):
            # A public key accepted as an HMAC secret would let anyone who has it sign tokens.
            raise SettingError("auth_jwt_algorithms must be all HS* (a shared secret) or none (a public key)")
        if self.auth_jwt_key:
            # Never the key itself in a message.
            shortest = max((JWT_HMAC_KEY_BYTES[name] for name in hmac), default=0)
            if hmac and len(self.auth_jwt_key.encode()) < shortest:
                raise SettingError(f"auth_jwt_key must have at least {shortest} bytes for {', '.join(hmac)}")
            if not hmac and "-----BEGIN" not in self.auth_jwt_key:
                raise SettingError(f"auth_jwt_key must be a PEM public key for {', '.join(algorithms)}")


FIELDS = {field.name: field for field in fields(Settings)}


def _convert(name: str, value: Any) -> Any:
    """A value from a file or the environment, checked against the field's type."""
    kind = FIELDS[name].type
    try:
        if kind == "int":
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError
            return int(value)
        if kind == "float":
            if isinstance(value, bool):
                raise ValueError
            return float(value)
        if not isinstance(value, str):
            raise ValueError
        return value
    except ValueError:
        raise SettingError(
            f"{name} must be {'a number' if kind != 'str' else 'a string'}, not {value!r}"
        ) from None


def load_settings(
    config: Path | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Settings from defaults, then ``config``, then ``environ`` (PARLOUR_*), then ``overrides``."""
    values: dict[str, Any] = {}
    if config is not None:
        try:
            table = tomllib.loads(config.read_text()).get("parlour", {})
        except OSError as error:
            raise SettingError(f"cannot read {config}: {error.strerror}") from None
        except tomllib.TOMLDecodeError as error:
            raise SettingError(f"{config} is not valid TOML: {error}") from None
        for name, value in table.items():
            if name not in FIELDS:
                raise SettingError(f"{config}: unknown setting {name!r}")
            values[name] = _convert(name, value)
    for key, value in (os.environ if environ is None else environ).items():
        if key.startswith("PARLOUR_"):
            name = key[len("PARLOUR_") :].lower()
            if name not in FIELDS:
                raise SettingError(f"unknown setting in environment variable {key}")
            values[name] = _convert(name, value)
    for name, value in (overrides or {}).items():
        if value is not None:
            values[name] = _convert(name, value)
    return replace(Settings(), **values)


#: One sentence per setting, shown by ``parlour serve --help`` (a test checks every setting
#: has one, so that a new setting cannot arrive undocumented).
HELP: dict[str, str] = {
    "host": "The address the websocket/HTTP listener (and the Fish and Tsuro listeners) bind to; "
    "0.0.0.0 listens on every interface.",
    "port": "The websocket/HTTP port: Apologies on any path, /async, the browser client and /api.",
    "robot": "The Apologies robot for programmatic seats, abandoned seats and OPTIMAL_MOVE.",
    "log_level": "How much the server logs: one line per request at INFO, with the player's handle "
    "(never its id).",
    "log_format": "text: readable lines; json: one JSON object per line (time, level, logger, message, "
    "exception) for a log collector. Neither ever holds ids, tokens or passwords.",
    "max_connections": "Open connections allowed per listener; one more is refused the protocol's way "
    "(a websocket gets REQUEST_FAILED WEBSOCKET_LIMIT and close 1013).",
    "max_outbox_bytes": "Bytes of messages waiting for a client that does not read them; past this the "
    "connection is closed (websocket 1008, TCP dropped) and its player leaves as on a disconnect.",
    "broadcast_slice": "A message for more connections than this (a lobby's chat) is written to this many "
    "of them per turn of the event loop, so that everyone else's requests are served in between; each "
    "recipient gets every line owed to it in one write, so a line waits at most one sweep.",
    "handshake_timeout": "Seconds an HTTP request or websocket upgrade has to arrive whole; a silent or "
    "dribbling client is closed.",
    "requests_per_second": "Requests per Apologies, Fish or Tsuro connection (bursts of twice that; a robot "
    "client playing at full speed stays under it); past it the protocol's refusal, then the connection "
    "is closed (Apologies: REQUEST_FAILED INVALID_REQUEST and 1008; Fish: kicked; Tsuro: EJECTED).",
    "address_requests_per_second": "Requests per client address, all its connections and ports together "
    "(bursts of twice that); past it: websocket 1008, HTTP 429, TCP dropped.",
    "max_connections_per_address": "Connections open at once from one address, all ports together; one "
    "more is dropped at once.",
    "exempt_addresses": "Comma-separated addresses the per-address limits do not count (local tools, a "
    "reverse proxy on the host: behind a proxy every client has the proxy's address).",
    "max_players": "Registered Apologies players allowed at once (USER_LIMIT past it).",
    "max_games": "Apologies games tracked at once, finished ones included until forgotten (GAME_LIMIT on "
    "advertise).",
    "max_in_progress_games": "Games advertised or being played at once, every protocol together: Apologies "
    "games get GAME_LIMIT on start (a full game waits), a Fish or Tsuro table refuses newcomers.",
    "max_message_bytes": "The largest request frame; larger ones get INVALID_REQUEST, and frames over 1 MiB "
    "are closed (1009).",
    "max_chat_chars": "The longest SEND_MESSAGE text, in characters.",
    "history_length": "History entries sent with every Apologies game state.",
    "websocket_idle": "Seconds a connection with no player may stay quiet before it is warned.",
    "websocket_inactive": "Seconds a connection with no player may stay quiet before it is closed.",
    "player_idle": "Seconds a player may stay quiet before it is warned.",
    "player_inactive": "Seconds a player may stay quiet before it is unregistered.",
    "game_idle": "Seconds a game may go without a move before its players are warned (once per idle spell).",
    "game_inactive": "Seconds a game may go without a move before it is cancelled.",
    "game_retention": "Seconds a finished game stays in memory (the Apologies lobby, /async status "
    "reports); the store keeps its record.",
    "check_delay": "Seconds after start before the first periodic idle check runs.",
    "check_period": "Seconds between periodic idle checks.",
    "obsolete_check_period": "Seconds between checks that forget finished games past game_retention.",
    "tick_seconds": "How often, in seconds, the server looks for due checks and timers.",
    "fish_port": "The Fish TCP port (0 turns the listener off).",
    "fish_players": "Players per Fish table: 2, 3 or 4.",
    "fish_wait": "Seconds a Fish table waits for players before robots fill its empty seats.",
    "fish_timeout": "Seconds a Fish player may take to connect or act before it is kicked.",
    "fish_robot": "The robot for empty Fish seats.",
    "tsuro_port": "The Tsuro TCP port (0 turns the listener off).",
    "tsuro_players": "Players per Tsuro table: 3, 4 or 5.",
    "tsuro_wait": "Seconds a Tsuro table waits for players before robots fill its empty seats.",
    "tsuro_timeout": "Seconds a Tsuro player may take to join or move before it is ejected.",
    "tsuro_robot": "The robot for empty Tsuro seats.",
    "tsuro_deal": "How Tsuro tiles are dealt: the reference's cyclic order, or a seeded random deal.",
    "store": "The SQLite file that keeps players, games and moves (created on first run), or a PostgreSQL "
    "database postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE (its tables created on first run); none "
    "keeps everything in memory.",
    "store_sync": "normal: commits survive the process dying (kill -9, a crash; on PostgreSQL, the database "
    "server or its machine too: each commit is flushed to its log on the primary); full: they also survive a "
    "power cut or an OS crash, at one fsync per commit (on PostgreSQL, the synchronous replicas, if any, hold "
    "each commit too).",
    "store_writer": "What commits to the store: log appends each change to a redo log beside an SQLite "
    "file (store_sync normal) and acknowledges it there, a writer process applying the log behind the server "
    "(elsewhere, and in a cluster, as process); process commits each change in a writer process (python -m "
    "parlour.storage.pipe) before acknowledging it; thread, in a thread of the server.",
    "restart_grace": "Seconds a player keeps its seat after a restart before a robot takes it.",
    "record_retention": "Seconds records of finished games, delivered notifications and lobby chat "
    "are kept (0: forever); game_retention is the live lobby's.",
    "session_ttl": "Seconds an /async session token lasts.",
    "auth_jwt_key": "An OAuth2/OIDC provider's key for /async tokens (a PEM public key, or a shared "
    "secret for HS*); better set in PARLOUR_AUTH_JWT_KEY than on the command line.",
    "auth_jwt_algorithms": "The JWT algorithms accepted, comma-separated: all HS* or none of them.",
    "auth_jwt_issuer": "When set, the iss claim an external token must carry.",
    "auth_jwt_audience": "When set, the aud claim an external token must carry.",
    "auth_jwt_name_claim": "The claim of an external token that holds the account name.",
    "login_failures_per_name": "Failed sign-ins allowed per account name within login_window (0: no limit); "
    "past it, HTTP 429 says when to try again.",
    "login_failures_per_address": "Failed sign-ins allowed per address within login_window (0: no limit).",
    "login_window": "Seconds over which failed sign-ins are counted.",
    "async_ping_timeout": "Seconds an /async connection may stay silent before it is closed.",
    "async_max_offers": "Games a player may have waiting to start on /async (TOO_MANY_OFFERS past it).",
    "async_max_games": "Live /async games per player.",
    "async_max_state_bytes": "The largest /async state or summary, in bytes (TOO_LARGE past it).",
    "async_max_pause": "The longest pause_time, in seconds, a commit may ask for.",
    "async_requests_per_second": "Requests per second per /async connection (bursts of twice that); "
    "a flood past it is closed (1008).",
    "async_list_interval": "Seconds between pushes of /async lobby lists, sent only when changed.",
    "async_lobby_list_cap": "The players (those who have waited longest, plus the client's buddies) and open "
    "games (the oldest) in each /async lobby list pushed to a client that takes no deltas; 0: whole lists.",
    "async_outcome_retention": "Seconds an /async outcome or abort waits for confirmations.",
    "notify_webhook_url": "The http(s) URL push notifications are POSTed to (empty: kept in the store only).",
    "notify_retries": "Attempts per push notification.",
    "notify_backoff": "Seconds before the first retry of a notification, doubling at each failure (at most "
    "an hour).",
    "notify_batch": "Notifications read from the outbox at a time.",
    "notify_poll": "Seconds between reads of an empty notification outbox.",
    "cluster": "Several nodes: the Redis URL they share (redis://host:port/0, rediss:// or unix://); empty: "
    "one node. A cluster needs a store the nodes share (not none).",
    "cluster_lease": "Seconds a service's ownership lease lives unrenewed: how soon another node "
    "takes over from a dead owner.",
    "cluster_shards": "Shards the started /async games are spread over, each owned by one node (a "
    "game's shard is its id modulo this); the same on every node.",
    "workers": "Worker processes on this machine, each a cluster node, all on the same port (the kernel "
    "spreads connections over them); 1: one process; 0: one per CPU core. Other than 1 needs cluster "
    "and a store the workers share. Fish and Tsuro tables are the first worker's.",
}
