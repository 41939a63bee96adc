"""Push devices linked to accounts (scalable-server-protocol.rst "Logging out", "Push
Notifications"; scalable-server-notes.md S16).

A device (its push system and the opaque token the OS gave it) is linked to an account by an
``AsyncAuthRequest`` that carries it, and stays linked to every account that signed in on it,
signed out or not, until an ``AsyncUnlinkDeviceRequest`` unlinks it: the text's client unlinks
the device from the account it is signed in with before it signs in with another one.

``GCM`` is declared in the messages only so that old clients get a clear refusal: Google no
longer runs it (the text's note), so it is never linked.

The links are kept here, next to the hub rather than in it (a ``WeakKeyDictionary`` keyed by the
hub), stored as ``DeviceRow`` / ``DeviceGone`` records before anything of the same input is shown,
and restored from ``Store.devices()`` after a restart (``restore_devices``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final
from weakref import WeakKeyDictionary

from parlour.core.effects import ConnId
from parlour.protocols.async_ws.hub import Hub, Session
from parlour.protocols.async_ws.messages import AsyncDeviceUnlinkedRequest, AsyncUnlinkDeviceRequest, Device
from parlour.storage.records import DeviceGone, DeviceRow

__all__ = ["HANDLERS", "MAX_DEVICES", "link_device", "linked", "restore_devices", "unlink_device"]

#: The most devices one account keeps: a sign-in with one more unlinks the one linked longest
#: ago, so that a client signing in with ever new tokens cannot grow the table without bound.
MAX_DEVICES: Final = 16
#: Refused device types, with why (the text's note: Google no longer runs GCM).
REFUSED: Final = {"GCM": "GCM is no longer supported; use FCM"}

#: (device type, token) -> when it was linked.
_Links = dict[tuple[str, str], float]


@dataclass(slots=True)
class _Devices:
    by_account: dict[int, _Links] = field(default_factory=dict)


_state: WeakKeyDictionary[Hub, _Devices] = WeakKeyDictionary()


def _devices(hub: Hub) -> _Devices:
    found = _state.get(hub)
    if found is None:
        found = _state[hub] = _Devices()
    return found


def linked(hub: Hub, player_id: int) -> list[tuple[str, str]]:
    """The (device type, token) of every device linked to an account, oldest link first."""
    links = _devices(hub).by_account.get(player_id, {})
    return sorted(links, key=lambda key: links[key])


def link_device(
    hub: Hub,
    player_id: int,
    device: Device,
    now: float,
    *,
    conn: ConnId | None = None,
    request_id: str | None = None,
) -> bool:
    """Link ``device`` to the account that just signed in with it (``AsyncAuthRequest.device``).

    A refused device type (GCM) is answered with an ErrorRequest BAD_REQUEST on ``conn`` (by
    default the account's live connection) and False is returned; the sign-in itself is the
    caller's to keep or refuse. A device linked already is left as it is (nothing stored).
    """
    refusal = REFUSED.get(device.device_type)
    if refusal is not None:
        target = conn if conn is not None else hub.online.get(player_id)
        if target is not None:
            hub.error(target, "BAD_REQUEST", refusal, request_type="AsyncAuthRequest", request_id=request_id)
        return False
    links = _devices(hub).by_account.setdefault(player_id, {})
    key = (device.device_type, device.token)
    if key in links:
        return True
    while len(links) >= MAX_DEVICES:
        oldest = min(links, key=lambda other: links[other])
        del links[oldest]
        hub.store(DeviceGone(account_id=player_id, device_type=oldest[0], token=oldest[1]))
    links[key] = now
    hub.store(DeviceRow(account_id=player_id, device_type=device.device_type, token=device.token, linked=now))
    return True


def unlink_device(hub: Hub, session: Session, msg: AsyncUnlinkDeviceRequest, now: float) -> None:
    """Unlink a device from the signed-in account (only that one: the other accounts that
    signed in on the device keep it until they unlink it themselves). Unlinking a device that
    is not linked is confirmed all the same: the request is idempotent."""
    assert session.player_id is not None
    player_id = session.player_id
    device = msg.device
    devices = _devices(hub)
    links = devices.by_account.get(player_id)
    if links is not None:
        links.pop((device.device_type, device.token), None)
        if not links:
            del devices.by_account[player_id]
    # Stored even when unknown here: the store is the reference, and deleting nothing is harmless.
    hub.store(DeviceGone(account_id=player_id, device_type=device.device_type, token=device.token))
    hub.send(session.conn, AsyncDeviceUnlinkedRequest(device=device, request_id=msg.request_id))


def restore_devices(hub: Hub, rows: Iterable[DeviceRow]) -> None:
    """The links the store holds, before any connection (S10)."""
    by_account = _devices(hub).by_account
    for row in rows:
        if row.device_type in REFUSED:
            continue
        by_account.setdefault(row.account_id, {})[(row.device_type, row.token)] = row.linked


def reloaded(hub: Hub, stored: dict[tuple[int, str, str], DeviceRow | None]) -> None:
    """Hook, after a failed commit: the links it touched as the store holds them."""
    by_account = _devices(hub).by_account
    for (account_id, device_type, token), row in stored.items():
        links = by_account.setdefault(account_id, {})
        if row is None:
            links.pop((device_type, token), None)
        else:
            links[device_type, token] = row.linked
        if not links:
            del by_account[account_id]


HANDLERS: Final = {"AsyncUnlinkDeviceRequest": unlink_device}
