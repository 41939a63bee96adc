"""Push devices linked to accounts (the Scalable Server text "Logging out", "Push
Notifications"; docs/async-decisions.md S16).

A device (its push system and the opaque token the OS gave it) is linked to an account by an
``AsyncAuthRequest`` that carries it, and stays linked to every account that signed in on it,
signed out or not, until an ``AsyncUnlinkDeviceRequest`` unlinks it: the text's client unlinks
the device from the account it is signed in with before it signs in with another one.

``GCM`` is declared in the messages only so that old clients get a clear refusal: Google no
longer runs it (the text's note), so it is never linked.

The links are held by the hub's ``Devices`` (state/social_state.py), stored as ``DeviceRow`` /
``DeviceGone`` records before anything of the same input is shown, and restored from
``Store.devices()`` after a restart (``restore_devices``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from parlour.core.effects import ConnId
from parlour.protocols.async_ws.state.hub import Hub, Session
from parlour.protocols.async_ws.state.social_state import MAX_DEVICES, REFUSED
from parlour.protocols.async_ws.wire.messages import (
    AsyncDeviceUnlinkedRequest,
    AsyncUnlinkDeviceRequest,
    Device,
)
from parlour.storage.records import DeviceGone, DeviceRow

__all__ = ["HANDLERS", "MAX_DEVICES", "link_device", "linked", "restore_devices", "unlink_device"]


def linked(hub: Hub, player_id: int) -> list[tuple[str, str]]:
    """The (device type, token) of every device linked to an account, oldest link first."""
    return hub.devices.linked(player_id)


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
    hub.store(*hub.devices.link(player_id, device.device_type, device.token, now))
    return True


def unlink_device(hub: Hub, session: Session, msg: AsyncUnlinkDeviceRequest, now: float) -> None:
    """Unlink a device from the signed-in account (only that one: the other accounts that
    signed in on the device keep it until they unlink it themselves). Unlinking a device that
    is not linked is confirmed all the same: the request is idempotent."""
    assert session.player_id is not None
    player_id = session.player_id
    device = msg.device
    hub.devices.unlink(player_id, device.device_type, device.token)
    # Stored even when unknown here: the store is the reference, and deleting nothing is harmless.
    hub.store(DeviceGone(account_id=player_id, device_type=device.device_type, token=device.token))
    hub.send(session.conn, AsyncDeviceUnlinkedRequest(device=device, request_id=msg.request_id))


def restore_devices(hub: Hub, rows: Iterable[DeviceRow]) -> None:
    """The links the store holds, before any connection (S10)."""
    hub.devices.restore(rows)


def reloaded(hub: Hub, stored: Mapping[tuple[int, str, str], DeviceRow | None]) -> None:
    """Hook, after a failed commit: the links it touched as the store holds them."""
    hub.devices.reload(stored)


HANDLERS: Final = {"AsyncUnlinkDeviceRequest": unlink_device}
