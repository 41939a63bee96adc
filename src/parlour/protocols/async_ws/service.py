"""The /async service: the sans-I/O side of the Scalable Server workflows
(the Scalable Server text; docs/async-decisions.md S1-S20).

Frames are decoded against the declared messages (wire/messages.py), checked (authentication, rate
limit, size), and handed to the handlers (lobby/, ingame/, players/), which change the hub and say
what to send and what to store first. Connections are only a way to reach an account: games live on
without them (S5), and a player who comes back gets the turns that wait for them.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from random import Random
from typing import Any, Final

import msgspec

from parlour.accounts.limits import LoginLimiter
from parlour.accounts.moderation import Banned
from parlour.accounts.tokens import ExternalJwt, SessionTokens, TokenExpired, TokenInvalid, TokenRevoked
from parlour.core.effects import ConnId, Effect
from parlour.core.ids import IdSource
from parlour.core.ratelimit import TokenBucket
from parlour.protocols.async_ws.game.game_registry import Games
from parlour.protocols.async_ws.game.lifecycle import LIVE
from parlour.protocols.async_ws.ingame import phase_requests, play
from parlour.protocols.async_ws.lobby import lobby_requests, observe, quickplay
from parlour.protocols.async_ws.players import devices, ratings, social
from parlour.protocols.async_ws.players.hubhost import HubHost
from parlour.protocols.async_ws.shards.hub_placement import Placing, Routed
from parlour.protocols.async_ws.state.hub import Account, AsyncLimits, Handler, Hub, Session
from parlour.protocols.async_ws.state.readback import AsyncReload, read_back, refusal_text
from parlour.protocols.async_ws.state.refusals import Unread, answer_if_refused, tell_refused
from parlour.protocols.async_ws.wire.messages import (
    AsyncAuthRequest,
    AsyncConnectedRequest,
    AsyncConnectionErrorRequest,
    AsyncDisconnectRequest,
    ClientMessage,
    ErrorCode,
    GameStatusReportRequest,
    PingRequest,
    WhatsNewPussycatRequest,
    decode_client,
)
from parlour.protocols.jsonlimits import MAX_DEPTH, too_deep
from parlour.storage import AccountRow, AsyncGameRow, RatingRow, Record, Store

__all__ = ["AsyncService"]

log = logging.getLogger("parlour.async")

#: The handler of each request the service answers itself, by message name.
HANDLERS: Final[dict[str, Handler]] = {
    "EnterLobbyRequest": lobby_requests.enter_lobby,
    "ExitLobbyRequest": lobby_requests.exit_lobby,
    "GetLobbyListsRequest": lobby_requests.get_lobby_lists,
    "AskPlayerInfoRequest": lobby_requests.ask_player_info,
    "LobbyCreateGameRequest": lobby_requests.create_game,
    "EngageGameWithFriendsRequest": lobby_requests.engage_friends,
    **lobby_requests.GAME_HANDLERS,
    **play.HANDLERS,
    **devices.HANDLERS,
    **phase_requests.PHASE_HANDLERS,
    **observe.HANDLERS,
    **social.HANDLERS,
    **quickplay.HANDLERS,
}

#: Close codes (RFC 6455): a flood past the rate limit is a policy violation (S3).
POLICY_VIOLATION: Final = 1008
GOING_AWAY: Final = 1001


class AsyncService:
    """One per server; every call is made by the event loop's single owner (no locks)."""

    def __init__(
        self,
        tokens: SessionTokens,
        limits: AsyncLimits | None = None,
        rng: Random | None = None,
        external: ExternalJwt | None = None,
        limiter: LoginLimiter | None = None,
        ids: IdSource | None = None,
        shards: int = 0,
    ) -> None:
        self.hub = Hub(limits or AsyncLimits(), rng or Random())
        #: The games: one registry, speaking to the rest of /async through one adapter.
        self.games = Games(HubHost(self.hub), self.hub.limits, ids)
        self.hub.games = self.games
        #: The hub of a cluster (shards/placement.py): started games run on the owners of their
        #: ``shards``; 0: every game runs here (one server).
        self.placing = Placing(self.hub, shards) if shards else None
        self.tokens = tokens
        self.external = external
        self.limiter = limiter or LoginLimiter()

    # -- The Service protocol -------------------------------------------------------------------

    def connected(self, conn: ConnId, now: float) -> list[Effect]:
        self.hub.connections.opened(conn, now, TokenBucket.full(self.hub.limits.requests_per_second, now))
        return []

    def received(self, conn: ConnId, data: str | bytes, now: float) -> list[Effect]:
        hub = self.hub
        session = hub.sessions.get(conn)
        if session is None:
            return []
        session.last_seen = now
        if not self._allowed(session, now):
            return self._take(now)
        request: ClientMessage | Unread | None = None
        if isinstance(data, bytes):
            hub.error(conn, "BAD_REQUEST", "frames are JSON text; binary frames are not read (S1)")
        elif len(data) > hub.limits.max_frame_bytes:
            hub.error(conn, "TOO_LARGE", f"frames are limited to {hub.limits.max_frame_bytes} bytes")
        elif too_deep(data, MAX_DEPTH):
            hub.error(conn, "BAD_REQUEST", f"JSON nested more than {MAX_DEPTH} levels deep")
        else:
            try:
                message = decode_client(data)
            except (msgspec.DecodeError, msgspec.ValidationError) as error:
                kind, request_id = _head_of(data)
                hub.error(conn, "BAD_REQUEST", str(error), request_type=kind, request_id=request_id)
                request = Unread(kind, request_id)
            else:
                request = message
                self._dispatch(session, message, now, data)
        effects = self._take(now)
        if request is not None:
            # If its effects are refused, the request's own error answers it (its request_id).
            answer_if_refused(effects, self._refused, conn, request)
        return effects

    def disconnected(self, conn: ConnId, now: float) -> list[Effect]:
        hub = self.hub
        session = hub.connections.closed(conn)
        if session is not None and session.player_id is not None:
            self._sign_out(session, now)
        return self._take(now)

    def tick(self, now: float) -> list[Effect]:
        hub = self.hub
        timeout = hub.limits.ping_timeout
        for session in list(hub.sessions.values()):
            if now - session.last_seen > timeout:
                hub.close(session.conn, GOING_AWAY, f"nothing received for {timeout:.0f} s")
        lobby_requests.push_lists(hub, now)
        for game_id in self.games.tick(now):
            hub.observers.forget(game_id)  # a forgotten game has nothing more to show
        observe.tick(hub, now)
        social.tick(hub, now)
        quickplay.tick(hub, now)
        self._store_seen()
        return self._take(now)

    def _store_seen(self) -> None:
        """When the accounts seen since the last tick were seen (Accounts.seen)."""
        rows = self.hub.accounts.seen_rows()
        if rows:
            self.hub.store(*rows)

    def farewell(self, now: float) -> list[Effect]:
        """In a cluster, what the stopping hub tells every waiting player wherever connected
        (ClusterService.shutdown keeps it whole; the rest of ``shutdown`` reaches only the
        stopping node's connections): their quick play queues end, since no other hub knows them."""
        quickplay.stopping(self.hub)
        return self._take(now)

    def shutdown(self, now: float) -> list[Effect]:
        """Games stay stored; connections are told the server is going away, and players who
        wait for quick play that their queues end (they are not stored)."""
        hub = self.hub
        quickplay.stopping(hub)
        for conn in list(hub.sessions):
            hub.close(conn, GOING_AWAY, "server stopping")
        for player_id in list(hub.online):  # signed out by the stop: seen until now
            account = hub.accounts.get(player_id)
            if account is not None:
                hub.accounts.seen(account, now)
        self._store_seen()
        return self._take(now)

    def stats(self) -> dict[str, Any]:
        hub = self.hub
        return {
            "async_connections": len(hub.sessions),
            "async_players_online": len(hub.online),
            "async_games_live": sum(1 for game in self.games.values() if game.status in LIVE),
        }

    def noted(self, data: bytes, now: float) -> list[Effect]:
        """A note from a shard's owner or a node (a cluster's hub only; shards/placement.py)."""
        placing = self.placing
        if placing is None:
            return []
        note = placing.decode(data)
        request: ClientMessage | Unread | None = None
        if type(note) is Routed:
            # A request a shard's owner did not have the game for: not started yet (it runs
            # here), or unknown. Answered as if the connection had sent it here.
            session = self.hub.sessions.get(note.conn)
            if session is not None and session.player_id == note.player:
                request = self._frame(session, note.text, now, note.hops)
        elif note is not None:
            placing.noted(note, now)
        effects = self._take(now)
        if request is not None and type(note) is Routed:
            answer_if_refused(effects, self._refused, note.conn, request)
        return effects

    def thought(self, token: tuple[str, int], choice: int | None, now: float) -> list[Effect]:
        """A server-rules robot's decision, made away from the event loop, is back (a Think
        effect's answer): the game it is for checks it against where it stands."""
        self.games.thought(token, choice, now)
        return self._take(now)

    def hello(self, now: float) -> list[Effect]:
        """A new hub of a cluster: nobody is signed in with it yet (the previous hub's
        connections reconnect), which every node's directory hears."""
        if self.placing is not None:
            self.placing.everyone_online()
        return self._take(now)

    def _frame(self, session: Session, text: str, now: float, hops: int) -> ClientMessage | Unread:
        """The request in ``text``, handled (or, if it cannot be read, what it says of itself:
        answered BAD_REQUEST)."""
        try:
            message = decode_client(text)
        except (msgspec.DecodeError, msgspec.ValidationError) as error:
            kind, request_id = _head_of(text)
            self.hub.error(session.conn, "BAD_REQUEST", str(error), request_type=kind, request_id=request_id)
            return Unread(kind, request_id)
        self._dispatch(session, message, now, text, hops)
        return message

    def effects(self, now: float) -> list[Effect]:
        """The effects of a change made from outside an input (an admin's, a player's own
        account routes): the same as an input's."""
        return self._take(now)

    def _take(self, now: float) -> list[Effect]:
        """This input's effects; in a cluster's hub, each game that started goes to its shard."""
        effects = self.hub.take(now)
        if self.placing is not None:
            self.placing.place(effects)
        return effects

    # -- Accounts -------------------------------------------------------------------------------

    def account_named(self, name: str) -> Account | None:
        return self.hub.accounts.named(name)

    def create_account(
        self, name: str, password_hash: str, now: float
    ) -> tuple[Account | None, list[Effect]]:
        """A new account (None if the name is taken), with the record to store first."""
        hub = self.hub
        if hub.accounts.named(name) is not None:
            return None, []
        row = AccountRow(id=hub.accounts.next_id, name=name, password_hash=password_hash, created=now)
        account = hub.accounts.add(row)
        hub.store(row)
        if self.placing is not None:
            self.placing.named(account.id, name)
        return account, self._take(now)

    def forget_account(self, account_id: int) -> None:
        """An account whose record could not be stored never existed."""
        self.hub.accounts.forget(account_id)

    # -- Restore and store failures -------------------------------------------------------------

    def restore(
        self,
        accounts: Iterable[AccountRow],
        ratings: Iterable[RatingRow],
        games: Iterable[AsyncGameRow],
        next_game: str | None,
        heartbeat: float | None,
        now: float,
    ) -> None:
        """What the store holds, before any connection (S10). The clocks of running games are
        not charged for the time the server was down (from ``heartbeat``, when it was last known
        alive, to ``now``): their turns start again later by it."""
        hub = self.hub
        for account in accounts:
            hub.accounts.add(account)
        for rating in ratings:
            hub.accounts.rate(rating)
        self.games.restore(games, next_game, heartbeat, now)

    def reload(self, records: list[Record], store: Store) -> AsyncReload:
        """On the store's thread: the stored rows of what a failed commit touched."""
        return read_back(records, store)

    def store_failed(
        self, records: list[Record], origins: list[ConnId], reload: AsyncReload | None, now: float
    ) -> list[Effect]:
        """A commit failed: the games, accounts, ratings, buddy and ignore lists, devices and
        chat histories it touched return to what the store holds (``reload``, read back on the
        store's thread), accounts it created are forgotten, and the senders are told nothing
        changed."""
        hub = self.hub
        reload = AsyncReload() if reload is None else reload
        if reload.failure is not None:
            log.error("cannot read the store back either: %s", reload.failure)
        stored: dict[int, AsyncGameRow | None] = reload.async_games
        for record in records:
            if isinstance(record, AccountRow):
                row = reload.accounts.get(record.id)
                if row is None:  # never stored (or the store could not say): a new one goes
                    self.forget_account(record.id)
                else:  # as stored: a ban, a deletion, a sign-in's time undone
                    hub.accounts.put_back(row)
        self.games.reload(stored, now)
        if reload.failure is None:
            for (account_id, game_type), rating in reload.ratings.items():
                if rating is not None:
                    hub.accounts.rate(rating)
                else:
                    hub.accounts.unrate(account_id, game_type)
            social.reloaded(hub, records, reload.relations, reload.chat)
            devices.reloaded(hub, reload.devices)
        for conn in origins:
            if conn in hub.sessions:
                hub.error(conn, "INTERNAL_ERROR", refusal_text(reload.failure is None))
        return self._take(now)

    def _refused(
        self, conn: ConnId, request: ClientMessage | Unread, code: ErrorCode, confirmed: bool
    ) -> None:
        """The effects of ``request`` were refused (state/refusals.py): its error, echoing its
        request_id, goes out with the effects of ``store_failed``, which the runtime calls
        next (unless its connection is gone)."""
        if conn in self.hub.sessions:
            tell_refused(self.hub, conn, request, code, confirmed)

    # -- Requests -------------------------------------------------------------------------------

    def _allowed(self, session: Session, now: float) -> bool:
        """S8: a token bucket of ``requests_per_second`` with bursts of twice that; a flood
        past it closes the connection (S3)."""
        if session.bucket.allow(now):
            return True
        rate = self.hub.limits.requests_per_second
        self.hub.error(session.conn, "RATE_LIMITED", f"more than {rate:.0f} requests per second")
        self.hub.close(session.conn, POLICY_VIOLATION, "rate limit exceeded")
        return False

    def _dispatch(
        self, session: Session, message: ClientMessage, now: float, text: str = "", hops: int = 0
    ) -> None:
        hub = self.hub
        if type(message) is PingRequest:
            hub.send(session.conn, message)  # echoed exactly as sent (S5)
            return
        if type(message) is AsyncAuthRequest:
            self._auth(session, message, now)
            return
        if session.player_id is None:
            hub.error(session.conn, "UNAUTHENTICATED", "authenticate with AsyncAuthRequest first", message)
            return
        if type(message) is AsyncDisconnectRequest:
            self._sign_out(session, now)
            return
        placing = self.placing
        if placing is not None and placing.relayed(session, message, text, hops):
            return  # a request for a started game: its shard's owner answers
        if type(message) is WhatsNewPussycatRequest:
            self._whats_new(session, message, now)
            return
        handler = HANDLERS.get(type(message).__name__)
        if handler is None:
            hub.error(session.conn, "BAD_REQUEST", f"{type(message).__name__} is not available yet", message)
            return
        handler(hub, session, message, now)

    def _auth(self, session: Session, msg: AsyncAuthRequest, now: float) -> None:
        hub = self.hub
        wait = self.limiter.check(msg.name, "async", now)

        def refuse(reason: str, text: str) -> None:
            hub.send(
                session.conn,
                AsyncConnectionErrorRequest(reason=reason, message=text, request_id=msg.request_id),  # type: ignore[arg-type]
            )

        if wait > 0:
            return refuse("RATE_LIMITED", f"too many failed sign-ins; try again in {wait:.0f} s")
        try:
            account = self._verify(msg, now)
        except Banned as banned:
            return refuse("BAD_CREDENTIALS", str(banned))
        except TokenRevoked as revoked:
            return refuse("EXPIRED_TOKEN", str(revoked))
        except TokenExpired:
            return refuse("EXPIRED_TOKEN", "the session token has expired; sign in again")
        except TokenInvalid:
            self.limiter.failed(msg.name, "async", now)
            return refuse("BAD_CREDENTIALS", "unknown name or invalid session token")
        self.limiter.succeeded(msg.name, "async", now)
        if session.player_id is not None and session.player_id != account.id:
            self._sign_out(session, now)
        previous = hub.online.get(account.id)
        if previous is not None and previous != session.conn:
            # S5: one live connection per account; the older one is told why it goes.
            hub.send(previous, AsyncConnectionErrorRequest(reason="REPLACED", message="signed in elsewhere"))
            hub.close(previous, 1000, "replaced by a new connection")
            old = hub.sessions.get(previous)
            if old is not None:
                hub.lobby.move(old, False)
                hub.connections.unbind(old)
        digest = hashlib.blake2b(msg.sessionToken.encode(), digest_size=12).hexdigest()
        hub.connections.bind(session, account.id, digest)
        hub.accounts.seen(account, now)
        if self.placing is not None:
            self.placing.online(account.id, session.conn, True)
        player = ratings.player(account, "ONLINE")
        hub.send(
            session.conn,
            AsyncConnectedRequest(session=session.session, player=player, request_id=msg.request_id),
        )
        if msg.device is not None:
            # Linked for push notifications (S16); a refused device (GCM) leaves the sign-in.
            devices.link_device(
                hub, account.id, msg.device, now, conn=session.conn, request_id=msg.request_id
            )
        if previous is None:
            social.signed_in(hub, account.id, now)  # a replaced connection changes no presence
        for game in self.games.here(account.id):
            game.returned(account.id, now)

    def _verify(self, msg: AsyncAuthRequest, now: float) -> Account:
        """The account a session token (ours, or the provider's JWT) signs in."""
        hub = self.hub
        if self.external is not None:
            name = self.external.verify(msg.sessionToken, msg.name, now)
            account = self.account_named(name)
            if account is None:  # the provider vouches for the name: its account is made here
                row = AccountRow(id=hub.accounts.next_id, name=name, password_hash="", created=now)
                account = hub.accounts.add(row)
                hub.store(row)
                if self.placing is not None:
                    self.placing.named(account.id, name)
            if account.ban is not None and account.ban.active(now):
                raise Banned(account.ban)
            return account
        return self.token_account(msg.sessionToken, now, msg.name)

    def token_account(self, token: str, now: float, name: str | None = None) -> Account:
        """The account a session token of ours signs in, checked against what the hub keeps:
        the account still has the token's name and revocation counter (TokenRevoked: signed
        out everywhere, banned, a new password), and is not banned (Banned: why, until when)."""
        account_id, claimed, revision = self.tokens.read(token, now, name)
        found = self.hub.accounts.get(account_id)
        if found is None or found.name.casefold() != claimed.casefold():
            raise TokenInvalid("no such account")  # deleted (its name is gone with it)
        if found.ban is not None and found.ban.active(now):
            raise Banned(found.ban)
        if revision != found.revision:
            raise TokenRevoked(
                "this session was ended (signed out everywhere, or a new password): sign in again"
            )
        return found

    def end_session(self, session: Session, now: float) -> None:
        """Sign a session out now, its connection being closed (http/account_actions.py): nothing
        it sends before the socket is gone counts as the account's."""
        if session.player_id is not None:
            self._sign_out(session, now)

    def _sign_out(self, session: Session, now: float) -> None:
        hub = self.hub
        hub.lobby.move(session, False)
        player_id = hub.connections.unbind(session)
        if player_id is not None:
            account = hub.accounts.get(player_id)
            if account is not None:
                hub.accounts.seen(account, now)
            if self.placing is not None:
                self.placing.online(player_id, session.conn, False)
            observe.signed_out(hub, player_id)
            social.signed_out(hub, player_id, now)
            quickplay.signed_out(hub, player_id)
            for game in self.games.here(player_id):
                game.hand_over(player_id, now)

    def _whats_new(self, session: Session, msg: WhatsNewPussycatRequest, now: float) -> None:
        hub = self.hub
        assert session.player_id is not None
        if msg.game_id is not None:
            game = self.games.game(msg.game_id)
            if game is None or game.record.seat_of(session.player_id) is None:
                return hub.error(session.conn, "UNKNOWN_GAME", "you are not in a game with this id", msg)
            games = [game]
        elif self.placing is not None and self.placing.gathered(session, msg, now):
            return  # the shards of the player's started games add their reports
        else:
            games = self.games.live(session.player_id)
        hub.send(
            session.conn,
            GameStatusReportRequest(
                status_reports=[game.report(now, session.player_id) for game in games],
                request_id=msg.request_id,
            ),
        )


def _head_of(data: str) -> tuple[str | None, str | None]:
    """The ``type`` and ``request_id`` of a refused frame, where they can be read (S2, S3)."""
    try:
        value = msgspec.json.decode(data)
    except msgspec.DecodeError:
        return None, None
    if not isinstance(value, dict):
        return None, None
    kind, request_id = value.get("type"), value.get("request_id")
    return (
        kind if isinstance(kind, str) else None,
        request_id if isinstance(request_id, str) and 0 < len(request_id) <= 64 else None,
    )
