"""Push devices and notifications of /async (docs/async-decisions.md S16), without sockets."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from parlour.core.effects import Store
from parlour.protocols.async_ws.game.machine import Game
from parlour.protocols.async_ws.game.model import AsyncGame, SeatInfo
from parlour.protocols.async_ws.players import devices
from parlour.protocols.async_ws.players.devices import (
    MAX_DEVICES,
    link_device,
    linked,
    restore_devices,
    unlink_device,
)
from parlour.protocols.async_ws.state.hub import Hub
from parlour.protocols.async_ws.wire.messages import (
    AsyncDeviceUnlinkedRequest,
    AsyncUnlinkDeviceRequest,
    Device,
    GameConfiguration,
)
from parlour.storage.records import DeviceGone, DeviceRow, NotificationRow
from tests.protocols.async_ws.harness import Harness

FCM = Device(device_type="FCM", token="fcm-token-1")
IOS = Device(device_type="IOS", token="ios-token-1")


def hub_of(h: Harness) -> Hub:
    return h.service.hub


def flush(h: Harness) -> None:
    """Run what the direct calls produced, as the service would at the end of an input."""
    h.run(hub_of(h).take(h.now))


def rows(h: Harness, kind: type[Any]) -> list[Any]:
    return [record for record in h.records if isinstance(record, kind)]


def notifications(h: Harness) -> list[tuple[NotificationRow, dict[str, Any]]]:
    found = [(row, msgspec.json.decode(row.payload)) for row in rows(h, NotificationRow)]
    h.records = [record for record in h.records if not isinstance(record, NotificationRow)]
    return found


def absent(h: Harness, name: str, *linked_devices: Device) -> int:
    """An account that is not connected, with these devices linked."""
    account_id, _ = h.account(name)
    for device in linked_devices:
        assert link_device(hub_of(h), account_id, device, h.now)
    flush(h)
    return account_id


def game(h: Harness, *seats: int | None, invited_by: int | None = None, turn_index: int = 3) -> Game:
    """A running game of these accounts (None: a robot); the first one created it. Its
    notifications go through the service's host (hubhost.HubHost), as any game's do."""
    record = AsyncGame(
        id=7,
        config=GameConfiguration(game_type="test", max_players=len(seats)),
        status="RUNNING",
        creator=seats[0] or 0,
        invited_by=invited_by,
        seats=[
            SeatInfo(
                local_id=index,
                player_id=player_id,
                name=hub_of(h).name(player_id) if player_id is not None else f"Robot {index}",
                robot=player_id is None,
            )
            for index, player_id in enumerate(seats, start=1)
        ],
        created=h.now,
        updated=h.now,
        turn_index=turn_index,
        turn=1,
    )
    return Game(record, None, h.service.games.context)


# -- Devices ----------------------------------------------------------------------------------------


def test_gcm_is_refused_with_a_clear_error() -> None:
    h = Harness()
    conn, ann = h.player("ann")
    hub = hub_of(h)
    assert not link_device(hub, ann, Device(device_type="GCM", token="old"), h.now, request_id="a1")
    flush(h)
    error = h.error(conn, "BAD_REQUEST")
    assert error["message"] == "GCM is no longer supported; use FCM"
    assert error["request_type"] == "AsyncAuthRequest" and error["request_id"] == "a1"
    assert linked(hub, ann) == [] and rows(h, DeviceRow) == []


def test_a_device_is_stored_once_and_stays_linked_to_every_account_that_signed_in_on_it() -> None:
    h = Harness()
    _, ann = h.player("ann")
    _, bob = h.player("bob")
    hub = hub_of(h)
    assert link_device(hub, ann, FCM, h.now)
    assert link_device(hub, ann, FCM, h.now + 5)  # signing in again stores nothing new
    assert link_device(hub, bob, FCM, h.now)
    assert link_device(hub, ann, IOS, h.now + 1)
    flush(h)
    assert rows(h, DeviceRow) == [
        DeviceRow(account_id=ann, device_type="FCM", token="fcm-token-1", linked=h.now),
        DeviceRow(account_id=bob, device_type="FCM", token="fcm-token-1", linked=h.now),
        DeviceRow(account_id=ann, device_type="IOS", token="ios-token-1", linked=h.now + 1),
    ]
    assert linked(hub, ann) == [("FCM", "fcm-token-1"), ("IOS", "ios-token-1")]
    assert linked(hub, bob) == [("FCM", "fcm-token-1")]


def test_unlink_answers_with_the_request_id_and_only_unlinks_the_signed_in_account() -> None:
    h = Harness()
    conn, ann = h.player("ann")
    bob = absent(h, "bob", FCM)
    hub = hub_of(h)
    assert link_device(hub, ann, FCM, h.now)
    flush(h)
    request = AsyncUnlinkDeviceRequest(device=FCM, request_id="u1")
    unlink_device(hub, hub.sessions[conn], request, h.now)
    flush(h)
    assert h.expect(conn, "AsyncDeviceUnlinkedRequest") == {
        "type": "AsyncDeviceUnlinkedRequest",
        "device": {"device_type": "FCM", "token": "fcm-token-1"},
        "request_id": "u1",
    }
    assert rows(h, DeviceGone) == [DeviceGone(account_id=ann, device_type="FCM", token="fcm-token-1")]
    assert linked(hub, ann) == [] and linked(hub, bob) == [("FCM", "fcm-token-1")]
    # Unlinking again is confirmed all the same.
    unlink_device(hub, hub.sessions[conn], request, h.now)
    flush(h)
    h.expect(conn, "AsyncDeviceUnlinkedRequest", request_id="u1")
    assert {"AsyncUnlinkDeviceRequest": unlink_device} == devices.HANDLERS


def test_restored_links_and_the_most_devices_an_account_keeps() -> None:
    h = Harness()
    ann = absent(h, "ann")
    hub = hub_of(h)
    tokens = [Device(device_type="FCM", token=f"t{index}") for index in range(MAX_DEVICES + 1)]
    for index, device in enumerate(tokens):
        link_device(hub, ann, device, h.now + index)
    flush(h)
    # The oldest link made room for the newest.
    assert rows(h, DeviceGone) == [DeviceGone(account_id=ann, device_type="FCM", token="t0")]
    assert linked(hub, ann) == [("FCM", f"t{index}") for index in range(1, MAX_DEVICES + 1)]
    other = Harness()
    restore_devices(
        hub_of(other),
        [
            DeviceRow(account_id=ann, device_type="IOS", token="b", linked=2.0),
            DeviceRow(account_id=ann, device_type="FCM", token="a", linked=1.0),
            DeviceRow(account_id=ann, device_type="GCM", token="old", linked=0.0),
        ],
    )
    assert linked(hub_of(other), ann) == [("FCM", "a"), ("IOS", "b")]
    assert linked(hub, 999) == []


# -- Notifications ----------------------------------------------------------------------------------


def test_one_notification_per_linked_device_with_the_texts_payload() -> None:
    h = Harness()
    ann = absent(h, "ann", FCM, IOS)
    bob = absent(h, "bob")
    assert game(h, ann, bob).outbound.notify_turn(game(h, ann, bob).record.seats[0], h.now) == 2
    flush(h)
    found = notifications(h)
    assert len(found) == 2 and len({row.id for row, _ in found}) == 2
    for (row, payload), device in zip(found, (FCM, IOS), strict=True):
        assert payload == {
            "id": row.id,
            "action-loc-key": "YOUR_TURN_ACTION",
            "loc-key": "YOUR_TURN",
            "loc-args": [],
            "async": {"game_id": 7, "type": "YOUR_TURN", "player_id": ann, "turn_index": 3},
            "device_type": device.device_type,
            "token": device.token,
        }
        assert (row.account_id, row.device_type, row.token) == (ann, device.device_type, device.token)
        assert (row.created, row.attempts, row.next_attempt, row.delivered) == (h.now, 0, h.now, None)
    # Nobody to push to: no device, no row.
    assert game(h, ann, bob).outbound.notify_turn(game(h, ann, bob).record.seats[1], h.now) == 0
    flush(h)
    assert notifications(h) == []


@pytest.mark.parametrize(
    ("moment", "kind", "action", "args"),
    [
        ("turn", "YOUR_TURN", "YOUR_TURN_ACTION", []),
        ("invite turn", "YOUR_TURN_INVITE", "YT_INVITE_ACTION", ["ann"]),
        ("inviter's turn", "YOUR_TURN", "YOUR_TURN_ACTION", []),
        ("robot turn", "YOUR_TURN_ROBOT", "YT_ROBOT_ACTION", []),
        ("invited", "CONFIRM_INVITATION", "INVITATION_ACTION", ["ann"]),
        ("accepted", "INVITEE_ACCEPTED", "INVITEE_ACCEPTED_ACTION", ["bob"]),
        ("declined", "INVITEE_DECLINED", "INVITEE_DECLINED_ACTION", ["bob"]),
        ("over", "GAME_OVER", "GAME_OVER_ACTION", []),
    ],
)
def test_the_type_table(moment: str, kind: str, action: str, args: list[str]) -> None:
    """Each moment's type, action-loc-key and loc-args (S20: the table's keys are the payload's)."""
    h = Harness()
    ann = absent(h, "ann", IOS)  # the inviter
    bob = absent(h, "bob", FCM)  # the invitee
    invitation = game(h, ann, bob, None, invited_by=ann)
    expected = bob
    if moment == "turn":
        game(h, ann, bob).outbound.notify_turn(game(h, ann, bob).record.seats[1], h.now)
    elif moment == "invite turn":
        invitation.outbound.notify_turn(invitation.record.seats[1], h.now)
    elif moment == "inviter's turn":
        invitation.outbound.notify_turn(invitation.record.seats[0], h.now)
        expected = ann
    elif moment == "robot turn":
        invitation.outbound.notify_robot_turn(invitation.record.seats[1], h.now)
    elif moment == "invited":
        invitation.outbound.notify_invited(bob, h.now)
    elif moment in ("accepted", "declined"):
        invitation.outbound.notify_answered(bob, moment == "accepted", h.now)
        expected = ann
    else:
        hub_of(h).online[ann] = 1  # ann is connected: the websocket says it
        invitation.outbound.notify_over(h.now)
    flush(h)
    (row, payload), *others = notifications(h)
    assert others == []
    assert row.account_id == expected
    assert (payload["action-loc-key"], payload["loc-key"], payload["loc-args"]) == (action, kind, args)
    assert payload["async"] == {"game_id": 7, "type": kind, "player_id": expected, "turn_index": 3}


def test_only_players_who_are_not_connected_are_notified() -> None:
    h = Harness()
    conn, ann = h.player("ann")
    bob = absent(h, "bob", FCM)
    carl = absent(h, "carl", IOS)
    hub = hub_of(h)
    assert link_device(hub, ann, FCM, h.now)
    flush(h)
    over = game(h, ann, bob, None, carl)
    assert over.outbound.notify_over(h.now) == 2
    flush(h)
    assert sorted(row.account_id for row, _ in notifications(h)) == [bob, carl]
    # Signed out: notified until it signs in again.
    h.drop(conn)
    assert over.outbound.notify_turn(over.record.seats[0], h.now) == 1
    flush(h)
    assert [row.account_id for row, _ in notifications(h)] == [ann]
    assert over.outbound.notify_robot_turn(over.record.seats[2], h.now) == 0  # a robot has no device
    assert over.outbound.notify_answered(ann, True, h.now) == 0  # the creator itself


def test_notifications_are_stored_before_anything_of_the_same_input_is_shown() -> None:
    h = Harness()
    conn, ann = h.player("ann")
    bob = absent(h, "bob", FCM)
    hub = hub_of(h)
    hub.send(conn, AsyncDeviceUnlinkedRequest(device=FCM))  # anything shown by the same input
    game(h, ann, bob, invited_by=ann).outbound.notify_invited(bob, h.now)
    first, *_ = hub.take(h.now)
    assert isinstance(first, Store)
    assert [type(record) for record in first.records] == [NotificationRow]
