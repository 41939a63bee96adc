"""What admins and players do to accounts of /async, sans I/O: each function changes
the hub's owners through their methods and leaves its sends, closes and records in the hub's
output; the caller takes them (``AsyncService.effects``) and has them stored before anything is
answered. The HTTP routes that call them are ``admin_http.py`` and ``account_http.py``.

Ending an account's sessions is one step everywhere (``end_sessions``): the revocation counter
moves on, so every token issued before is refused (``AsyncService.token_account``, on the hub,
which every node's sign-ins and HTTP routes reach in a cluster), and the account's live
connection is told why and closed, and signed out at once (not when the socket is gone).
"""

from __future__ import annotations

from collections.abc import Callable

from parlour.accounts.moderation import Ban, ban_words
from parlour.protocols.async_ws.game.model import decode_game, encode_game
from parlour.protocols.async_ws.ingame.aborts import CODE_ABORTED, abort_here
from parlour.protocols.async_ws.players.chat import MUTES_KEY
from parlour.protocols.async_ws.service import AsyncService
from parlour.protocols.async_ws.state.known_accounts import Account
from parlour.protocols.async_ws.wire.messages import AsyncConnectionErrorRequest
from parlour.storage import AccountErased, DeviceGone, MetaRow, RelationGone

__all__ = [
    "CODE_ABORTED",
    "POLICY_VIOLATION",
    "abort_game",
    "alias_of",
    "ban",
    "delete_account",
    "end_sessions",
    "mute",
    "seats_renamed",
    "set_password",
    "unban",
]

#: Close code (RFC 6455 7.4.1) for a connection ended by moderation or its own player.
POLICY_VIOLATION = 1008
#: The close reason is at most 123 bytes (RFC 6455 5.5).
CLOSE_REASON_BYTES = 123


def _close_reason(text: str) -> str:
    return text.encode()[:CLOSE_REASON_BYTES].decode(errors="ignore")


def end_sessions(service: AsyncService, account: Account, why: str, now: float) -> None:
    """Revoke every token of the account and end its live connection, telling it ``why``."""
    hub = service.hub
    account.revision += 1
    hub.store(account.row())
    conn = hub.online.get(account.id)
    if conn is None:
        return
    hub.send(conn, AsyncConnectionErrorRequest(reason="EXPIRED_TOKEN", message=why))
    hub.close(conn, POLICY_VIOLATION, _close_reason(why))
    session = hub.sessions.get(conn)
    if session is not None:
        service.end_session(session, now)


def ban(service: AsyncService, account: Account, reason: str, until: float | None, now: float) -> None:
    """Ban the account (``until`` None: for good): its tokens revoked, its connection closed
    with the reason and the end, sign-ins refused so until the ban ends and lifts itself."""
    account.ban = Ban(reason, until)
    end_sessions(service, account, ban_words(account.ban), now)


def unban(service: AsyncService, account: Account) -> None:
    account.ban = None
    service.hub.store(account.row())


def mute(service: AsyncService, account: Account, until: float, now: float) -> None:
    """Mute the account's chat until ``until`` (or lift its mute: ``until`` <= ``now``)."""
    hub = service.hub
    hub.store(MetaRow(MUTES_KEY, hub.chat_log.mute(account.id, until, now)))


def set_password(service: AsyncService, account: Account, password_hash: str, why: str, now: float) -> None:
    """A new password hash ("" for none: a reset forced by an admin, until the player sets
    one with the reset token); every session ends, as the old password's holder may have them."""
    account.password_hash = password_hash
    end_sessions(service, account, why, now)


def alias_of(account_id: int) -> str:
    """The name a deleted account keeps (its finished games keep a seat so named)."""
    return f"deleted-{account_id}"


def delete_account(
    service: AsyncService, account: Account, now: float, stored_games: list[tuple[int, bytes]] | None = None
) -> str:
    """The player's own account, deleted: its personal data removed (password, role, devices,
    buddy and ignore lists both ways, ratings are kept only under the anonymous name) and its
    name freed; the account's id stays, renamed, so that its finished games keep a seat
    named ``deleted-ID``. Its sessions end. Everything goes in one commit: the hub's records,
    and what only the store holds (records.AccountErased: chat lines signed with the name,
    the push outbox, and ``stored_games``, the finished games not in memory with the seat
    renamed, as ``seats_renamed`` made them). The new name."""
    hub = service.hub
    end_sessions(service, account, "this account was deleted", now)
    for device_type, token in hub.devices.linked(account.id):
        hub.devices.unlink(account.id, device_type, token)
        hub.store(DeviceGone(account.id, device_type, token))
    for kind in ("buddy", "ignore"):
        for other in list(hub.relations.listed(kind, account.id)):
            hub.relations.remove(kind, account.id, other)
            hub.store(RelationGone(account.id, other, kind))
        for owner in list(hub.accounts):
            if account.id in hub.relations.listed(kind, owner):
                hub.relations.remove(kind, owner, account.id)
                hub.store(RelationGone(owner, account.id, kind))
    alias = alias_of(account.id)
    hub.accounts.rename(account, alias)
    hub.chat_log.rename_sender(account.id, alias)
    # The games kept in memory, live or finished, name its seat so from now on (and are stored
    # so; in a cluster the owners of the shards rename their live games when they hear the new
    # name, below); the finished ones only in the store are in ``stored_games``.
    service.games.rename_seats(account.id, alias, now)
    account.password_hash = ""
    account.role = ""
    account.ban = None
    hub.store(account.row(), AccountErased(account.id, alias, stored_games or []))
    if service.placing is not None:
        service.placing.named(account.id, alias)
    return alias


def seats_renamed(account_id: int, alias: str) -> Callable[[bytes], bytes | None]:
    """Rewrites a stored game's document with the account's seats named ``alias`` (None when it
    had no seat there): what the deletion stores of the finished games only the store holds."""

    def rewrite(doc: bytes) -> bytes | None:
        game = decode_game(doc)
        seats = [seat for seat in game.seats if seat.player_id == account_id and seat.name != alias]
        for seat in seats:
            seat.name = alias
        return encode_game(game) if seats else None

    return rewrite


def abort_game(service: AsyncService, game_id: int, reason: str, now: float) -> str | None:
    """Abort a live /async game that runs on this hub (aborts.abort_here); in a cluster, a
    started game runs on its shard's owner, which the admin route asks (``Placing.abort``)."""
    return abort_here(service.hub, service.games, game_id, reason, now)
